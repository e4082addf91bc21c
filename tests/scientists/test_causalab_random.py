"""The random baseline: stays within the budget, is reproducible, and is scored like the
others (so it gives the floor of the benchmark table)."""

from __future__ import annotations

import numpy as np

from silicolab.envs import make
from silicolab.envs.causalab.suite import TARGET
from silicolab.scientists.causalab import RandomScientist, play_episode
from silicolab.scientists.causalab.random_agent import random_hypothesis


def test_random_episode_is_within_budget_and_reproducible() -> None:
    records = [
        play_episode(make("causalab", suite="5nodes", index=i, seed=0), RandomScientist(seed=1))
        for i in range(6)
    ]
    again = play_episode(make("causalab", suite="5nodes", index=0, seed=0), RandomScientist(seed=1))
    assert again.interventions == records[0].interventions
    assert again.submissions == records[0].submissions
    for record in records:
        assert record.agent == "random" and record.model == ""
        assert len(record.interventions) <= 16
        assert len(record.submissions) == 1
        assert record.steps[-1].action["tool"] == "submit"
        assert 0.0 <= record.metrics["all_edge_f1"] <= 1.0
    # random guesses almost never land within 5 Hz
    assert sum(r.success for r in records) <= 1


def test_random_hypothesis_is_a_valid_dsl_hypothesis() -> None:
    names = ["density", "moisture", "ph"]
    h = random_hypothesis(names, np.random.default_rng(0))
    assert h.graph() is not None
    assert h.parents()
    assert h.predict(dict.fromkeys(names, 10.0)) is not None
    assert all(b != a for a, b in h.edges) and any(b == TARGET for _, b in h.edges)
