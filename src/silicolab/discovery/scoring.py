"""Score a discovered graph against a ground truth with the SCP/MAC definitions.

Everything here is a thin assembly of :mod:`silicolab.scm.metrics` (SCP's SHD, where a
reversal costs 1 and an undirected edge costs 0 on a true edge and 2 elsewhere; NHD =
binarized Hamming distance / n², diagonal included), so a score printed here is the same
number the paper tables print: ``nhd_truncated`` is truncated to 3 decimals as MAC prints
it, never rounded.
"""

from __future__ import annotations

from typing import Any

from silicolab.core.errors import InputError
from silicolab.discovery.result import GraphResult
from silicolab.scm.graph import CausalGraph
from silicolab.scm.metrics import binary_edges, edge_scores, hamming, nhd, shd, truncate
from silicolab.scm.partial_graph import PartialGraph


def score(
    result_or_graph: GraphResult | CausalGraph | PartialGraph, truth: CausalGraph
) -> dict[str, Any]:
    """``shd``, ``nhd``, ``nhd_truncated`` (3 dp, truncated), ``hamming``, ``precision``,
    ``recall``, ``f1`` (of the binarized directed entries), ``n_edges_true`` and
    ``n_edges_pred`` (binarized entries: an undirected edge counts twice, as in SCP)."""
    graph = getattr(result_or_graph, "graph", result_or_graph)
    if not isinstance(graph, CausalGraph | PartialGraph):
        raise InputError(
            f"cannot score {type(result_or_graph).__name__}; give a GraphResult, a "
            "CausalGraph or a PartialGraph"
        )
    if not isinstance(truth, CausalGraph):
        raise InputError(f"truth must be a CausalGraph, got {type(truth).__name__}")
    if set(graph.nodes) != set(truth.nodes):
        raise InputError(
            f"the estimate has variables {sorted(graph.nodes)} but the truth has "
            f"{sorted(truth.nodes)}; score graphs over the same variables"
        )
    distance = nhd(truth, graph, n_nodes=len(truth.nodes))
    edges = edge_scores(truth, graph)
    return {
        "shd": shd(truth, graph),
        "nhd": distance,
        "nhd_truncated": truncate(distance, 3),
        "hamming": hamming(truth, graph),
        "precision": edges.precision,
        "recall": edges.recall,
        "f1": edges.f1,
        "n_edges_true": len(binary_edges(truth)),
        "n_edges_pred": len(binary_edges(graph)),
    }
