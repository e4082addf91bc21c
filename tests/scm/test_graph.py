"""CausalGraph and Variable: structure queries, validation errors, adjacency and JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from scm_strategies import dags

from silicolab.core.errors import InputError
from silicolab.scm import CausalGraph, PartialGraph, Variable


@pytest.fixture
def diamond() -> CausalGraph:
    # a -> b -> d, a -> c -> d, plus an isolated e
    return CausalGraph(["a", "b", "c", "d", "e"], [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])


def test_structure_queries(diamond: CausalGraph) -> None:
    assert diamond.parents("d") == ("b", "c")
    assert diamond.children("a") == ("b", "c")
    assert diamond.ancestors("d") == ("a", "b", "c")
    assert diamond.descendants("b") == ("d",)
    assert diamond.roots() == ("a", "e")
    order = diamond.topological_order()
    assert set(order) == set(diamond.nodes)
    for cause, effect in diamond.edges:
        assert order.index(cause) < order.index(effect)
    assert diamond.v_structures() == frozenset({("b", "d", "c")})
    assert diamond.is_d_separated({"b"}, {"c"}, {"a"})
    assert not diamond.is_d_separated({"b"}, {"c"}, {"a", "d"})


def test_from_edges_accepts_dicts_and_infers_nodes() -> None:
    g = CausalGraph.from_edges([{"from": "x", "to": "y"}, ("y", "z")])
    assert g.nodes == ("x", "y", "z")
    assert g.has_edge("x", "y") and not g.has_edge("y", "x")


def test_cycle_error_names_the_cycle() -> None:
    with pytest.raises(InputError) as info:
        CausalGraph.from_edges([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    message = str(info.value)
    assert "cycle" in message
    for name in ("a", "b", "c"):
        assert name in message
    assert "d" not in message.split("cycle")[1].split(";")[0]


def test_self_loop_is_a_cycle() -> None:
    with pytest.raises(InputError, match="cycle x -> x"):
        CausalGraph(["x"], [("x", "x")])


def test_unknown_variable_in_edge() -> None:
    with pytest.raises(InputError, match="unknown variable 'zz'") as info:
        CausalGraph(["x", "y"], [("x", "zz")])
    assert "['x', 'y']" in str(info.value)


def test_unknown_variable_in_query(diamond: CausalGraph) -> None:
    with pytest.raises(InputError, match="unknown variable 'q'"):
        diamond.parents("q")


def test_bad_edge_shape() -> None:
    with pytest.raises(InputError, match="not a \\(cause, effect\\) pair"):
        CausalGraph.from_edges([("a", "b", "c")])


def test_mutilated_removes_incoming_edges(diamond: CausalGraph) -> None:
    cut = diamond.mutilated(["b"])
    assert cut.parents("b") == ()
    assert cut.has_edge("b", "d")
    assert len(cut.edges) == len(diamond.edges) - 1


def test_adjacency_convention(diamond: CausalGraph) -> None:
    cause_row = diamond.to_adjacency()
    assert cause_row[0, 1] == 1 and cause_row[1, 0] == 0  # a -> b
    effect_row = diamond.to_adjacency(convention="effect_row")
    assert np.array_equal(effect_row, cause_row.T)
    reordered = diamond.to_adjacency(["d", "c", "b", "a", "e"])
    assert reordered[3, 2] == 1  # a -> b in the new order


@given(dags())
@settings(max_examples=60, deadline=None)
def test_adjacency_round_trip_every_convention(graph: CausalGraph) -> None:
    for convention in ("cause_row", "effect_row"):
        matrix = graph.to_adjacency(convention=convention)
        assert CausalGraph.from_adjacency(matrix, graph.nodes, convention=convention) == graph


def test_from_adjacency_errors() -> None:
    with pytest.raises(InputError, match="square"):
        CausalGraph.from_adjacency(np.zeros((2, 3)))
    with pytest.raises(InputError, match="one name per row"):
        CausalGraph.from_adjacency(np.zeros((2, 2)), ["a"])
    with pytest.raises(InputError, match="cycle"):
        CausalGraph.from_adjacency([[0, 1], [1, 0]])
    with pytest.raises(InputError, match="convention"):
        CausalGraph.from_adjacency(np.zeros((2, 2)), convention="rows")  # type: ignore[arg-type]


def test_default_names() -> None:
    g = CausalGraph.from_adjacency([[0, 1], [0, 0]])
    assert g.edges == (("x0", "x1"),)


def test_json_round_trip_keeps_variables() -> None:
    variables = [
        Variable(name="price", units="USD", role="outcome", description="clearing price"),
        Variable(name="budget", type="ordinal", levels=("low", "mid", "high"), metadata={"q": 1}),
    ]
    g = CausalGraph(variables, [("budget", "price")])
    data = json.loads(json.dumps(g.to_dict()))
    assert data["schema_version"] == 1
    back = CausalGraph.from_dict(data)
    assert back == g
    assert back.variables == g.variables
    with pytest.raises(InputError, match="not a causal-graph record"):
        CausalGraph.from_dict({"nodes": []})


def test_equality_ignores_order() -> None:
    a = CausalGraph(["x", "y", "z"], [("x", "y"), ("z", "y")])
    b = CausalGraph(["z", "y", "x"], [("z", "y"), ("x", "y")])
    assert a == b and hash(a) == hash(b)
    assert a != CausalGraph(["x", "y", "z"], [("x", "y")])


def test_variable_validation_and_scores() -> None:
    assert Variable(name="b", type="binary", levels=("no", "yes")).score_levels() == {
        "no": 0,
        "yes": 1,
    }
    assert Variable(name="o", type="ordinal", levels=("a", "b", "c")).score_levels()["c"] == 3
    with pytest.raises(ValueError, match="exactly two"):
        Variable(name="b", type="binary", levels=("a", "b", "c"))
    with pytest.raises(ValueError, match="non-empty name"):
        Variable(name=" ")
    with pytest.raises(ValueError, match="repeats a level"):
        Variable(name="o", type="ordinal", levels=("a", "a"))
    v = Variable(name="o", type="nominal", levels=("r", "g"))
    assert Variable.from_dict(json.loads(json.dumps(v.to_dict()))) == v


def test_duplicate_node() -> None:
    with pytest.raises(InputError, match="listed twice"):
        CausalGraph(["a", "a"])


def test_partial_graph_marks_binarization_and_json() -> None:
    p = PartialGraph(
        ["a", "b", "c", "d"],
        directed=[("b", "a")],
        undirected=[("a", "c")],
        bidirected=[("c", "d")],
        marked=[("b", "d", "circle", "arrow")],
    )
    assert p.marks("a", "b") == ("arrow", "tail")
    assert p.directed_edges() == (("b", "a"),)
    matrix = p.binary_adjacency()
    # b -> a: one entry; a - c and c <-> d: both entries; b o-> d: only b -> d.
    assert matrix.tolist() == [[0, 0, 1, 0], [1, 0, 0, 1], [1, 0, 0, 1], [0, 0, 1, 0]]
    assert not p.is_fully_directed()
    with pytest.raises(InputError, match="orient them all"):
        p.to_causal_graph()
    back = PartialGraph.from_dict(json.loads(json.dumps(p.to_dict())))
    assert back == p and hash(back) == hash(p)
    with pytest.raises(InputError, match="two different edges"):
        PartialGraph("ab", directed=[("a", "b"), ("b", "a")])
    with pytest.raises(InputError, match="unknown edge mark"):
        PartialGraph("ab", marked=[("a", "b", "dot", "arrow")])
