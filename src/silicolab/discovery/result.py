"""The one result type every discovery method returns, statistical or LLM-based.

A :class:`GraphResult` holds the estimated graph in silicolab's convention (``A[i, j]
= 1`` means ``i -> j``) over the data's column names, whatever the backend's native
encoding was; the native output stays available in ``raw`` for debugging but is never
serialized, because it may be a large or unpicklable backend object.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from silicolab.core.errors import InputError
from silicolab.core.records import SCHEMA_VERSION
from silicolab.scm.graph import CausalGraph
from silicolab.scm.partial_graph import PartialGraph


@dataclass(frozen=True)
class GraphResult:
    """What a discovery method found, how long it took and what it cost.

    ``graph`` is a :class:`CausalGraph` when every edge is oriented and acyclic, else a
    :class:`PartialGraph` (CPDAGs from PC/GES, PAGs from FCI). ``usage`` is the LLM ledger
    summary (``{}`` for statistical methods); ``params`` are the effective parameters,
    defaults included, so a record says exactly what was run; ``notes`` explain anything a
    reader could misread (a post-filter, a quirk flag, a dropped context node).
    """

    method: str
    graph: CausalGraph | PartialGraph
    raw: Any = None
    runtime_s: float = 0.0
    usage: dict[str, Any] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @classmethod
    def since(
        cls,
        started: float,
        method: str,
        graph: CausalGraph | PartialGraph,
        *,
        raw: Any = None,
        usage: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        notes: Sequence[str] = (),
    ) -> GraphResult:
        """The result of ``method``, which began at ``started`` (a ``time.perf_counter()``
        reading) and ends now: its runtime is the time since."""
        return cls(
            method=method,
            graph=graph,
            raw=raw,
            runtime_s=time.perf_counter() - started,
            usage=dict(usage or {}),
            params=dict(params or {}),
            notes=tuple(notes),
        )

    @property
    def nodes(self) -> tuple[str, ...]:
        """The variable names, in the data's column order."""
        return tuple(self.graph.nodes)

    def adjacency(self, nodes: Sequence[str] | None = None) -> np.ndarray:
        """Binary matrix with ``A[i, j] = 1`` iff ``i -> j`` is possible: a directed edge
        sets one entry, an undirected or bidirected edge sets both (SCP's binarization)."""
        if isinstance(self.graph, CausalGraph):
            return self.graph.to_adjacency(nodes, convention="cause_row")
        return self.graph.binary_adjacency(nodes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record (``raw`` is left out: it is backend-specific)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "method": self.method,
            "nodes": list(self.nodes),
            "edges": graph_edges(self.graph),
            "runtime_s": self.runtime_s,
            "usage": dict(self.usage),
            "params": dict(self.params),
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GraphResult:
        """Rebuild a result written by :meth:`to_dict` (``raw`` is ``None``)."""
        try:
            nodes, edges = data["nodes"], data["edges"]
            marked = [(e["u"], e["v"], e["mark_u"], e["mark_v"]) for e in edges.get("marked", ())]
            partial = PartialGraph(
                nodes,
                directed=[tuple(e) for e in edges.get("directed", ())],
                undirected=[tuple(e) for e in edges.get("undirected", ())],
                bidirected=[tuple(e) for e in edges.get("bidirected", ())],
                marked=marked,
            )
            return cls(
                method=data["method"],
                graph=partial.simplest(),
                runtime_s=float(data.get("runtime_s", 0.0)),
                usage=dict(data.get("usage", {})),
                params=dict(data.get("params", {})),
                notes=tuple(data.get("notes", ())),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise InputError(
                f"not a discovery result record ({exc!r}); pass what GraphResult.to_dict() wrote"
            ) from exc


def graph_edges(graph: CausalGraph | PartialGraph) -> dict[str, list[Any]]:
    """Edges grouped by kind: ``directed`` ``[cause, effect]`` pairs, ``undirected`` and
    ``bidirected`` pairs, and ``marked`` edges carrying FCI's circle marks."""
    if isinstance(graph, CausalGraph):
        return {"directed": [list(e) for e in graph.edges], "undirected": [], "bidirected": []}
    out: dict[str, list[Any]] = {
        "directed": [list(e) for e in graph.directed_edges()],
        "undirected": [list(e) for e in graph.undirected_edges()],
        "bidirected": [list(e) for e in graph.bidirected_edges()],
    }
    marked = [
        {"u": u, "v": v, "mark_u": a, "mark_v": b}
        for u, v, a, b in graph.edges()
        if "circle" in (a, b)
    ]
    if marked:
        out["marked"] = marked
    return out


#: Deprecated alias, kept for one release: this class was called ``DiscoveryResult``
#: until the Python front door took that name for a whole run's result
#: (:class:`silicolab.api.discovery.DiscoveryResult`, ``sl.DiscoveryResult``). Use
#: :class:`GraphResult`.
DiscoveryResult = GraphResult
