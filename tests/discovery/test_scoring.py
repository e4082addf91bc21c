"""Scores with SCP's SHD and MAC's truncated NHD on hand-made graphs and real results."""

from __future__ import annotations

import pytest

from silicolab.core.errors import InputError
from silicolab.discovery import statistical
from silicolab.discovery.datasets import load
from silicolab.discovery.result import GraphResult
from silicolab.discovery.scoring import score
from silicolab.scm.graph import CausalGraph
from silicolab.scm.partial_graph import PartialGraph

TRUTH = CausalGraph(["a", "b", "c"], [("a", "b"), ("b", "c")])


def test_perfect_estimate():
    s = score(TRUTH, TRUTH)
    assert s == {
        "shd": 0,
        "nhd": 0.0,
        "nhd_truncated": 0.0,
        "hamming": 0,
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
        "n_edges_true": 2,
        "n_edges_pred": 2,
    }


def test_scp_costs_of_each_edge_kind():
    reversed_ = CausalGraph(["a", "b", "c"], [("b", "a"), ("b", "c")])
    assert (score(reversed_, TRUTH)["shd"], score(reversed_, TRUTH)["hamming"]) == (1, 2)
    undirected_on_true = PartialGraph(
        ["a", "b", "c"], undirected=[("a", "b")], directed=[("b", "c")]
    )
    s = score(undirected_on_true, TRUTH)
    assert (s["shd"], s["hamming"], s["n_edges_pred"]) == (0, 1, 3)
    undirected_on_false = PartialGraph(
        ["a", "b", "c"], directed=[("a", "b"), ("b", "c")], undirected=[("a", "c")]
    )
    assert score(undirected_on_false, TRUTH)["shd"] == 2
    missing = CausalGraph(["a", "b", "c"], [("a", "b")])
    s = score(missing, TRUTH)
    assert (s["shd"], s["recall"], s["precision"]) == (1, 0.5, 1.0)


def test_nhd_is_truncated_not_rounded():
    # 11 differing entries of 36 = 0.30555... is printed 0.305 (MAC Table 2, PC on DWD).
    ds = load("dwd_climate")
    s = score(statistical.pc(ds.data), ds.truth)
    assert s["hamming"] == 11 and s["nhd"] == pytest.approx(11 / 36)
    assert s["nhd_truncated"] == 0.305


def test_accepts_results_and_rejects_mismatches():
    result = GraphResult(method="hand", graph=TRUTH)
    assert score(result, TRUTH)["shd"] == 0
    with pytest.raises(InputError, match="same variables"):
        score(CausalGraph(["a", "b"], [("a", "b")]), TRUTH)
    with pytest.raises(InputError, match="cannot score"):
        score([("a", "b")], TRUTH)
    with pytest.raises(InputError, match="truth"):
        score(TRUTH, PartialGraph(["a", "b", "c"]))
