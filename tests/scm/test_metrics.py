"""SHD, NHD and precision/recall/F1 scores on the specs' test vectors and as a metric."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from scm_strategies import dag_triples

from silicolab.core.errors import InputError
from silicolab.scm import (
    CausalGraph,
    PartialGraph,
    coefficient_scores,
    edge_scores,
    hamming,
    nhd,
    parent_scores,
    root_scores,
    shd,
    shd_cpdag,
    shd_parts,
    truncate,
)

AUTO = ["Displacement", "Mpg", "Horsepower", "Weight", "Acceleration"]
AUTO_TRUTH = CausalGraph(
    AUTO,
    [
        ("Weight", "Displacement"),
        ("Displacement", "Horsepower"),
        ("Horsepower", "Acceleration"),
        ("Horsepower", "Mpg"),
        ("Weight", "Mpg"),
    ],
)
DWD = ["Altitude", "Temperature", "Precipitation", "Longitude", "Sunshine", "Latitude"]
DWD_TRUTH = CausalGraph(
    DWD,
    [
        ("Altitude", "Temperature"),
        ("Longitude", "Temperature"),
        ("Latitude", "Temperature"),
        ("Altitude", "Precipitation"),
        ("Longitude", "Precipitation"),
        ("Altitude", "Sunshine"),
    ],
)


def test_pc_on_auto_mpg_scores_as_published() -> None:
    # causal_discovery.md §5: PC on Auto MPG gives SHD 8, HD 12, NHD 0.48.
    estimate = PartialGraph(
        AUTO,
        directed=[
            ("Horsepower", "Displacement"),
            ("Weight", "Displacement"),
            ("Acceleration", "Displacement"),
            ("Mpg", "Horsepower"),
            ("Acceleration", "Horsepower"),
            ("Mpg", "Weight"),
            ("Acceleration", "Weight"),
        ],
        undirected=[("Weight", "Horsepower")],
    )
    assert shd(AUTO_TRUTH, estimate) == 8
    assert hamming(AUTO_TRUTH, estimate) == 12
    assert nhd(AUTO_TRUTH, estimate) == pytest.approx(0.48)


def test_lingam_on_auto_mpg_scores_as_published() -> None:
    estimate = CausalGraph(
        AUTO,
        [("Displacement", x) for x in ("Mpg", "Horsepower", "Weight", "Acceleration")]
        + [("Mpg", "Horsepower"), ("Mpg", "Weight"), ("Weight", "Horsepower")]
        + [("Weight", "Acceleration"), ("Acceleration", "Horsepower")],
    )
    assert (shd(AUTO_TRUTH, estimate), hamming(AUTO_TRUTH, estimate)) == (8, 12)


def test_pc_on_dwd_scores_as_published() -> None:
    # SHD 9, HD 11, NHD 11/36 printed (truncated) as 0.305.
    estimate = PartialGraph(
        DWD,
        directed=[
            ("Temperature", "Altitude"),
            ("Latitude", "Altitude"),
            ("Altitude", "Precipitation"),
            ("Temperature", "Longitude"),
            ("Sunshine", "Longitude"),
        ],
        undirected=[("Latitude", "Sunshine")],
    )
    assert shd(DWD_TRUTH, estimate) == 9
    assert nhd(DWD_TRUTH, estimate) == pytest.approx(11 / 36)
    assert truncate(nhd(DWD_TRUTH, estimate)) == 0.305


@pytest.mark.parametrize(
    ("estimate", "expected_shd", "expected_hd"),
    [
        (PartialGraph("uvw", directed=[("u", "v")]), 0, 0),
        (PartialGraph("uvw"), 1, 1),
        (PartialGraph("uvw", directed=[("v", "u")]), 1, 2),
        (PartialGraph("uvw", directed=[("u", "v")], undirected=[("v", "w")]), 2, 2),
        (PartialGraph("uvw", directed=[("u", "v")], bidirected=[("u", "w")]), 2, 2),
        (PartialGraph("uvw", directed=[("u", "v"), ("w", "u")]), 1, 1),
        (PartialGraph("uvw", undirected=[("u", "v")]), 0, 1),
        (PartialGraph("uvw", bidirected=[("u", "v")]), 0, 1),
    ],
)
def test_scp_pair_patterns(estimate: PartialGraph, expected_shd: int, expected_hd: int) -> None:
    # causal_discovery.md §2.3 table; the truth is u -> v.
    truth = CausalGraph("uvw", [("u", "v")])
    assert shd(truth, estimate) == expected_shd
    assert hamming(truth, estimate) == expected_hd


def test_causalab_shd_vectors() -> None:
    # causalab.md §12 test 4.
    truth = [("a", "b")]
    assert shd_parts(truth, [("b", "a")]).reversed == 1
    assert shd(truth, [("b", "a")]) == 1
    assert shd_parts(truth, []).missing == 1
    assert shd(truth, []) == 1
    assert shd_parts(truth, [("a", "b"), ("c", "b")]).extra == 1
    assert shd(truth, [{"from": "a", "to": "b"}, {"from": "c", "to": "b"}]) == 1


def test_causalab_weight_f1_vector() -> None:
    # causalab.md §12 test 5: P = R = F1 = 0.5.
    result = coefficient_scores(
        {"density": 1, "moisture": 1}, {"base": 25, "c_density": 1, "c_moisture": 2}
    )
    assert (result.precision, result.recall, result.f1) == (0.5, 0.5, 0.5)


def test_coefficient_scores_tolerance_and_spurious_keys() -> None:
    truth = {"a": 2.0, "b": 3.0}
    assert coefficient_scores(truth, {"c_a": 2.004}).n_correct == 0
    assert coefficient_scores(truth, {"c_a": 2.004}, tol=0.01).n_correct == 1
    spurious = coefficient_scores(truth, {"c_a": 2.0, "c_b": 3.0, "c_z": 1.0, "c_q": None})
    assert spurious.n_predicted == 4 and spurious.precision == 0.5 and spurious.recall == 1.0
    with pytest.raises(InputError, match="tol"):
        coefficient_scores(truth, {}, tol=-1)


def test_edge_and_parent_scores() -> None:
    truth = CausalGraph.from_edges([("a", "y"), ("b", "y"), ("a", "b")])
    predicted = [("a", "y"), ("c", "y"), ("b", "a")]
    result = edge_scores(truth, predicted)
    assert (result.n_correct, result.n_predicted, result.n_true) == (1, 3, 3)
    assert result.f1 == pytest.approx(1 / 3)
    parents = parent_scores(truth, predicted, "y")
    assert (parents.precision, parents.recall, parents.f1) == (0.5, 0.5, 0.5)


def test_empty_set_conventions() -> None:
    empty = edge_scores([], [])
    assert (empty.precision, empty.recall, empty.f1) == (1.0, 1.0, 1.0)
    none_found = edge_scores([("a", "b")], [])
    assert (none_found.precision, none_found.recall, none_found.f1) == (0.0, 0.0, 0.0)


def test_root_scores() -> None:
    # causalab.md §6.6: density -> Y, moisture -> Y, density -> qS gives roots
    # {density, moisture}; a root that does not reach Y does not count.
    truth = CausalGraph.from_edges(
        [("density", "Y"), ("moisture", "Y"), ("density", "qS"), ("ph", "qS")]
    )
    exact = root_scores(truth, ["moisture", "density"], "Y")
    assert exact.f1 == 1.0
    half = root_scores(truth, ["density", "ph"], "Y")
    assert (half.precision, half.recall) == (0.5, 0.5)
    from_graph = root_scores(truth, [("moisture", "density"), ("density", "Y")], "Y")
    assert (from_graph.n_correct, from_graph.n_predicted) == (1, 1)
    assert root_scores(truth, ["density", "moisture", "ph"]).f1 == 1.0


def test_nhd_needs_nodes_for_empty_lists() -> None:
    with pytest.raises(InputError, match="n_nodes"):
        nhd([], [])
    assert nhd([("a", "b")], [], n_nodes=4) == 1 / 16


def test_shd_cpdag_is_class_level() -> None:
    chain = CausalGraph.from_edges([("a", "b"), ("b", "c")])
    reversed_chain = CausalGraph.from_edges([("c", "b"), ("b", "a")])
    collider = CausalGraph.from_edges([("a", "b"), ("c", "b")])
    assert shd(chain, reversed_chain) == 2
    assert shd_cpdag(chain, reversed_chain) == 0
    assert shd_cpdag(chain, collider) == 2
    assert shd_cpdag(chain, chain.cpdag()) == 0
    with pytest.raises(InputError, match="different nodes"):
        shd_cpdag(chain, CausalGraph.from_edges([("a", "b")]))


@given(dag_triples())
@settings(max_examples=150, deadline=None)
def test_shd_is_a_metric_on_dags(triple: tuple[CausalGraph, ...]) -> None:
    g, h, k = triple
    assert shd(g, g) == 0
    assert (shd(g, h) == 0) == (g == h)
    assert shd(g, h) == shd(h, g)
    assert shd(g, k) <= shd(g, h) + shd(h, k)
    assert 0 <= hamming(g, h) - shd(g, h) <= len(g.edges)
