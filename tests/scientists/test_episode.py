"""One scientist protocol, one registry, one runner: the same record shape for every family."""

from __future__ import annotations

import json
import math

import pytest

from silicolab.core.errors import InputError
from silicolab.envs import make
from silicolab.llm import load_model
from silicolab.scientists import (
    EpisodeRecord,
    make_scientist,
    run_episode,
)


@pytest.mark.parametrize("env_id", ["causalab", "boxinggym/dugongs"])
def test_every_family_refuses_a_missing_model_and_an_unknown_name(env_id: str) -> None:
    # The shared names and what they make: check_family (tests/scientists/test_check_family.py).
    with pytest.raises(InputError, match="model"):
        make_scientist(env_id, "llm")
    with pytest.raises(InputError, match="unknown"):
        make_scientist(env_id, "oracle")


def test_old_names_still_work_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match="reference"):
        assert make_scientist("boxinggym", "boed").agent == "reference"
    with pytest.warns(DeprecationWarning, match="llm"):
        assert make_scientist("causalab", "react", model="scripted").agent == "llm"


def test_causalab_episode_record() -> None:
    lab = make("causalab", suite="3nodes", index=0, seed=1)
    record = run_episode(lab, make_scientist(lab, "reference"))
    assert (record.env, record.family, record.scientist, record.seed) == (
        "causalab",
        "causalab",
        "reference",
        1,
    )
    assert record.scores["success"] == 1.0 and record.scores["shd"] == 0.0
    assert record.steps > 0 and record.health.failed_steps == 0
    assert record.detail["success"] and record.family_record().success
    data = json.loads(json.dumps(record.to_event()))
    assert EpisodeRecord.from_event(data) == record


def test_boxinggym_episode_record_and_health_of_a_failing_model() -> None:
    env = make("boxinggym/death_process", seed=2)
    model = load_model("scripted", fn=lambda r: "no tags at all")
    record = run_episode(
        env, make_scientist(env, "llm", model=model), steps=2, checkpoints=(0, 2), regret=False
    )
    assert record.env == "boxinggym/death_process" and record.scientist == "llm"
    # 2 experiment steps and 2 checkpoints whose every answer was unparseable (degraded)
    assert record.steps == 2 and record.health.steps == 4
    assert record.health.parse_failures == 4 and record.health.all_failed
    assert record.health.sample_reply and record.usage["calls"] > 0
    assert math.isnan(record.scores["regret"]) and set(record.scores) >= {"before", "after"}
    assert record.detail["skipped_steps"] == [0, 1]


def test_seed_resets_the_environment() -> None:
    lab = make("causalab", suite="3nodes", index=0, seed=1)
    record = run_episode(lab, make_scientist(lab, "random", seed=3), seed=5)
    assert record.seed == 5 and lab.seed == 5
