"""Graph-recovery metrics: SHD, NHD, edge / target-parent / root / coefficient scores.

Definitions follow the specs exactly:

* :func:`shd` is SCP's A + D + R on binarized graphs (a reversal counts once; an
  estimated undirected or two-way edge costs 0 on a true edge and 2 on a non-edge). On two
  DAGs it equals CausaLab's "missing + extra + reversed".
* :func:`shd_cpdag` compares equivalence classes: both graphs are reduced to CPDAGs and each
  node pair whose edge differs (absent, either direction, undirected) counts 1.
* :func:`nhd` is the number of differing entries of the binarized n x n matrices divided by
  n² (diagonal in the denominator), as in MAC/Kıcıman et al.; :func:`truncate` reproduces
  the papers' 3-decimal truncation.
* Precision/recall/F1 use CausaLab's empty-set conventions (precision of an empty
  prediction is 1 if the truth is empty too, else 0; the same for recall).

Graph arguments may be a :class:`CausalGraph`, a :class:`PartialGraph` or an iterable of
``(cause, effect)`` pairs (or ``{"from", "to"}`` dicts), so LLM hypotheses can be scored
without first being made into valid DAGs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import networkx as nx

from silicolab.core.errors import InputError
from silicolab.core.records import SCHEMA_VERSION
from silicolab.scm.graph import CausalGraph, Edge, as_edge
from silicolab.scm.partial_graph import PartialGraph

GraphLike = CausalGraph | PartialGraph | Iterable[Any]
IGNORED_COEFFICIENT_KEYS = frozenset({"base", "intercept", "const", "1"})


@dataclass(frozen=True)
class Scores:
    """Precision, recall and F1 with the counts they came from."""

    precision: float
    recall: float
    f1: float
    n_correct: int
    n_predicted: int
    n_true: int

    def to_dict(self) -> dict[str, float | int]:
        return {"schema_version": SCHEMA_VERSION, **asdict(self)}


@dataclass(frozen=True)
class SHD:
    """Structural Hamming distance and its parts."""

    missing: int
    extra: int
    reversed: int

    @property
    def total(self) -> int:
        return self.missing + self.extra + self.reversed


def scores(n_correct: int, n_predicted: int, n_true: int) -> Scores:
    """Precision, recall and F1 from counts, with the empty-set conventions above."""
    precision = n_correct / n_predicted if n_predicted else float(n_true == 0)
    recall = n_correct / n_true if n_true else float(n_predicted == 0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Scores(precision, recall, f1, n_correct, n_predicted, n_true)


def binary_edges(graph: GraphLike) -> set[Edge]:
    """The ordered pairs ``(u, v)`` whose binarized adjacency entry is 1."""
    if isinstance(graph, CausalGraph):
        return set(graph.edges)
    if isinstance(graph, PartialGraph):
        nodes = graph.nodes
        matrix = graph.binary_adjacency()
        return {(nodes[i], nodes[j]) for i, j in zip(*matrix.nonzero(), strict=True)}
    if isinstance(graph, str | bytes) or not isinstance(graph, Iterable):
        raise InputError(
            f"cannot score {graph!r}: give a CausalGraph, a PartialGraph or a list of "
            "(cause, effect) pairs"
        )
    return {as_edge(e) for e in graph}


def _nodes(graph: GraphLike, edges: set[Edge]) -> set[str]:
    if isinstance(graph, CausalGraph | PartialGraph):
        return set(graph.nodes)
    return {n for e in edges for n in e}


def shd_parts(true: GraphLike, estimate: GraphLike) -> SHD:
    """Missing, extra and reversed edge counts of ``estimate`` against ``true``."""
    truth, est = binary_edges(true), binary_edges(estimate)
    extra = sum((a, b) not in truth and (b, a) not in truth for a, b in est)
    missing = sum((a, b) not in est and (b, a) not in est for a, b in truth)
    reversed_ = sum((b, a) not in truth and (a, b) not in est and (b, a) in est for a, b in truth)
    return SHD(missing=missing, extra=extra, reversed=reversed_)


def shd(true: GraphLike, estimate: GraphLike) -> int:
    """Structural Hamming distance (SCP / CausaLab): missing + extra + reversed."""
    return shd_parts(true, estimate).total


def _essential(graph: CausalGraph | PartialGraph) -> PartialGraph:
    if isinstance(graph, CausalGraph):
        return graph.cpdag()
    if isinstance(graph, PartialGraph):
        return graph
    raise InputError("shd_cpdag needs CausalGraph or PartialGraph arguments (not edge lists)")


def shd_cpdag(true: CausalGraph | PartialGraph, estimate: CausalGraph | PartialGraph) -> int:
    """SHD between equivalence classes: DAGs are replaced by their CPDAGs, then every node
    pair whose edge differs in presence, direction or marks counts 1."""
    a, b = _essential(true), _essential(estimate)
    if set(a.nodes) != set(b.nodes):
        raise InputError(
            f"the graphs have different nodes ({sorted(a.nodes)} vs {sorted(b.nodes)}); "
            "compare graphs over the same variables"
        )
    pairs = {frozenset((u, v)) for g in (a, b) for u, v, _, _ in g.edges()}
    return sum(a.marks(*sorted(p)) != b.marks(*sorted(p)) for p in pairs)


def hamming(true: GraphLike, estimate: GraphLike) -> int:
    """Number of differing entries of the binarized adjacency matrices."""
    return len(binary_edges(true) ^ binary_edges(estimate))


def nhd(true: GraphLike, estimate: GraphLike, *, n_nodes: int | None = None) -> float:
    """Normalised Hamming distance: :func:`hamming` / n² (n = number of variables; pass
    ``n_nodes`` when both arguments are plain edge lists)."""
    truth, est = binary_edges(true), binary_edges(estimate)
    n = n_nodes if n_nodes is not None else len(_nodes(true, truth) | _nodes(estimate, est))
    if n <= 0:
        raise InputError("nhd needs at least one variable; pass n_nodes for empty edge lists")
    return len(truth ^ est) / n**2


def truncate(value: float, decimals: int = 3) -> float:
    """Truncate (not round) to ``decimals`` places, as the MAC tables print NHD."""
    factor = 10**decimals
    return math.floor(value * factor + 1e-9) / factor


def edge_scores(true: GraphLike, predicted: GraphLike) -> Scores:
    """Precision / recall / F1 of the predicted directed edges."""
    truth, pred = binary_edges(true), binary_edges(predicted)
    return scores(len(truth & pred), len(pred), len(truth))


def parent_scores(true: GraphLike, predicted: GraphLike, target: str) -> Scores:
    """Edge scores restricted to edges into ``target`` (CausaLab's target-parent F1)."""
    truth = {e for e in binary_edges(true) if e[1] == target}
    pred = {e for e in binary_edges(predicted) if e[1] == target}
    return scores(len(truth & pred), len(pred), len(truth))


def ancestor_roots(graph: GraphLike, target: str | None = None) -> set[str]:
    """Parentless nodes among the ancestors of ``target`` (all parentless nodes if
    ``target`` is None). Works on cyclic edge lists too."""
    edges = binary_edges(graph)
    digraph = nx.DiGraph()
    digraph.add_nodes_from(_nodes(graph, edges))
    digraph.add_edges_from(edges)
    if target is None:
        candidates = set(digraph.nodes)
    elif target in digraph:
        candidates = nx.ancestors(digraph, target)
    else:
        candidates = set()
    return {n for n in candidates if digraph.in_degree(n) == 0}


def root_scores(
    true: GraphLike, predicted: GraphLike | Iterable[str], target: str | None = None
) -> Scores:
    """Root-node scores: the true roots are the parentless ancestors of ``target``.

    ``predicted`` is either a list of root names (what an agent listed) or a graph, from
    which the same ancestor-root extraction is made.
    """
    truth = ancestor_roots(true, target)
    if isinstance(predicted, CausalGraph | PartialGraph):
        pred = ancestor_roots(predicted, target)
    else:
        items = list(predicted)
        if items and all(isinstance(i, str) for i in items):
            pred = set(items)
        else:
            pred = ancestor_roots(items, target)
    return scores(len(truth & pred), len(pred), len(truth))


def _strip_prefix(key: str) -> str:
    for prefix in ("coeff_", "c_"):
        if key.startswith(prefix):
            return key[len(prefix) :]
    return key


def coefficient_scores(
    true: Mapping[str, float],
    predicted: Mapping[str, Any],
    *,
    tol: float = 1e-6,
) -> Scores:
    """Scores of predicted coefficients against the true ones (CausaLab's weight F1).

    ``true`` maps each true parent to its coefficient (e.g.
    ``{p: w for (p, c), w in scm.coefficients().items() if c == target}``). ``predicted``
    maps names to values; ``c_``/``coeff_`` prefixes are stripped and intercept keys
    (``base``, ``intercept``, ``const``) ignored. A prediction is correct when it is a number
    within ``tol`` of the true coefficient; every remaining key counts as a prediction.
    """
    if tol < 0:
        raise InputError(f"tol must be >= 0; got {tol}")
    named = {
        _strip_prefix(str(k)): v
        for k, v in predicted.items()
        if str(k).lower() not in IGNORED_COEFFICIENT_KEYS
    }
    correct = 0
    for name, value in named.items():
        if name not in true or isinstance(value, bool):
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue
        correct += abs(number - float(true[name])) <= tol
    return scores(correct, len(named), len(true))
