"""Partially oriented graphs: CPDAGs, PC/GES output and FCI's PAGs.

An edge between ``u`` and ``v`` has a *mark* at each end: ``"tail"``, ``"arrow"`` or
``"circle"`` (FCI's "undetermined"). ``u -> v`` is (tail at u, arrow at v); ``u -- v`` is
two tails; ``u <-> v`` two arrows. This is the general language of discovery output, so
every foreign encoding maps onto it without loss.

For scoring, :meth:`PartialGraph.binary_adjacency` reduces the marks to the 0/1 matrix in
silicolab's convention (``A[u, v] = 1`` where ``u -> v`` is possible): directed and
``o->`` edges give one entry, every other edge kind gives both. That is the SCP
"binarize" rule (an undirected or bidirected edge has both entries non-zero).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from silicolab.core.errors import InputError
from silicolab.core.records import SCHEMA_VERSION
from silicolab.scm.graph import CausalGraph, Edge

Mark = Literal["tail", "arrow", "circle"]
MARKS: tuple[Mark, ...] = ("tail", "arrow", "circle")


class PartialGraph:
    """An immutable graph whose edges carry endpoint marks (see the module docstring).

    >>> p = PartialGraph(["a", "b", "c"], directed=[("a", "b")], undirected=[("b", "c")])
    >>> p.directed_edges(), p.undirected_edges()
    ((('a', 'b'),), (('b', 'c'),))
    """

    __slots__ = ("_edges", "_index")

    def __init__(
        self,
        nodes: Iterable[str],
        *,
        directed: Iterable[Edge] = (),
        undirected: Iterable[Edge] = (),
        bidirected: Iterable[Edge] = (),
        marked: Iterable[tuple[str, str, Mark, Mark]] = (),
    ) -> None:
        names = [str(n) for n in nodes]
        if len(set(names)) != len(names):
            raise InputError(f"nodes {names} repeat a name; list each node once")
        self._index = {name: i for i, name in enumerate(names)}
        self._edges: dict[Edge, tuple[Mark, Mark]] = {}
        specs: list[tuple[str, str, Mark, Mark]] = [
            *((u, v, "tail", "arrow") for u, v in directed),
            *((u, v, "tail", "tail") for u, v in undirected),
            *((u, v, "arrow", "arrow") for u, v in bidirected),
            *marked,
        ]
        for u, v, mark_u, mark_v in specs:
            self._add(str(u), str(v), mark_u, mark_v)

    def _add(self, u: str, v: str, mark_u: Mark, mark_v: Mark) -> None:
        for end in (u, v):
            if end not in self._index:
                raise InputError(
                    f"edge {u} - {v} names unknown variable {end!r}; known variables are "
                    f"{list(self._index)}"
                )
        if u == v:
            raise InputError(f"self-loop on {u!r}: an edge needs two different nodes")
        for mark in (mark_u, mark_v):
            if mark not in MARKS:
                raise InputError(f"unknown edge mark {mark!r}; use one of {MARKS}")
        key, marks = ((u, v), (mark_u, mark_v))
        if self._index[u] > self._index[v]:
            key, marks = (v, u), (mark_v, mark_u)
        if key in self._edges and self._edges[key] != marks:
            raise InputError(
                f"the pair {u}, {v} is given two different edges; give each pair one edge"
            )
        self._edges[key] = marks

    @classmethod
    def from_causal_graph(cls, graph: CausalGraph) -> PartialGraph:
        """The same DAG with every edge directed."""
        return cls(graph.nodes, directed=graph.edges)

    @property
    def nodes(self) -> tuple[str, ...]:
        """Node names in declaration order."""
        return tuple(self._index)

    def marks(self, u: str, v: str) -> tuple[Mark, Mark] | None:
        """``(mark at u, mark at v)`` of the edge between ``u`` and ``v``, or ``None``."""
        if (u, v) in self._edges:
            return self._edges[(u, v)]
        if (v, u) in self._edges:
            mark_v, mark_u = self._edges[(v, u)]
            return mark_u, mark_v
        return None

    def edges(self) -> tuple[tuple[str, str, Mark, Mark], ...]:
        """Every edge as ``(u, v, mark_at_u, mark_at_v)`` with ``u`` before ``v``."""
        return tuple((u, v, a, b) for (u, v), (a, b) in sorted(self._edges.items(), key=self._key))

    def _key(self, item: tuple[Edge, Any]) -> tuple[int, int]:
        (u, v), _ = item
        return self._index[u], self._index[v]

    def directed_edges(self) -> tuple[Edge, ...]:
        """Edges ``u -> v`` (tail at u, arrow at v) as ``(u, v)``."""
        out = []
        for u, v, a, b in self.edges():
            if (a, b) == ("tail", "arrow"):
                out.append((u, v))
            elif (a, b) == ("arrow", "tail"):
                out.append((v, u))
        return tuple(out)

    def undirected_edges(self) -> tuple[Edge, ...]:
        """Edges ``u -- v`` (two tails)."""
        return tuple((u, v) for u, v, a, b in self.edges() if a == b == "tail")

    def bidirected_edges(self) -> tuple[Edge, ...]:
        """Edges ``u <-> v`` (two arrows)."""
        return tuple((u, v) for u, v, a, b in self.edges() if a == b == "arrow")

    def adjacent(self, u: str, v: str) -> bool:
        """Whether ``u`` and ``v`` share an edge of any kind."""
        return self.marks(u, v) is not None

    def is_fully_directed(self) -> bool:
        """Whether every edge is ``u -> v`` (then :meth:`to_causal_graph` works)."""
        return len(self.directed_edges()) == len(self._edges)

    def to_causal_graph(self) -> CausalGraph:
        """The DAG, if every edge is directed and there is no cycle."""
        if not self.is_fully_directed():
            raise InputError(
                "the graph has undirected, bidirected or circle-marked edges; orient them all "
                "before converting to a CausalGraph (or score the PartialGraph directly)"
            )
        return CausalGraph(self.nodes, self.directed_edges())

    def simplest(self) -> CausalGraph | PartialGraph:
        """A :class:`CausalGraph` when every edge is directed and there is no cycle, else
        this graph unchanged (an estimate, e.g. an LLM's matrix, may be cyclic and must
        stay scorable)."""
        if not self.is_fully_directed():
            return self
        try:
            return self.to_causal_graph()
        except InputError:
            return self

    def binary_adjacency(self, nodes: Sequence[str] | None = None) -> np.ndarray:
        """0/1 matrix in silicolab's convention: ``A[u, v] = 1`` unless the edge has an
        arrowhead at ``u`` and none at ``v`` (that is, unless it points into ``u``)."""
        order = list(nodes) if nodes is not None else list(self._index)
        if sorted(order) != sorted(self._index):
            raise InputError(f"node order {order} must list exactly the nodes {list(self._index)}")
        position = {name: i for i, name in enumerate(order)}
        matrix = np.zeros((len(order), len(order)), dtype=int)
        for u, v, mark_u, mark_v in self.edges():
            i, j = position[u], position[v]
            matrix[i, j] = int(not (mark_u == "arrow" and mark_v != "arrow"))
            matrix[j, i] = int(not (mark_v == "arrow" and mark_u != "arrow"))
        return matrix

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PartialGraph):
            return NotImplemented
        if set(self._index) != set(other._index) or len(self._edges) != len(other._edges):
            return False
        return all(other.marks(u, v) == (a, b) for u, v, a, b in self.edges())

    def __hash__(self) -> int:
        canon = frozenset(frozenset({(u, a), (v, b)}) for u, v, a, b in self.edges())
        return hash((frozenset(self._index), canon))

    def __repr__(self) -> str:
        symbol = {
            ("tail", "arrow"): "->",
            ("arrow", "tail"): "<-",
            ("tail", "tail"): "--",
            ("arrow", "arrow"): "<->",
        }
        parts = [f"{u}{symbol.get((a, b), f' {a[0]}-{b[0]} ')}{v}" for u, v, a, b in self.edges()]
        return f"PartialGraph(nodes={list(self._index)}, edges=[{', '.join(parts)}])"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with ``schema_version``, ``nodes`` and marked ``edges``."""
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": "partial_graph",
            "nodes": list(self._index),
            "edges": [{"u": u, "v": v, "mark_u": a, "mark_v": b} for u, v, a, b in self.edges()],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PartialGraph:
        """Rebuild a graph written by :meth:`to_dict`."""
        if data.get("kind") != "partial_graph":
            raise InputError(
                "not a partial-graph record: expected kind 'partial_graph' as written by "
                "PartialGraph.to_dict()"
            )
        return cls(
            data["nodes"],
            marked=[(e["u"], e["v"], e["mark_u"], e["mark_v"]) for e in data["edges"]],
        )
