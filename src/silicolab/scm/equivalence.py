"""Markov equivalence: CPDAGs, MEC sizes and interventional MEC (IMEC) sizes.

* :func:`cpdag` orients a DAG's v-structures and closes the pattern under Meek's rules
  R1-R3 (complete for patterns without background knowledge, Meek 1995).
* :func:`mec_size` counts the DAGs of an equivalence class without listing them: the class
  size is the product over the CPDAG's chain components of the number of acyclic
  orientations without v-structures, and each component is counted by rooting it at every
  vertex in turn (He, Jia & Yu 2015), memoised on vertex sets. A complete graph on k nodes
  therefore costs about k * 2**k steps instead of k!.
* :func:`imec_size` lists the class members (same recursion) and keeps those that are
  interventionally equivalent to the true DAG for the target family: for every target set I
  (the empty set included, because observational data exist) the mutilated graphs have the
  same skeleton and the same v-structures (Hauser & Bühlmann 2012).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import lru_cache
from itertools import product

import networkx as nx

from silicolab.core.errors import InputError
from silicolab.scm.graph import CausalGraph, Edge
from silicolab.scm.partial_graph import PartialGraph

Neighbours = dict[str, frozenset[str]]


def _neighbours(nodes: Iterable[str], edges: Iterable[Edge]) -> Neighbours:
    table: dict[str, set[str]] = {n: set() for n in nodes}
    for a, b in edges:
        table[a].add(b)
        table[b].add(a)
    return {n: frozenset(s) for n, s in table.items()}


def _meek_closure(
    adjacency: Neighbours, directed: set[Edge], undirected: set[frozenset[str]]
) -> None:
    """Orient undirected edges in place with Meek's rules R1-R3 until nothing changes."""
    parents: dict[str, set[str]] = {n: set() for n in adjacency}
    children: dict[str, set[str]] = {n: set() for n in adjacency}
    for a, b in directed:
        parents[b].add(a)
        children[a].add(b)

    def undirected_nbrs(x: str) -> set[str]:
        return {c for c in adjacency[x] if frozenset((x, c)) in undirected}

    def must_orient(x: str, y: str) -> bool:
        # R1: c -> x - y with c, y non-adjacent.
        if any(c != y and c not in adjacency[y] for c in parents[x]):
            return True
        # R2: x -> c -> y.
        if children[x] & parents[y]:
            return True
        # R3: x - c -> y and x - d -> y with c, d non-adjacent.
        candidates = sorted(undirected_nbrs(x) & parents[y])
        return any(
            d not in adjacency[c] for i, c in enumerate(candidates) for d in candidates[i + 1 :]
        )

    changed = True
    while changed:
        changed = False
        for edge in sorted(undirected, key=sorted):
            a, b = sorted(edge)
            for x, y in ((a, b), (b, a)):
                if must_orient(x, y):
                    undirected.discard(edge)
                    directed.add((x, y))
                    parents[y].add(x)
                    children[x].add(y)
                    changed = True
                    break


def cpdag(graph: CausalGraph) -> PartialGraph:
    """The CPDAG (essential graph) of ``graph``: compelled edges directed, others undirected."""
    directed: set[Edge] = set()
    for a, c, b in graph.v_structures():
        directed.update({(a, c), (b, c)})
    undirected = {frozenset(e) for e in graph.edges if e not in directed}
    _meek_closure(_neighbours(graph.nodes, graph.edges), directed, undirected)
    return PartialGraph(
        graph.nodes, directed=directed, undirected=[tuple(sorted(e)) for e in undirected]
    )


def _components(nodes: Iterable[str], undirected: Iterable[frozenset[str]]) -> list[frozenset[str]]:
    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(tuple(e) for e in undirected)
    return [frozenset(c) for c in nx.connected_components(graph)]


class _ChordalCounter:
    """Counts and lists acyclic orientations without v-structures of chordal components."""

    def __init__(self, adjacency: Neighbours) -> None:
        self._adjacency = adjacency
        self.count = lru_cache(maxsize=None)(self._count)
        self.orientations = lru_cache(maxsize=None)(self._orientations)

    def _rooted(self, nodes: frozenset[str], root: str) -> tuple[set[Edge], list[frozenset[str]]]:
        local = {n: self._adjacency[n] & nodes for n in nodes}
        directed = {(root, w) for w in local[root]}
        undirected = {
            frozenset((a, b)) for a in nodes for b in local[a] if a < b and root not in (a, b)
        }
        _meek_closure(local, directed, undirected)
        return directed, [c for c in _components(nodes, undirected) if len(c) > 1]

    def _is_complete(self, nodes: frozenset[str]) -> bool:
        return all(len(self._adjacency[n] & nodes) == len(nodes) - 1 for n in nodes)

    def _count(self, nodes: frozenset[str]) -> int:
        if self._is_complete(nodes):
            return math.factorial(len(nodes))
        total = 0
        for root in sorted(nodes):
            _, parts = self._rooted(nodes, root)
            total += math.prod(self.count(part) for part in parts)
        return total

    def _orientations(self, nodes: frozenset[str]) -> tuple[frozenset[Edge], ...]:
        found: list[frozenset[Edge]] = []
        for root in sorted(nodes):
            directed, parts = self._rooted(nodes, root)
            fixed = frozenset(directed)
            for choice in product(*(self.orientations(part) for part in parts)):
                found.append(fixed.union(*choice))
        return tuple(found)


