"""Background knowledge (required / forbidden edges, tiers) and its translation into
each backend's own encoding.

One :class:`Knowledge` object is written in names, in silicolab's direction (``(cause,
effect)``); each ``to_*`` method is the single place where it is turned into a foreign
encoding (spec §4.1/§4.3):

* causal-learn PC / FCI / CD-NOD: a ``BackgroundKnowledge`` with ``add_required_by_node``
  / ``add_forbidden_by_node(cause, effect)`` and ``add_node_to_tier``.
* Exact Search: ``super_graph[c, e] = 1`` *allows* ``c -> e``; ``include_graph[c, e] = 1``
  *requires* it (row = cause).
* DirectLiNGAM: ``pk[e, c]`` in {1, 0, -1} is about *paths*, not edges: 1 = ``c`` has a
  directed path to ``e``, 0 = it has none, -1 = unknown (diagonal -1).

Backends with no native knowledge (GES, ICA-LiNGAM) use :func:`apply_knowledge_filter`
on their output instead.

Why a forbidden edge becomes "no path" for LiNGAM: that is the only way to keep LiNGAM from
regressing ``e`` on ``c``, and it is SCP's mapping. Where the required edges already imply
a path ``c ~> e`` the forbidden entry is left at the path value (1), since "no path" would
contradict them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np

from silicolab.core.errors import InputError
from silicolab.core.records import SCHEMA_VERSION
from silicolab.scm.graph import CausalGraph, Edge, as_edge, cycle_text, find_cycle
from silicolab.scm.partial_graph import PartialGraph

if TYPE_CHECKING:
    from causallearn.utils.PCUtils.BackgroundKnowledge import BackgroundKnowledge


def _pairs(items: Iterable[Any], what: str) -> tuple[Edge, ...]:
    pairs = []
    for item in items:
        try:
            cause, effect = as_edge(item)
        except InputError as exc:
            raise InputError(f"{what} edge {item!r}: {exc}") from exc
        if cause == effect:
            raise InputError(f"{what} edge {cause} -> {effect} is a self-loop; give two names")
        pairs.append((cause, effect))
    return tuple(dict.fromkeys(pairs))


@dataclass(frozen=True)
class Knowledge:
    """Constraints on the graph: ``required`` and ``forbidden`` ``(cause, effect)`` edges,
    and ``tiers`` (a variable in a later tier cannot cause one in an earlier tier).

    >>> k = Knowledge(required=[("Weight", "Mpg")], tiers=[("Weight",), ("Mpg",)])
    >>> k.required
    (('Weight', 'Mpg'),)
    """

    required: tuple[Edge, ...] = ()
    forbidden: tuple[Edge, ...] = ()
    tiers: tuple[tuple[str, ...], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "required", _pairs(self.required, "required"))
        object.__setattr__(self, "forbidden", _pairs(self.forbidden, "forbidden"))
        if isinstance(self.tiers, str) or any(isinstance(t, str) for t in self.tiers):
            raise InputError(
                "tiers must be a list of lists of names, e.g. tiers=[['Altitude'], "
                "['Temperature', 'Sunshine']]"
            )
        object.__setattr__(self, "tiers", tuple(tuple(str(n) for n in t) for t in self.tiers))

    # -- constructors ---------------------------------------------------------------------

    @classmethod
    def from_verdicts(cls, verdicts: Mapping[Any, bool | None]) -> Knowledge:
        """From per-edge verdicts, e.g. a debate's: ``{(c, e): True}`` requires ``c -> e``,
        ``False`` forbids it, ``None`` leaves it unconstrained."""
        required, forbidden = [], []
        for edge, verdict in verdicts.items():
            if verdict is None:
                continue
            if not isinstance(verdict, bool | np.bool_):
                raise InputError(
                    f"verdict for {edge!r} is {verdict!r}; use True (required), False "
                    "(forbidden) or None (no constraint)"
                )
            (required if verdict else forbidden).append(edge)
        return cls(required=tuple(required), forbidden=tuple(forbidden))

    @classmethod
    def from_graph(cls, graph: CausalGraph, *, forbid_absent: bool = True) -> Knowledge:
        """Every edge of ``graph`` required and (with ``forbid_absent``) every other
        ordered pair forbidden: the strongest knowledge a known graph gives."""
        edges = set(graph.edges)
        forbidden = (
            [(a, b) for a in graph.nodes for b in graph.nodes if a != b and (a, b) not in edges]
            if forbid_absent
            else []
        )
        return cls(required=tuple(graph.edges), forbidden=tuple(forbidden))

    # -- checks ---------------------------------------------------------------------------

    def __bool__(self) -> bool:
        return bool(self.required or self.forbidden or self.tiers)

    def variables(self) -> set[str]:
        """Every name the knowledge mentions."""
        names = {n for pair in (*self.required, *self.forbidden) for n in pair}
        return names | {n for tier in self.tiers for n in tier}

    def tier_of(self) -> dict[str, int]:
        """Tier index of each tiered variable."""
        return {name: i for i, tier in enumerate(self.tiers) for name in tier}

    def forbidden_pairs(self) -> set[Edge]:
        """Explicitly forbidden edges plus those the tiers forbid (later -> earlier)."""
        tier = self.tier_of()
        implied = {(a, b) for a in tier for b in tier if tier[a] > tier[b]}
        return set(self.forbidden) | implied

    def validate(self, nodes: Sequence[str]) -> None:
        """Raise :class:`InputError` for unknown names, a variable in two tiers, an edge
        both required and forbidden (directly or by tiers), or required edges that form a
        cycle."""
        known = set(nodes)
        unknown = sorted(self.variables() - known)
        if unknown:
            raise InputError(
                f"the knowledge names unknown variable(s) {unknown}; the data has columns "
                f"{list(nodes)}. Fix the spelling or drop those constraints"
            )
        seen: dict[str, int] = {}
        for i, tier in enumerate(self.tiers):
            for name in tier:
                if name in seen and seen[name] != i:
                    raise InputError(
                        f"{name!r} is in tiers {seen[name]} and {i}; put each variable in one tier"
                    )
                seen[name] = i
        clash = sorted(set(self.required) & self.forbidden_pairs())
        if clash:
            cause, effect = clash[0]
            raise InputError(
                f"{cause} -> {effect} is both required and forbidden (by the forbidden list or "
                f"by the tiers); conflicting pairs: {clash}. Keep one of the two"
            )
        cycle = find_cycle(self.required)
        if cycle is None:
            return
        raise InputError(
            f"the required edges form a cycle {cycle_text(cycle)}; a causal graph is "
            "acyclic, so drop one of those required edges"
        )

    # -- backend encodings ----------------------------------------------------------------

    def to_causallearn(
        self, nodes: Sequence[str], *, node_names: Sequence[str] | None = None
    ) -> BackgroundKnowledge:
        """A causal-learn ``BackgroundKnowledge`` for PC, FCI and CD-NOD.

        Nodes are matched by name, so the names must be those the algorithm gives its
        nodes: ``nodes`` when it was called with ``node_names=nodes`` (PC, FCI), or pass the
        algorithm's own names position by position in ``node_names`` (CD-NOD names them
        ``X1 .. Xn``).
        """
        from causallearn.graph.GraphNode import GraphNode
        from causallearn.utils.PCUtils.BackgroundKnowledge import BackgroundKnowledge

        self.validate(nodes)
        names = list(node_names) if node_names is not None else list(nodes)
        if len(names) != len(nodes):
            raise InputError(f"node_names has {len(names)} names for {len(nodes)} variables")
        alias = dict(zip(nodes, names, strict=True))
        bk = BackgroundKnowledge()
        for cause, effect in self.required:
            bk.add_required_by_node(GraphNode(alias[cause]), GraphNode(alias[effect]))
        for cause, effect in self.forbidden:
            bk.add_forbidden_by_node(GraphNode(alias[cause]), GraphNode(alias[effect]))
        for i, tier in enumerate(self.tiers):
            for name in tier:
                bk.add_node_to_tier(GraphNode(alias[name]), i)
        return bk

    def to_exact_search(self, nodes: Sequence[str]) -> tuple[np.ndarray, np.ndarray | None]:
        """``(super_graph, include_graph)`` for ``bic_exact_search`` (row = cause):
        ``super_graph[c, e] = 1`` allows ``c -> e`` (diagonal 0); ``include_graph`` marks
        the required edges, ``None`` when there are none."""
        self.validate(nodes)
        index = {name: i for i, name in enumerate(nodes)}
        n = len(nodes)
        super_graph = np.ones((n, n), dtype=int)
        np.fill_diagonal(super_graph, 0)
        for cause, effect in self.forbidden_pairs():
            super_graph[index[cause], index[effect]] = 0
        if not self.required:
            return super_graph, None
        include = np.zeros((n, n), dtype=int)
        for cause, effect in self.required:
            include[index[cause], index[effect]] = 1
        return super_graph, include

    def to_lingam(self, nodes: Sequence[str]) -> np.ndarray:
        """DirectLiNGAM ``prior_knowledge``: ``pk[e, c] = 1`` where the required edges give
        ``c`` a path to ``e`` (transitively), ``0`` where ``c -> e`` is forbidden and no such
        path exists, ``-1`` elsewhere and on the diagonal (see the module docstring)."""
        self.validate(nodes)
        index = {name: i for i, name in enumerate(nodes)}
        pk = -np.ones((len(nodes), len(nodes)), dtype=int)
        digraph = nx.DiGraph(self.required)
        paths = {(c, e) for c in digraph for e in nx.descendants(digraph, c)}
        for cause, effect in self.forbidden_pairs():
            if (cause, effect) not in paths:
                pk[index[effect], index[cause]] = 0
        for cause, effect in paths:
            pk[index[effect], index[cause]] = 1
        np.fill_diagonal(pk, -1)
        return pk

    # -- records --------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record."""
        return {
            "schema_version": SCHEMA_VERSION,
            "required": [list(e) for e in self.required],
            "forbidden": [list(e) for e in self.forbidden],
            "tiers": [list(t) for t in self.tiers],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Knowledge:
        """Rebuild knowledge written by :meth:`to_dict`."""
        return cls(
            required=tuple(tuple(e) for e in data.get("required", ())),
            forbidden=tuple(tuple(e) for e in data.get("forbidden", ())),
            tiers=tuple(tuple(t) for t in data.get("tiers", ())),
        )


def apply_knowledge_filter(
    graph: CausalGraph | PartialGraph, knowledge: Knowledge
) -> tuple[CausalGraph | PartialGraph, list[str]]:
    """Impose ``knowledge`` on a finished graph, for backends without native knowledge
    (GES, ICA-LiNGAM): forbidden edges are dropped, an undirected edge with one direction
    forbidden (or required) is oriented, and required edges still missing are reported in
    the returned notes — the filter never adds an edge the data did not support."""
    partial = graph if isinstance(graph, PartialGraph) else PartialGraph.from_causal_graph(graph)
    forbidden, required = knowledge.forbidden_pairs(), set(knowledge.required)
    kept, dropped = [], []
    for u, v, mark_u, mark_v in partial.edges():
        fwd = (u, v) in forbidden or (v, u) in required
        back = (v, u) in forbidden or (u, v) in required
        one_way = {(mark_u, mark_v)} <= {("tail", "arrow"), ("arrow", "tail")}
        if one_way:
            cause, effect = (u, v) if mark_v == "arrow" else (v, u)
            if (cause, effect) in forbidden:
                dropped.append(f"{cause} -> {effect}")
            else:
                kept.append((u, v, mark_u, mark_v))
        elif (u, v) in forbidden and (v, u) in forbidden:
            dropped.append(f"{u} - {v}")
        elif fwd and not back:
            kept.append((v, u, "tail", "arrow"))
        elif back and not fwd:
            kept.append((u, v, "tail", "arrow"))
        else:
            kept.append((u, v, mark_u, mark_v))
    filtered = PartialGraph(partial.nodes, marked=kept)
    notes = []
    if dropped:
        notes.append(f"knowledge post-filter dropped forbidden edge(s): {', '.join(dropped)}")
    directed = set(filtered.directed_edges())
    unmet = [f"{c} -> {e}" for c, e in knowledge.required if (c, e) not in directed]
    if unmet:
        notes.append(
            f"required edge(s) not in the estimate (the post-filter adds no edges): "
            f"{', '.join(unmet)}"
        )
    return filtered.simplest(), notes
