"""Directed acyclic causal graphs over named variables.

:class:`CausalGraph` wraps a :class:`networkx.DiGraph` and keeps it acyclic: every
constructor checks, and a cycle is reported with its nodes so the user knows which edge to
drop. The graph is immutable; methods that change structure return a new graph.

Adjacency convention (silicolab-wide): ``A[i, j] = 1`` means ``nodes[i] -> nodes[j]``
(row = cause, column = effect), the networkx convention. Foreign conventions are converted
by the functions in :mod:`silicolab.scm.conventions`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import networkx as nx
import numpy as np

from silicolab.core.errors import InputError
from silicolab.core.records import SCHEMA_VERSION
from silicolab.scm.variables import Variable

if TYPE_CHECKING:
    from silicolab.scm.partial_graph import PartialGraph


Edge = tuple[str, str]
AdjacencyConvention = Literal["cause_row", "effect_row"]


def default_names(n: int) -> list[str]:
    """Names ``x0 .. x{n-1}`` used when a matrix comes without node names."""
    return [f"x{i}" for i in range(n)]


def find_cycle(edges: nx.DiGraph | Iterable[Edge]) -> list[str] | None:
    """One directed cycle of a graph (a :class:`networkx.DiGraph` or its ``(cause,
    effect)`` edges) as its nodes in order, the first repeated at the end (``["m", "y",
    "m"]`` for m -> y -> m), or ``None`` when the graph is acyclic. The search is
    deterministic: it follows the order in which the edges were given."""
    graph = edges if isinstance(edges, nx.DiGraph) else nx.DiGraph(list(edges))
    try:
        cycle = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        return None
    return [str(u) for u, _ in cycle] + [str(cycle[0][0])]


def cycle_text(cycle: Sequence[str]) -> str:
    """``m -> y -> m``: a cycle from :func:`find_cycle` as a user reads it."""
    return " -> ".join(cycle)


def check_acyclic(graph: nx.DiGraph) -> None:
    """Raise :class:`InputError` naming one cycle if ``graph`` has any."""
    cycle = find_cycle(graph)
    if cycle is None:
        return
    path = cycle_text(cycle)
    raise InputError(
        f"the graph has a directed cycle {path}; a causal graph must be acyclic, so remove or "
        "reverse one of the edges on that cycle"
    )


def as_edge(edge: Any) -> Edge:
    if isinstance(edge, Mapping):
        try:
            return str(edge["from"]), str(edge["to"])
        except KeyError as exc:
            raise InputError(
                f"edge {edge!r} needs 'from' and 'to' keys, e.g. {{'from': 'x', 'to': 'y'}}"
            ) from exc
    try:
        cause, effect = edge
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"edge {edge!r} is not a (cause, effect) pair; write edges as ('x', 'y') for x -> y"
        ) from exc
    return str(cause), str(effect)


class CausalGraph:
    """An immutable DAG whose nodes are variable names, optionally with :class:`Variable`
    metadata.

    >>> g = CausalGraph.from_edges([("x", "m"), ("m", "y")])
    >>> g.parents("y"), g.topological_order()
    (('m',), ('x', 'm', 'y'))
    """

    __slots__ = ("_graph", "_index", "_variables")

    def __init__(
        self,
        nodes: Iterable[str | Variable] = (),
        edges: Iterable[Any] = (),
    ) -> None:
        variables: dict[str, Variable] = {}
        names: list[str] = []
        for node in nodes:
            variable = node if isinstance(node, Variable) else Variable(name=str(node))
            if variable.name in variables:
                raise InputError(f"node {variable.name!r} is listed twice; list each node once")
            variables[variable.name] = variable
            names.append(variable.name)
        graph = nx.DiGraph()
        graph.add_nodes_from(names)
        for edge in edges:
            cause, effect = as_edge(edge)
            for end in (cause, effect):
                if end not in variables:
                    raise InputError(
                        f"edge {cause} -> {effect} names unknown variable {end!r}; known "
                        f"variables are {names}. Add it to the nodes or fix the spelling"
                    )
            graph.add_edge(cause, effect)
        check_acyclic(graph)
        self._graph = graph
        self._variables = variables
        self._index = {name: i for i, name in enumerate(names)}

    # -- constructors -----------------------------------------------------------------

    @classmethod
    def from_edges(
        cls, edges: Iterable[Any], nodes: Iterable[str | Variable] | None = None
    ) -> CausalGraph:
        """A graph from ``(cause, effect)`` pairs (or ``{"from", "to"}`` dicts).

        Without ``nodes`` the node list is the edge endpoints in order of appearance; with
        ``nodes`` an edge naming anything else is an error (it catches typos).
        """
        edges = [as_edge(e) for e in edges]
        if nodes is None:
            nodes = list(dict.fromkeys(name for edge in edges for name in edge))
        return cls(nodes, edges)

    @classmethod
    def from_adjacency(
        cls,
        matrix: Any,
        nodes: Sequence[str | Variable] | None = None,
        *,
        convention: AdjacencyConvention = "cause_row",
    ) -> CausalGraph:
        """A graph from a square 0/1 (or weighted) matrix; any non-zero entry is an edge.

        ``convention="cause_row"`` (silicolab's): ``A[i, j] != 0`` means ``i -> j``.
        ``convention="effect_row"``: ``A[i, j] != 0`` means ``j -> i`` (row = effect).
        """
        array = square_matrix(matrix)
        if convention == "effect_row":
            array = array.T
        elif convention != "cause_row":
            raise InputError(
                f"unknown adjacency convention {convention!r}; use 'cause_row' (A[i, j] means "
                "i -> j) or 'effect_row' (A[i, j] means j -> i)"
            )
        nodes = list(nodes) if nodes is not None else default_names(array.shape[0])
        if len(nodes) != array.shape[0]:
            raise InputError(
                f"the matrix is {array.shape[0]}x{array.shape[0]} but {len(nodes)} node names "
                "were given; give one name per row"
            )
        names = [n.name if isinstance(n, Variable) else str(n) for n in nodes]
        rows, cols = np.nonzero(array)
        edges = [(names[i], names[j]) for i, j in zip(rows, cols, strict=True)]
        return cls(nodes, edges)

    # -- structure ----------------------------------------------------------------------

    @property
    def nodes(self) -> tuple[str, ...]:
        """Node names in the order they were declared."""
        return tuple(self._index)

    @property
    def edges(self) -> tuple[Edge, ...]:
        """Edges as ``(cause, effect)`` pairs, sorted by the node order."""
        return tuple(
            sorted(self._graph.edges, key=lambda e: (self._index[e[0]], self._index[e[1]]))
        )

    @property
    def variables(self) -> tuple[Variable, ...]:
        """The :class:`Variable` of each node, in node order."""
        return tuple(self._variables[name] for name in self._index)

    def variable(self, name: str) -> Variable:
        """The :class:`Variable` named ``name``."""
        self._require(name)
        return self._variables[name]

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def has_edge(self, cause: str, effect: str) -> bool:
        """Whether ``cause -> effect`` is an edge."""
        return self._graph.has_edge(cause, effect)

    def _require(self, name: str) -> None:
        if name not in self._index:
            raise InputError(
                f"unknown variable {name!r}; the graph has {list(self._index)}. Check the spelling"
            )

    def _ordered(self, names: Iterable[str]) -> tuple[str, ...]:
        return tuple(sorted(names, key=self._index.__getitem__))

    def parents(self, name: str) -> tuple[str, ...]:
        """Direct causes of ``name``, in node order."""
        self._require(name)
        return self._ordered(self._graph.predecessors(name))

    def children(self, name: str) -> tuple[str, ...]:
        """Direct effects of ``name``, in node order."""
        self._require(name)
        return self._ordered(self._graph.successors(name))

    def ancestors(self, name: str) -> tuple[str, ...]:
        """All nodes with a directed path into ``name`` (excluding ``name``)."""
        self._require(name)
        return self._ordered(nx.ancestors(self._graph, name))

    def descendants(self, name: str) -> tuple[str, ...]:
        """All nodes reachable from ``name`` (excluding ``name``)."""
        self._require(name)
        return self._ordered(nx.descendants(self._graph, name))

    def roots(self) -> tuple[str, ...]:
        """Nodes without parents, in node order."""
        return tuple(n for n in self._index if self._graph.in_degree(n) == 0)

    def topological_order(self) -> tuple[str, ...]:
        """A topological order; ties are broken by declaration order, so it is stable."""
        return tuple(nx.lexicographical_topological_sort(self._graph, key=self._index.__getitem__))

    def skeleton(self) -> frozenset[frozenset[str]]:
        """The undirected edges as a set of two-element sets."""
        return frozenset(frozenset(e) for e in self._graph.edges)

    def v_structures(self) -> frozenset[tuple[str, str, str]]:
        """Colliders ``a -> c <- b`` with ``a`` and ``b`` non-adjacent, as ``(a, c, b)`` with
        ``a`` before ``b`` in node order."""
        found = set()
        for c in self._index:
            pa = self.parents(c)
            for i, a in enumerate(pa):
                for b in pa[i + 1 :]:
                    if not (self._graph.has_edge(a, b) or self._graph.has_edge(b, a)):
                        found.add((a, c, b))
        return frozenset(found)

    def is_d_separated(self, x: Iterable[str], y: Iterable[str], given: Iterable[str] = ()) -> bool:
        """Whether ``x`` and ``y`` are d-separated given ``given``."""
        return nx.is_d_separator(self._graph, set(x), set(y), set(given))

    # -- derived graphs -----------------------------------------------------------------

    def with_edges(self, add: Iterable[Any] = (), remove: Iterable[Any] = ()) -> CausalGraph:
        """A copy with ``add`` edges added and ``remove`` edges removed."""
        dropped = {as_edge(e) for e in remove}
        kept = [e for e in self.edges if e not in dropped]
        return CausalGraph(self.variables, kept + [as_edge(e) for e in add])

    def mutilated(self, targets: Iterable[str]) -> CausalGraph:
        """The graph after a hard intervention on ``targets``: their incoming edges removed."""
        targets = set(targets)
        for name in targets:
            self._require(name)
        return CausalGraph(self.variables, [e for e in self.edges if e[1] not in targets])

    def cpdag(self) -> PartialGraph:
        """The completed partially directed graph of this DAG's Markov equivalence class."""
        from silicolab.scm.equivalence import cpdag

        return cpdag(self)

    def to_networkx(self) -> nx.DiGraph:
        """A fresh copy as a :class:`networkx.DiGraph` (nodes carry ``variable`` attributes)."""
        graph = nx.DiGraph()
        graph.add_nodes_from((n, {"variable": self._variables[n]}) for n in self._index)
        graph.add_edges_from(self.edges)
        return graph

    def to_adjacency(
        self,
        nodes: Sequence[str] | None = None,
        *,
        convention: AdjacencyConvention = "cause_row",
    ) -> np.ndarray:
        """The 0/1 adjacency matrix (int) in ``convention``, rows/columns in ``nodes`` order."""
        order = list(nodes) if nodes is not None else list(self._index)
        if sorted(order) != sorted(self._index):
            raise InputError(
                f"node order {order} must list exactly the graph's nodes {list(self._index)}"
            )
        position = {name: i for i, name in enumerate(order)}
        matrix = np.zeros((len(order), len(order)), dtype=int)
        for cause, effect in self._graph.edges:
            matrix[position[cause], position[effect]] = 1
        if convention == "effect_row":
            return matrix.T.copy()
        if convention != "cause_row":
            raise InputError(
                f"unknown adjacency convention {convention!r}; use 'cause_row' or 'effect_row'"
            )
        return matrix

    # -- comparison and serialization ----------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CausalGraph):
            return NotImplemented
        return set(self._index) == set(other._index) and set(self._graph.edges) == set(
            other._graph.edges
        )

    def __hash__(self) -> int:
        return hash((frozenset(self._index), frozenset(self._graph.edges)))

    def __repr__(self) -> str:
        edges = ", ".join(f"{a}->{b}" for a, b in self.edges)
        return f"CausalGraph(nodes={list(self._index)}, edges=[{edges}])"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``schema_version``, ``variables`` and ``edges``."""
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": "causal_graph",
            "variables": [v.to_dict() for v in self.variables],
            "edges": [{"from": a, "to": b} for a, b in self.edges],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CausalGraph:
        """Rebuild a graph written by :meth:`to_dict`."""
        if data.get("kind", "causal_graph") != "causal_graph" or "edges" not in data:
            raise InputError(
                "not a causal-graph record: expected keys 'variables' and 'edges' as written by "
                "CausalGraph.to_dict()"
            )
        variables = [Variable.from_dict(v) for v in data.get("variables", [])]
        return cls(variables, data["edges"])


def square_matrix(matrix: Any) -> np.ndarray:
    try:
        array = np.asarray(matrix, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"the adjacency matrix must be numeric; got {matrix!r}") from exc
    if array.ndim != 2 or array.shape[0] != array.shape[1]:
        raise InputError(f"an adjacency matrix must be square (n x n); got shape {array.shape}")
    if np.isnan(array).any():
        raise InputError("the adjacency matrix contains NaN; use 0 for 'no edge'")
    return array
