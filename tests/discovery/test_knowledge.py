"""Knowledge: validation, each backend's encoding, and its effect on real runs."""

from __future__ import annotations

import numpy as np
import pytest
from causallearn.graph.GraphNode import GraphNode

from silicolab.core.errors import InputError
from silicolab.discovery import statistical
from silicolab.discovery.datasets import load
from silicolab.discovery.knowledge import Knowledge, apply_knowledge_filter
from silicolab.discovery.scoring import score
from silicolab.scm.graph import CausalGraph
from silicolab.scm.partial_graph import PartialGraph

NODES = ["a", "b", "c", "d"]


@pytest.fixture(scope="module")
def auto():
    return load("auto_mpg")


@pytest.fixture(scope="module")
def dwd():
    return load("dwd_climate")


# -- construction and validation -------------------------------------------------------------


def test_from_verdicts_maps_true_false_none():
    k = Knowledge.from_verdicts({("a", "b"): True, ("b", "c"): False, ("c", "d"): None})
    assert k.required == (("a", "b"),)
    assert k.forbidden == (("b", "c"),)
    with pytest.raises(InputError, match="verdict"):
        Knowledge.from_verdicts({("a", "b"): "yes"})


def test_from_graph_requires_edges_and_forbids_the_rest():
    k = Knowledge.from_graph(CausalGraph(["a", "b", "c"], [("a", "b")]))
    assert k.required == (("a", "b"),)
    assert len(k.forbidden) == 5 and ("b", "a") in k.forbidden


@pytest.mark.parametrize(
    ("knowledge", "message"),
    [
        (Knowledge(required=[("a", "zz")]), r"unknown variable\(s\) \['zz'\]"),
        (Knowledge(required=[("a", "b")], forbidden=[("a", "b")]), "both required and forbidden"),
        (Knowledge(required=[("b", "a")], tiers=[("a",), ("b",)]), "both required and forbidden"),
        (Knowledge(required=[("a", "b"), ("b", "c"), ("c", "a")]), "cycle a -> b -> c -> a"),
        (Knowledge(tiers=[("a",), ("a", "b")]), "tiers 0 and 1"),
    ],
)
def test_validate_rejects_bad_knowledge(knowledge, message):
    with pytest.raises(InputError, match=message):
        knowledge.validate(NODES)


def test_malformed_edges_and_tiers_are_input_errors():
    with pytest.raises(InputError, match="self-loop"):
        Knowledge(required=[("a", "a")])
    with pytest.raises(InputError, match="pair"):
        Knowledge(forbidden=[("a", "b", "c")])
    with pytest.raises(InputError, match="tiers"):
        Knowledge(tiers=("a", "b"))


def test_round_trip_and_truthiness():
    k = Knowledge(required=[("a", "b")], forbidden=[["c", "d"]], tiers=[["a"], ["b", "c"]])
    assert Knowledge.from_dict(k.to_dict()) == k
    assert k and not Knowledge()


# -- encodings -----------------------------------------------------------------------------


def test_causallearn_encoding_by_name_and_alias():
    k = Knowledge(required=[("a", "b")], forbidden=[("c", "d")], tiers=[("d",), ("a",)])
    bk = k.to_causallearn(NODES)
    assert bk.is_required(GraphNode("a"), GraphNode("b"))
    assert not bk.is_required(GraphNode("b"), GraphNode("a"))
    assert bk.is_forbidden(GraphNode("c"), GraphNode("d"))
    assert bk.is_forbidden(GraphNode("a"), GraphNode("d"))  # later tier -> earlier tier
    assert not bk.is_forbidden(GraphNode("d"), GraphNode("a"))
    aliased = k.to_causallearn(NODES, node_names=["X1", "X2", "X3", "X4"])
    assert aliased.is_required(GraphNode("X1"), GraphNode("X2"))
    assert aliased.is_forbidden(GraphNode("X3"), GraphNode("X4"))


def test_exact_search_encoding_is_row_cause():
    k = Knowledge(required=[("a", "b")], forbidden=[("c", "d")], tiers=[("d",), ("a",)])
    super_graph, include = k.to_exact_search(NODES)
    assert super_graph[2, 3] == 0 and super_graph[3, 2] == 1  # c -> d forbidden
    assert super_graph[0, 3] == 0  # a (tier 1) -> d (tier 0) forbidden
    assert np.diag(super_graph).sum() == 0
    assert include.sum() == 1 and include[0, 1] == 1
    assert Knowledge(forbidden=[("a", "b")]).to_exact_search(NODES)[1] is None


