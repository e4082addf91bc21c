"""MEC and IMEC sizes and CPDAGs, against hand counts and brute-force enumeration."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import pytest
from hypothesis import given, settings
from scm_strategies import dags

from silicolab.core.errors import InputError
from silicolab.scm import (
    CausalGraph,
    PartialGraph,
    cpdag,
    imec_size,
    markov_equivalent_dags,
    mec_size,
)


def complete_dag(k: int) -> CausalGraph:
    names = [f"v{i}" for i in range(k)]
    return CausalGraph(names, [(names[i], names[j]) for i in range(k) for j in range(i + 1, k)])


def orientations(graph: CausalGraph) -> list[CausalGraph]:
    """Every acyclic orientation of the skeleton, by brute force."""
    found = []
    for flips in itertools.product((False, True), repeat=len(graph.edges)):
        edges = [(b, a) if f else (a, b) for (a, b), f in zip(graph.edges, flips, strict=True)]
        if nx.is_directed_acyclic_graph(nx.DiGraph(edges)):
            found.append(CausalGraph(graph.nodes, edges))
    return found


def interventionally_equivalent(a: CausalGraph, b: CausalGraph, family: list[set[str]]) -> bool:
    for target in family:
        ma, mb = a.mutilated(target), b.mutilated(target)
        if ma.skeleton() != mb.skeleton() or ma.v_structures() != mb.v_structures():
            return False
    return True


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        ([("a", "b"), ("b", "c")], 3),  # chain
        ([("b", "a"), ("b", "c")], 3),  # fork
        ([("a", "b"), ("c", "b")], 1),  # collider
        ([("a", "b")], 2),
        ([("a", "b"), ("c", "b"), ("b", "d")], 1),  # collider then a compelled edge
    ],
)
def test_mec_size_by_hand(edges: list[tuple[str, str]], expected: int) -> None:
    assert mec_size(CausalGraph.from_edges(edges)) == expected


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6, 7, 8])
def test_complete_dag_mec_is_k_factorial(k: int) -> None:
    assert mec_size(complete_dag(k)) == math.factorial(k)


def test_cpdag_examples() -> None:
    chain = CausalGraph.from_edges([("a", "b"), ("b", "c")])
    assert cpdag(chain) == PartialGraph(["a", "b", "c"], undirected=[("a", "b"), ("b", "c")])
    collider_then = CausalGraph.from_edges([("a", "c"), ("b", "c"), ("c", "d")])
    # Meek R1 orients c -> d after the v-structure a -> c <- b.
    assert cpdag(collider_then) == PartialGraph.from_causal_graph(collider_then)


@given(dags(max_nodes=5))
@settings(max_examples=80, deadline=None)
def test_mec_size_matches_brute_force(graph: CausalGraph) -> None:
    members = [g for g in orientations(graph) if g.v_structures() == graph.v_structures()]
    assert mec_size(graph) == len(members)
    listed = markov_equivalent_dags(graph)
    assert len(listed) == len(set(listed)) == len(members)
    assert set(listed) == set(members)
    assert all(cpdag(g) == cpdag(graph) for g in listed)


@given(dags(max_nodes=5))
@settings(max_examples=60, deadline=None)
def test_imec_size_matches_brute_force(graph: CausalGraph) -> None:
    for targets in ([], [graph.nodes[0]], list(graph.nodes[:2]), [set(graph.nodes[:2])]):
        family = [set()] + [{t} if isinstance(t, str) else set(t) for t in targets]
        expected = sum(interventionally_equivalent(g, graph, family) for g in orientations(graph))
        assert imec_size(graph, targets) == expected


def test_imec_limits() -> None:
    g = complete_dag(5)
    assert imec_size(g, []) == mec_size(g) == 120
    assert imec_size(g, g.nodes) == 1
    assert imec_size(g, g.nodes[:-1]) == 1
    # Intervening on the source orients its edges; the rest stays a complete 4-clique.
    assert imec_size(g, ["v0"]) == math.factorial(4)
    chain = CausalGraph.from_edges([("a", "b"), ("b", "c")])
    assert imec_size(chain, ["b"]) == 1
    assert imec_size(chain, ["a"]) == 1  # orients a -> b, then Meek R1 orients b -> c
    assert imec_size(chain, ["c"]) == 2  # only b -> c is oriented; a - b stays open
    assert imec_size(chain, ["b"], observational=False) == len(
        [g for g in orientations(chain) if interventionally_equivalent(g, chain, [{"b"}])]
    )


def test_imec_unknown_target() -> None:
    with pytest.raises(InputError, match="not a node"):
        imec_size(complete_dag(3), ["zz"])
