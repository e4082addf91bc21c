"""AssociativeMemory: hand-checked orderings for relevance, recency and importance."""

from __future__ import annotations

import json

import numpy as np
import pytest

from silicolab.core.errors import InputError
from silicolab.sim import AssociativeMemory, HashingEmbedder


def texts(items):
    return [m.text for m in items]


def filled(**kw) -> AssociativeMemory:
    mem = AssociativeMemory(**kw)
    mem.add("the baker sells bread at the market", time=0.0, importance=0.2)
    mem.add("a storm damaged the harbour", time=5.0, importance=0.9)
    mem.add("the weather was mild and sunny", time=9.0, importance=0.1)
    return mem


@pytest.mark.parametrize("relevance", ["tfidf", "bm25"])
def test_relevance_only_ranks_by_word_overlap(relevance):
    mem = filled(weights=(1.0, 0.0, 0.0), relevance=relevance)
    got = texts(mem.retrieve("where can I buy bread from the baker", k=3))
    assert got[0] == "the baker sells bread at the market"


def test_recency_only_ranks_newest_first():
    mem = filled(weights=(0.0, 1.0, 0.0))
    assert texts(mem.retrieve("bread", k=3)) == [
        "the weather was mild and sunny",
        "a storm damaged the harbour",
        "the baker sells bread at the market",
    ]


def test_importance_only_ranks_by_importance():
    mem = filled(weights=(0.0, 0.0, 1.0))
    assert texts(mem.retrieve("bread", k=3)) == [
        "a storm damaged the harbour",
        "the baker sells bread at the market",
        "the weather was mild and sunny",
    ]


def test_weighted_sum_of_normalised_signals_by_hand():
    mem = AssociativeMemory(recency_half_life=5.0)
    mem.add("red apple", time=0.0, importance=1.0)
    mem.add("green pear", time=10.0, importance=0.0)
    # query matches the first only: relevance (1, 0); recency 0.25 vs 1 -> (0, 1);
    # importance (1, 0): totals 2 and 1
    got = mem.retrieve("apple", k=2)
    assert texts(got) == ["red apple", "green pear"]
    assert [m.score for m in got] == pytest.approx([2.0, 1.0])
    # evaluated later, recency still normalises to (0, 1)
    assert [m.score for m in mem.retrieve("apple", k=2, now=100.0)] == pytest.approx([2.0, 1.0])


def test_recency_can_outweigh_relevance_with_weights():
    mem = AssociativeMemory(weights=(1.0, 3.0, 0.0))
    mem.add("red apple", time=0.0)
    mem.add("green pear", time=10.0)
    assert texts(mem.retrieve("apple", k=1)) == ["green pear"]


def test_default_importance_and_validation():
    mem = AssociativeMemory()
    mem.add("x", time=0)
    assert mem.items()[0].importance == 0.5
    with pytest.raises(InputError):
        mem.add("y", time=0, importance=2.0)
    with pytest.raises(InputError):
        AssociativeMemory(relevance="cosine")  # type: ignore[arg-type]
    assert AssociativeMemory().retrieve("anything") == []


def test_k_limits_and_ties_prefer_recent():
    mem = AssociativeMemory(weights=(0.0, 0.0, 1.0))
    for t in range(4):
        mem.add(f"event {t}", time=float(t))
    assert texts(mem.retrieve("q", k=2)) == ["event 3", "event 2"]


def test_hashing_embedder_is_stable_and_normalised():
    emb = HashingEmbedder(dim=64)
    a = emb.embed(["the cat sat", ""])
    assert a.shape == (2, 64)
    assert np.linalg.norm(a[0]) == pytest.approx(1.0)
    assert not a[1].any()
    assert np.array_equal(a, HashingEmbedder(dim=64).embed(["the cat sat", ""]))


def test_custom_embedder_hook_is_used():
    class Calls:
        def __init__(self):
            self.n = 0
            self.inner = HashingEmbedder()

        def embed(self, batch):
            self.n += 1
            return self.inner.embed(batch)

    emb = Calls()
    mem = AssociativeMemory(emb, weights=(1.0, 0.0, 0.0))
    mem.add("the cat purrs", time=0)
    mem.add("stock prices fell", time=1)
    assert texts(mem.retrieve("a cat", k=1)) == ["the cat purrs"]
    calls = emb.n
    mem.retrieve("prices", k=1)
    assert emb.n == calls + 1  # documents are embedded once, only the query again


def test_state_round_trip_through_json():
    mem = filled()
    clone = AssociativeMemory()
    clone.load_state(json.loads(json.dumps(mem.state_dict())))
    assert clone.items() == mem.items()
    assert clone.retrieve("storm", k=3) == mem.retrieve("storm", k=3)