def test_lingam_encoding_has_path_semantics():
    k = Knowledge(required=[("a", "b"), ("b", "c")], forbidden=[("a", "c"), ("d", "a")])
    pk = k.to_lingam(NODES)
    assert pk[1, 0] == 1 and pk[2, 1] == 1  # required edges are paths: pk[effect, cause]
    assert pk[2, 0] == 1  # a -> c is forbidden as an edge but a ~> c is a path
    assert pk[0, 3] == 0  # d -> a forbidden: no path from d to a
    assert (np.diag(pk) == -1).all()
    assert pk[3, 0] == -1


# -- effect on real runs ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["auto_mpg", "dwd_climate"])
def test_pc_with_the_truth_as_knowledge_recovers_it(name):
    ds = load(name)
    result = statistical.pc(ds.data, knowledge=Knowledge.from_graph(ds.truth))
    assert score(result, ds.truth)["shd"] == 0


@pytest.mark.parametrize("name", ["auto_mpg", "dwd_climate"])
def test_exact_search_with_the_truth_as_super_graph_recovers_it(name):
    ds = load(name)
    allowed = Knowledge.from_graph(ds.truth, forbid_absent=True)
    only_forbidden = Knowledge(forbidden=allowed.forbidden)
    result = statistical.exact(ds.data, knowledge=only_forbidden)
    assert set(result.graph.edges) == set(ds.truth.edges)
    quirk = statistical.exact(ds.data, knowledge=only_forbidden, scp_orientation_quirk=True)
    assert all(edge not in only_forbidden.forbidden for edge in quirk.graph.edges)


def test_exact_search_include_graph_forces_an_edge(dwd):
    k = Knowledge(required=[("Latitude", "Sunshine")])
    assert ("Latitude", "Sunshine") in statistical.exact(dwd.data, knowledge=k).graph.edges


def test_direct_lingam_respects_prior_knowledge(auto):
    plain = statistical.direct_lingam(auto.data).graph
    assert ("Displacement", "Mpg") in plain.edges
    k = Knowledge(forbidden=[("Displacement", "Mpg")], required=[("Weight", "Displacement")])
    result = statistical.direct_lingam(auto.data, knowledge=k)
    assert ("Displacement", "Mpg") not in result.graph.edges
    order = [auto.data.columns[i] for i in result.raw.causal_order_]
    assert order.index("Weight") < order.index("Displacement")  # a required path
    assert order.index("Mpg") < order.index("Displacement")  # no path Displacement ~> Mpg


def test_pc_tiers_orient_edges(dwd):
    k = Knowledge(tiers=[("Altitude", "Longitude", "Latitude"), ("Temperature", "Sunshine")])
    graph = statistical.pc(dwd.data, knowledge=k).graph
    edges = graph.directed_edges() if isinstance(graph, PartialGraph) else graph.edges
    assert ("Temperature", "Altitude") not in edges
    assert ("Sunshine", "Longitude") not in edges


def test_ges_applies_knowledge_as_a_post_filter(auto):
    columns = list(auto.data.columns)
    found = statistical.ges(auto.data).adjacency()
    i, j = (int(v[0]) for v in found.nonzero())
    k = Knowledge(forbidden=[(columns[i], columns[j])], required=[("Mpg", "Acceleration")])
    filtered = statistical.ges(auto.data, knowledge=k)
    assert "post-filter" in filtered.notes[0]
    assert filtered.adjacency()[i, j] == 0
    assert any("Mpg -> Acceleration" in n for n in filtered.notes)


def test_apply_knowledge_filter_orients_and_drops():
    graph = PartialGraph(["a", "b", "c"], undirected=[("a", "b")], directed=[("b", "c")])
    filtered, notes = apply_knowledge_filter(graph, Knowledge(forbidden=[("a", "b"), ("b", "c")]))
    assert isinstance(filtered, CausalGraph)
    assert filtered.edges == (("b", "a"),)
    assert "b -> c" in notes[0]
    oriented, notes = apply_knowledge_filter(graph, Knowledge(required=[("a", "b")]))
    assert set(oriented.edges) == {("a", "b"), ("b", "c")} and notes == []


def test_conflicting_knowledge_is_an_input_error_before_running(auto):
    k = Knowledge(required=[("Weight", "Mpg")], forbidden=[("Weight", "Mpg")])
    for method in (statistical.pc, statistical.exact, statistical.direct_lingam, statistical.ges):
        with pytest.raises(InputError, match="both required and forbidden"):
            method(auto.data, knowledge=k)
    with pytest.raises(InputError, match="unknown variable"):
        statistical.fci(auto.data, knowledge=Knowledge(required=[("Weight", "Price")]))
