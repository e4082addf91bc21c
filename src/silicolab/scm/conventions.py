"""Converters between silicolab graphs and the foreign matrix conventions we meet.

silicolab: ``A[i, j] = 1`` means ``i -> j`` (row = cause). One pair of functions per
foreign convention, each explicit about its encoding:

=================  ===========================================================================
SCP ground truth   ``M[e, c] != 0`` means ``c -> e`` (row = effect); SCP writes an undirected
                   estimate as ``-1`` at both positions and a bidirected one as ``2``.
causal-learn       ``G.graph[i, j]`` is the endpoint mark *at i* on the edge i - j: ``-1`` tail,
                   ``1`` arrow, ``2`` circle, ``0`` no edge. So ``i -> j`` is
                   ``graph[i, j] = -1, graph[j, i] = 1``. Used by GeneralGraph, PC (``cg.G``),
                   GES (``Record["G"]``) and FCI (PAGs).
LiNGAM             ``B[i, j] != 0`` means ``j -> i`` with coefficient ``B[i, j]`` (row = effect).
Exact Search       ``dag_est[parent, child] = 1``: silicolab's own convention.
=================  ===========================================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from silicolab.core.errors import InputError
from silicolab.scm.graph import CausalGraph, default_names, square_matrix
from silicolab.scm.model import SCM
from silicolab.scm.partial_graph import Mark, PartialGraph

CAUSALLEARN_MARKS: dict[int, Mark] = {-1: "tail", 1: "arrow", 2: "circle"}
CAUSALLEARN_CODES: dict[Mark, int] = {v: k for k, v in CAUSALLEARN_MARKS.items()}


def _names(nodes: Sequence[str] | None, size: int) -> list[str]:
    names = list(nodes) if nodes is not None else default_names(size)
    if len(names) != size:
        raise InputError(f"the matrix has {size} rows but {len(names)} node names were given")
    return names


def _order(graph: CausalGraph | PartialGraph, nodes: Sequence[str] | None) -> list[str]:
    order = list(nodes) if nodes is not None else list(graph.nodes)
    if sorted(order) != sorted(graph.nodes):
        raise InputError(f"node order {order} must list exactly the nodes {list(graph.nodes)}")
    return order


# -- SCP (row = effect) -------------------------------------------------------------------


def from_scp_matrix(matrix: Any, nodes: Sequence[str] | None = None) -> CausalGraph | PartialGraph:
    """Read an SCP matrix (row = effect): a :class:`CausalGraph` when every edge is
    one-way and there is no cycle, else a :class:`PartialGraph` (both entries non-zero:
    ``2`` = bidirected, anything else = undirected)."""
    array = square_matrix(matrix)
    names = _names(nodes, array.shape[0])
    partial_edges = []
    for e in range(len(names)):
        for c in range(len(names)):
            if e == c or array[e, c] == 0:
                continue
            if array[c, e] == 0:
                partial_edges.append((names[c], names[e], "tail", "arrow"))
            elif c < e:
                kind = "arrow" if array[e, c] == 2 and array[c, e] == 2 else "tail"
                partial_edges.append((names[c], names[e], kind, kind))
    return PartialGraph(names, marked=partial_edges).simplest()


def to_scp_matrix(
    graph: CausalGraph | PartialGraph, nodes: Sequence[str] | None = None
) -> np.ndarray:
    """Write ``graph`` as an SCP matrix (row = effect; undirected ``-1``, bidirected ``2``)."""
    order = _order(graph, nodes)
    if isinstance(graph, CausalGraph):
        return graph.to_adjacency(order, convention="effect_row")
    position = {n: i for i, n in enumerate(order)}
    matrix = np.zeros((len(order), len(order)), dtype=int)
    for u, v, a, b in graph.edges():
        i, j = position[u], position[v]
        if (a, b) == ("tail", "arrow"):
            matrix[j, i] = 1
        elif (a, b) == ("arrow", "tail"):
            matrix[i, j] = 1
        elif a == b and a in ("tail", "arrow"):
            matrix[i, j] = matrix[j, i] = -1 if a == "tail" else 2
        else:
            raise InputError(
                f"the edge {u} - {v} has a circle mark, which SCP matrices cannot express; "
                "orient it first or use to_causallearn_matrix"
            )
    return matrix


# -- causal-learn endpoint codes ----------------------------------------------------------


def from_causallearn_graph(
    graph: Any, nodes: Sequence[str] | None = None
) -> CausalGraph | PartialGraph:
    """Read causal-learn output: a ``GeneralGraph`` (``cg.G``, ``Record["G"]``, FCI's ``G``)
    or its ``.graph`` matrix. Node names come from ``nodes``, else from the graph's nodes,
    else ``x0 ..``. Returns a :class:`CausalGraph` when every edge is directed and there is
    no cycle."""
    matrix = getattr(graph, "graph", graph)
    if nodes is None and hasattr(graph, "get_nodes"):
        nodes = [node.get_name() for node in graph.get_nodes()]
    array = square_matrix(matrix)
    names = _names(nodes, array.shape[0])
    edges = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            a, b = int(array[i, j]), int(array[j, i])
            if a == 0 and b == 0:
                continue
            if a not in CAUSALLEARN_MARKS or b not in CAUSALLEARN_MARKS:
                raise InputError(
                    f"entries graph[{i}, {j}] = {array[i, j]} and graph[{j}, {i}] = {array[j, i]} "
                    "are not a causal-learn edge; each edge needs two marks from -1 (tail), "
                    "1 (arrow), 2 (circle)"
                )
            edges.append((names[i], names[j], CAUSALLEARN_MARKS[a], CAUSALLEARN_MARKS[b]))
    return PartialGraph(names, marked=edges).simplest()


def to_causallearn_matrix(
    graph: CausalGraph | PartialGraph, nodes: Sequence[str] | None = None
) -> np.ndarray:
    """Write ``graph`` with causal-learn's endpoint codes (``graph[i, j]`` = mark at i)."""
    order = _order(graph, nodes)
    partial = PartialGraph.from_causal_graph(graph) if isinstance(graph, CausalGraph) else graph
    position = {n: i for i, n in enumerate(order)}
    matrix = np.zeros((len(order), len(order)), dtype=int)
    for u, v, a, b in partial.edges():
        i, j = position[u], position[v]
        matrix[i, j], matrix[j, i] = CAUSALLEARN_CODES[a], CAUSALLEARN_CODES[b]
    return matrix


# -- LiNGAM B matrices (row = effect, weighted) --------------------------------------------


def from_lingam_matrix(
    matrix: Any, nodes: Sequence[str] | None = None, *, threshold: float = 0.0
) -> CausalGraph:
    """Read a LiNGAM ``adjacency_matrix_``: ``|B[i, j]| > threshold`` means ``j -> i``."""
    array = square_matrix(matrix)
    names = _names(nodes, array.shape[0])
    mask = np.abs(array) > threshold
    np.fill_diagonal(mask, False)
    return CausalGraph.from_adjacency(mask.astype(int), names, convention="effect_row")


def to_lingam_matrix(
    graph_or_model: CausalGraph | SCM, nodes: Sequence[str] | None = None
) -> np.ndarray:
    """A LiNGAM-style B matrix (row = effect): the SCM's linear coefficients, or 0/1 for a
    graph."""
    if isinstance(graph_or_model, SCM):
        order = _order(graph_or_model.graph, nodes)
        position = {n: i for i, n in enumerate(order)}
        matrix = np.zeros((len(order), len(order)))
        for (cause, effect), weight in graph_or_model.coefficients().items():
            matrix[position[effect], position[cause]] = weight
        return matrix
    return graph_or_model.to_adjacency(
        _order(graph_or_model, nodes), convention="effect_row"
    ).astype(float)


# -- Exact Search (already silicolab's convention) ------------------------------------------


def from_exact_search_matrix(matrix: Any, nodes: Sequence[str] | None = None) -> CausalGraph:
    """Read causal-learn ``bic_exact_search`` output: ``dag_est[parent, child] = 1``
    (row = cause, like silicolab; SCP misread it as row = effect)."""
    return CausalGraph.from_adjacency(matrix, nodes, convention="cause_row")


def to_exact_search_matrix(graph: CausalGraph, nodes: Sequence[str] | None = None) -> np.ndarray:
    """Write ``graph`` as an Exact Search ``super_graph``/``include_graph`` (row = cause)."""
    return graph.to_adjacency(_order(graph, nodes), convention="cause_row")