def _chain_components(essential: PartialGraph) -> list[frozenset[str]]:
    undirected = [frozenset(e) for e in essential.undirected_edges()]
    return [c for c in _components(essential.nodes, undirected) if len(c) > 1]


def mec_size(graph: CausalGraph) -> int:
    """Number of DAGs Markov equivalent to ``graph`` (1 when every edge is compelled).

    Chain and fork of 3 nodes give 3, a collider 1, a complete DAG on k nodes k!.
    """
    essential = cpdag(graph)
    counter = _ChordalCounter(_neighbours(graph.nodes, graph.edges))
    return math.prod(counter.count(c) for c in _chain_components(essential))


def markov_equivalent_dags(graph: CausalGraph) -> list[CausalGraph]:
    """Every DAG in the Markov equivalence class of ``graph`` (use for small classes)."""
    return [CausalGraph(graph.nodes, edges) for edges in _member_edge_sets(graph)]


def _member_edge_sets(graph: CausalGraph) -> list[frozenset[Edge]]:
    essential = cpdag(graph)
    counter = _ChordalCounter(_neighbours(graph.nodes, graph.edges))
    fixed = frozenset(essential.directed_edges())
    choices = [counter.orientations(c) for c in _chain_components(essential)]
    return [fixed.union(*combo) for combo in product(*choices)]


def _signature(edges: frozenset[Edge], targets: frozenset[str]) -> tuple[frozenset, frozenset]:
    kept = [e for e in edges if e[1] not in targets]
    skeleton = frozenset(frozenset(e) for e in kept)
    parents: dict[str, list[str]] = {}
    for a, b in kept:
        parents.setdefault(b, []).append(a)
    colliders = set()
    for child, pa in parents.items():
        for i, a in enumerate(pa):
            for b in pa[i + 1 :]:
                if frozenset((a, b)) not in skeleton:
                    colliders.add((frozenset((a, b)), child))
    return skeleton, frozenset(colliders)


def target_family(
    graph: CausalGraph, targets: Iterable[str | Iterable[str]], *, observational: bool = True
) -> list[frozenset[str]]:
    """Normalise intervention targets: a name is a single-node target, a collection of names
    a joint target; the empty target is included when ``observational`` data exist."""
    family: set[frozenset[str]] = {frozenset()} if observational else set()
    for target in targets:
        names = frozenset([target] if isinstance(target, str) else target)
        for name in names:
            if name not in graph:
                raise InputError(
                    f"intervention target {name!r} is not a node of the graph {list(graph.nodes)}"
                )
        family.add(names)
    if not family:
        raise InputError("give at least one intervention target or set observational=True")
    return sorted(family, key=sorted)


def imec_size(
    graph: CausalGraph, targets: Iterable[str | Iterable[str]], *, observational: bool = True
) -> int:
    """Size of the interventional Markov equivalence class of ``graph`` under ``targets``.

    ``targets`` lists the intervened nodes (or sets of nodes intervened together); the
    observational regime (empty target) is included by default. With every node
    intervened the class has size 1; with no targets it is :func:`mec_size`.
    """
    family = target_family(graph, targets, observational=observational)
    truth = frozenset(graph.edges)
    wanted = [_signature(truth, t) for t in family]
    members = _member_edge_sets(graph) if frozenset() in family else _all_orientations(graph)
    return sum(
        all(_signature(m, t) == w for t, w in zip(family, wanted, strict=True)) for m in members
    )


def _all_orientations(graph: CausalGraph) -> list[frozenset[Edge]]:
    """All acyclic orientations of the skeleton (needed only without observational data)."""
    if len(graph.edges) > 20:
        raise InputError(
            "without observational data the IMEC is counted by brute force, which is limited to "
            "20 edges; include the observational regime (observational=True)"
        )
    found = []
    for flips in product((False, True), repeat=len(graph.edges)):
        edges = frozenset(
            (b, a) if f else (a, b) for (a, b), f in zip(graph.edges, flips, strict=True)
        )
        if nx.is_directed_acyclic_graph(nx.DiGraph(list(edges))):
            found.append(edges)
    return found
