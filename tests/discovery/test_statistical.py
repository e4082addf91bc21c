"""Statistical discovery through real causal-learn: the published anchors, conventions,
bad input, and the registry."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from silicolab.core.errors import InputError
from silicolab.discovery import registry, statistical
from silicolab.discovery.datasets import load
from silicolab.discovery.result import GraphResult
from silicolab.discovery.scoring import score
from silicolab.scm.graph import CausalGraph
from silicolab.scm.partial_graph import PartialGraph


@pytest.fixture(scope="module")
def auto():
    return load("auto_mpg")


@pytest.fixture(scope="module")
def dwd():
    return load("dwd_climate")


@pytest.fixture(scope="module")
def sachs():
    return load("sachs")


def cells(result: GraphResult, truth: CausalGraph) -> tuple[int, float]:
    s = score(result, truth)
    return s["shd"], s["nhd_truncated"]


# -- MAC Table 2 "Other methods", with SCP's metric definitions ------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [("auto_mpg", (8, 0.48)), ("dwd_climate", (9, 0.305)), ("sachs", (24, 0.206))],
)
def test_pc_reproduces_published(name, expected):
    ds = load(name)
    assert cells(statistical.pc(ds.data), ds.truth) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [("auto_mpg", (8, 0.48)), ("dwd_climate", (10, 0.388)), ("sachs", (29, 0.289))],
)
def test_direct_lingam_reproduces_published(name, expected):
    ds = load(name)
    assert cells(statistical.direct_lingam(ds.data), ds.truth) == expected


def test_exact_search_with_scp_quirk_reproduces_published_dwd(dwd):
    result = statistical.exact(dwd.data, scp_orientation_quirk=True)
    assert cells(result, dwd.truth) == (6, 0.194)
    assert any("scp_orientation_quirk" in n for n in result.notes)


def test_exact_search_correct_orientation_dwd_and_quirk_is_its_reversal(dwd):
    correct = statistical.exact(dwd.data)
    assert cells(correct, dwd.truth) == (10, 0.416)
    quirk = statistical.exact(dwd.data, scp_orientation_quirk=True)
    assert set(quirk.graph.edges) == {(b, a) for a, b in correct.graph.edges}
    dag, _ = correct.raw
    assert np.array_equal(correct.adjacency(), np.asarray(dag, dtype=int))


def test_exact_search_auto_mpg_is_a_member_of_the_equivalence_class(auto):
    # The A* tie-break among equivalent DAGs depends on the numpy version (spec §5).
    quirk = score(statistical.exact(auto.data, scp_orientation_quirk=True), auto.truth)
    assert (quirk["shd"], quirk["hamming"]) in {(5, 7), (6, 9), (7, 11), (8, 13)}
    correct = score(statistical.exact(auto.data), auto.truth)
    assert (correct["shd"], correct["hamming"]) in {(3, 3), (4, 5), (5, 7), (6, 9)}


@pytest.mark.slow
def test_exact_search_with_scp_quirk_reproduces_published_sachs(sachs):
    assert cells(statistical.exact(sachs.data, scp_orientation_quirk=True), sachs.truth) == (
        31,
        0.33,
    )


def test_pc_returns_the_spec_edges_on_dwd(dwd):
    graph = statistical.pc(dwd.data).graph
    assert isinstance(graph, PartialGraph)
    assert set(graph.directed_edges()) == {
        ("Temperature", "Altitude"),
        ("Latitude", "Altitude"),
        ("Altitude", "Precipitation"),
        ("Temperature", "Longitude"),
        ("Sunshine", "Longitude"),
    }
    assert {frozenset(e) for e in graph.undirected_edges()} == {frozenset(("Latitude", "Sunshine"))}


# -- convention round trip on a collider ---------------------------------------------------


@pytest.fixture(scope="module")
def collider() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 2000
    x0 = rng.uniform(-1, 1, n)
    x2 = rng.uniform(-1, 1, n)
    x1 = 1.5 * x0 - 1.2 * x2 + 0.3 * rng.uniform(-1, 1, n)
    return pd.DataFrame({"X0": x0, "X1": x1, "X2": x2})


COLLIDER = np.array([[0, 1, 0], [0, 0, 0], [0, 1, 0]])


@pytest.mark.parametrize(
    "method", ["pc", "fci", "ges", "exact", "direct_lingam", "ica_lingam", "cdnod"]
)
def test_every_method_returns_the_collider_in_our_convention(collider, method):
    result = registry.discover(collider, method)
    assert result.method == method
    assert result.nodes == ("X0", "X1", "X2")
    assert np.array_equal(result.adjacency(), COLLIDER), result.graph
    assert result.runtime_s > 0
    assert result.usage == {}


def test_exact_quirk_reverses_the_collider(collider):
    result = statistical.exact(collider, scp_orientation_quirk=True)
    assert np.array_equal(result.adjacency(), COLLIDER.T)


def test_fci_keeps_circle_marks_and_prints_nothing(collider, capsys):
    result = statistical.fci(collider)
    assert capsys.readouterr().out == ""
    assert isinstance(result.graph, PartialGraph)
    assert result.graph.marks("X0", "X1") == ("circle", "arrow")
    record = result.to_dict()
    assert {"u": "X0", "v": "X1", "mark_u": "circle", "mark_v": "arrow"} in record["edges"][
        "marked"
    ]
    assert GraphResult.from_dict(json.loads(json.dumps(record))).graph == result.graph


def test_cdnod_context_column_and_array(collider):
    rng = np.random.default_rng(1)
    frame = collider.assign(batch=rng.integers(0, 3, len(collider)))
    by_column = statistical.cdnod(frame, context="batch")
    assert by_column.nodes == ("X0", "X1", "X2")
    assert by_column.params["context"] == "batch"
    by_array = statistical.cdnod(collider, context=frame["batch"].to_numpy())
    assert by_array.params["context"] == "array"
    assert np.array_equal(by_array.adjacency(), by_column.adjacency())
    with pytest.raises(InputError, match="one finite value per row"):
        statistical.cdnod(collider, context=np.arange(5))
    with pytest.raises(InputError, match="not in the data"):
        statistical.cdnod(collider, context="nope")


def test_standardization_does_not_change_pc_but_params_record_it(auto):
    a = statistical.pc(auto.data)
    b = statistical.pc(auto.data, standardize=False)
    assert a.graph == b.graph
    assert a.params == {"alpha": 0.05, "indep_test": "fisherz", "stable": True, "standardize": True}
    assert b.params["standardize"] is False


# -- bad input ------------------------------------------------------------------------------


def test_unknown_parameter_is_rejected_with_the_accepted_names(auto):
    with pytest.raises(InputError, match=r"independence_test_method.*uc_rule"):
        statistical.pc(auto.data, independence_test_method="fisherz")
    with pytest.raises(InputError, match="does not accept"):
        statistical.direct_lingam(auto.data, alpha=0.1)


def test_bad_choices_and_data_are_input_errors(auto):
    with pytest.raises(InputError, match="indep_test"):
        statistical.pc(auto.data, indep_test="pearson")
    with pytest.raises(InputError, match="alpha"):
        statistical.fci(auto.data, alpha=2)
    with pytest.raises(InputError, match="search_method"):
        statistical.exact(auto.data, search_method="greedy")
    with pytest.raises(InputError, match=r"non-numeric column.*name"):
        statistical.ges(auto.data.assign(name="car"))
    with pytest.raises(InputError, match="missing value"):
        statistical.pc(auto.data.assign(Mpg=auto.data.Mpg.where(auto.data.Mpg > 15)))
    with pytest.raises(InputError, match="DataFrame"):
        statistical.pc(auto.data.to_numpy())
    with pytest.raises(InputError, match="Knowledge"):
        statistical.pc(auto.data, knowledge={"required": []})


# -- result records and the registry ---------------------------------------------------------


def test_result_round_trips_through_json(dwd):
    result = statistical.pc(dwd.data)
    record = json.loads(json.dumps(result.to_dict()))
    assert record["schema_version"] == 1
    assert record["edges"]["undirected"] == [["Sunshine", "Latitude"]]
    back = GraphResult.from_dict(record)
    assert back.graph == result.graph and back.params == result.params and back.raw is None
    with pytest.raises(InputError, match="to_dict"):
        GraphResult.from_dict({"method": "pc"})


def test_registry_lists_runs_and_rejects_unknown_names(dwd):
    stats = registry.available("statistical")
    assert set(stats) == {
        "pc",
        "fci",
        "ges",
        "exact",
        "exact_scp",
        "direct_lingam",
        "ica_lingam",
        "cdnod",
    }
    assert registry.kind_of("pc") == "statistical"
    assert registry.get("pc") is statistical.pc
    with pytest.raises(InputError, match=r"unknown discovery method 'pcc'.*'pc'"):
        registry.get("pcc")
    with pytest.raises(InputError, match="kind"):
        registry.available("quantum")
    result = registry.discover(dwd.data, "pc", alpha=0.01)
    assert result.params["alpha"] == 0.01


def test_register_refuses_to_rebind_a_name():
    description = registry.entry("pc").description
    registry.register("pc", statistical.pc, kind="statistical", description=description)
    with pytest.raises(InputError, match="already registered"):
        registry.register("pc", statistical.ges, kind="statistical", description="x")
    with pytest.raises(InputError, match="kind"):
        registry.register("new", statistical.ges, kind="magic", description="x")
    assert registry.get("pc") is statistical.pc
