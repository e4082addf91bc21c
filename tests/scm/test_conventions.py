"""Foreign adjacency conventions: round trips and the real causal-learn encodings."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scm_strategies import dags

from silicolab.core.errors import InputError
from silicolab.scm import (
    SCM,
    CausalGraph,
    LinearMechanism,
    PartialGraph,
    from_causallearn_graph,
    from_exact_search_matrix,
    from_lingam_matrix,
    from_scp_matrix,
    nhd,
    shd,
    to_causallearn_matrix,
    to_exact_search_matrix,
    to_lingam_matrix,
    to_scp_matrix,
    truncate,
)

COLLIDER = CausalGraph(["X0", "X1", "X2"], [("X0", "X1"), ("X2", "X1")])


@st.composite
def partial_graphs(draw: st.DrawFn, marks: tuple[str, ...]) -> PartialGraph:
    n = draw(st.integers(2, 5))
    names = [f"x{i}" for i in range(n)]
    edges = []
    for i in range(n):
        for j in range(i + 1, n):
            if draw(st.booleans()):
                edges.append(
                    (names[i], names[j], draw(st.sampled_from(marks)), draw(st.sampled_from(marks)))
                )
    return PartialGraph(names, marked=edges)


@given(dags())
@settings(max_examples=50, deadline=None)
def test_dag_round_trip_every_convention(graph: CausalGraph) -> None:
    nodes = list(graph.nodes)
    assert from_scp_matrix(to_scp_matrix(graph), nodes) == graph
    assert from_causallearn_graph(to_causallearn_matrix(graph), nodes) == graph
    assert from_lingam_matrix(to_lingam_matrix(graph), nodes) == graph
    assert from_exact_search_matrix(to_exact_search_matrix(graph), nodes) == graph


def simplest(graph: PartialGraph) -> CausalGraph | PartialGraph:
    """What the readers return: a CausalGraph for acyclic fully directed graphs."""
    if graph.is_fully_directed() and nx.is_directed_acyclic_graph(
        nx.DiGraph(list(graph.directed_edges()))
    ):
        return graph.to_causal_graph()
    return graph


@given(partial_graphs(("tail", "arrow", "circle")))
@settings(max_examples=50, deadline=None)
def test_causallearn_round_trip_with_all_marks(graph: PartialGraph) -> None:
    back = from_causallearn_graph(to_causallearn_matrix(graph), graph.nodes)
    assert back == simplest(graph)


@given(partial_graphs(("tail", "arrow")))
@settings(max_examples=50, deadline=None)
def test_scp_round_trip_with_undirected_and_bidirected(graph: PartialGraph) -> None:
    back = from_scp_matrix(to_scp_matrix(graph), graph.nodes)
    assert back == simplest(graph)


def test_collider_in_each_convention() -> None:
    # causal_discovery.md §6.1: row = effect conventions put 1 at [1, 0] and [1, 2];
    # Exact Search (row = cause) at [0, 1] and [2, 1].
    scp = to_scp_matrix(COLLIDER)
    assert scp[1, 0] == scp[1, 2] == 1 and scp.sum() == 2
    assert np.array_equal(to_lingam_matrix(COLLIDER), scp)
    es = to_exact_search_matrix(COLLIDER)
    assert es[0, 1] == es[2, 1] == 1 and es.sum() == 2
    cl = to_causallearn_matrix(COLLIDER)
    assert (cl[1, 0], cl[0, 1], cl[1, 2], cl[2, 1]) == (1, -1, 1, -1)


def test_causallearn_general_graph_object() -> None:
    from causallearn.graph.Edge import Edge
    from causallearn.graph.Endpoint import Endpoint
    from causallearn.graph.GeneralGraph import GeneralGraph
    from causallearn.graph.GraphNode import GraphNode

    nodes = [GraphNode(name) for name in ("a", "b", "c", "d")]
    g = GeneralGraph(nodes)
    g.add_edge(Edge(nodes[0], nodes[1], Endpoint.TAIL, Endpoint.ARROW))
    g.add_edge(Edge(nodes[1], nodes[2], Endpoint.CIRCLE, Endpoint.ARROW))
    g.add_edge(Edge(nodes[2], nodes[3], Endpoint.ARROW, Endpoint.ARROW))
    g.add_edge(Edge(nodes[0], nodes[3], Endpoint.TAIL, Endpoint.TAIL))
    expected = PartialGraph(
        ["a", "b", "c", "d"],
        directed=[("a", "b")],
        bidirected=[("c", "d")],
        undirected=[("a", "d")],
        marked=[("b", "c", "circle", "arrow")],
    )
    assert from_causallearn_graph(g) == expected
    assert np.array_equal(to_causallearn_matrix(expected), g.graph)


def _collider_data(noise: str, n: int = 3000) -> np.ndarray:
    gen = np.random.default_rng(0)
    draw = (lambda: gen.uniform(-1, 1, n)) if noise == "uniform" else (lambda: gen.normal(size=n))
    x0, x2 = draw(), draw()
    return np.c_[x0, x0 + x2 + draw(), x2]


def test_real_pc_and_ges_output() -> None:
    from causallearn.search.ConstraintBased.PC import pc
    from causallearn.search.ScoreBased.GES import ges

    data = _collider_data("normal")
    names = list(COLLIDER.nodes)
    assert from_causallearn_graph(pc(data, show_progress=False).G, names) == COLLIDER
    assert from_causallearn_graph(ges(data)["G"].graph, names) == COLLIDER
    gen = np.random.default_rng(1)
    a = gen.normal(size=3000)
    b = a + gen.normal(size=3000)
    chain_data = np.c_[a, b, b + gen.normal(size=3000)]
    chain = CausalGraph(names, [("X0", "X1"), ("X1", "X2")])
    assert from_causallearn_graph(pc(chain_data, show_progress=False).G, names) == chain.cpdag()


def test_real_lingam_and_exact_search_output() -> None:
    from causallearn.search.FCMBased import lingam
    from causallearn.search.ScoreBased.ExactSearch import bic_exact_search

    data = _collider_data("uniform")
    model = lingam.DirectLiNGAM(random_state=0)
    model.fit(data)
    assert from_lingam_matrix(model.adjacency_matrix_, COLLIDER.nodes) == COLLIDER
    dag, _ = bic_exact_search(data - data.mean(axis=0))
    assert from_exact_search_matrix(dag, COLLIDER.nodes) == COLLIDER


def test_mac_appendix_dwd_matrix() -> None:
    # causal_discovery.md §5: PC on DWD written by SCP's converter (row = effect, -1 undirected).
    names = ["Altitude", "Temperature", "Precipitation", "Longitude", "Sunshine", "Latitude"]
    matrix = [
        [0, 1, 0, 0, 0, 1],
        [0, 0, 0, 0, 0, 0],
        [1, 0, 0, 0, 0, 0],
        [0, 1, 0, 0, 1, 0],
        [0, 0, 0, 0, 0, -1],
        [0, 0, 0, 0, -1, 0],
    ]
    estimate = from_scp_matrix(matrix, names)
    assert estimate == PartialGraph(
        names,
        directed=[
            ("Temperature", "Altitude"),
            ("Latitude", "Altitude"),
            ("Altitude", "Precipitation"),
            ("Temperature", "Longitude"),
            ("Sunshine", "Longitude"),
        ],
        undirected=[("Sunshine", "Latitude")],
    )
    truth = from_scp_matrix(
        [
            [0, 0, 0, 0, 0, 0],
            [1, 0, 0, 1, 0, 1],
            [1, 0, 0, 1, 0, 0],
            [0, 0, 0, 0, 0, 0],
            [1, 0, 0, 0, 0, 0],
            [0, 0, 0, 0, 0, 0],
        ],
        names,
    )
    assert isinstance(truth, CausalGraph) and truth.has_edge("Altitude", "Temperature")
    assert (shd(truth, estimate), truncate(nhd(truth, estimate))) == (9, 0.305)


def test_lingam_weights_and_threshold() -> None:
    scm = SCM({"a": LinearMechanism(), "b": LinearMechanism({"a": -0.7})})
    b = to_lingam_matrix(scm)
    assert b[1, 0] == -0.7 and b[0, 1] == 0
    assert from_lingam_matrix([[0, 0], [0.05, 0]], ["a", "b"], threshold=0.1).edges == ()


def test_cyclic_estimates_stay_scorable() -> None:
    cyclic = from_scp_matrix([[0, 0, 1], [1, 0, 0], [0, 1, 0]], ["a", "b", "c"])
    assert isinstance(cyclic, PartialGraph)
    assert set(cyclic.directed_edges()) == {("a", "b"), ("b", "c"), ("c", "a")}
    assert shd(CausalGraph.from_edges([("a", "b"), ("b", "c")]), cyclic) == 1


def test_bad_foreign_matrices() -> None:
    with pytest.raises(InputError, match="not a causal-learn edge"):
        from_causallearn_graph([[0, 3], [1, 0]])
    with pytest.raises(InputError, match="circle mark"):
        to_scp_matrix(PartialGraph("ab", marked=[("a", "b", "circle", "arrow")]))
    with pytest.raises(InputError, match="node names"):
        from_scp_matrix(np.zeros((3, 3)), ["a", "b"])
