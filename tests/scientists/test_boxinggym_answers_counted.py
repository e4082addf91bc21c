"""BoxingGym answers are counted per checkpoint, and a model error keeps what finished."""

from __future__ import annotations

import json
import math
from typing import Any

from tests.scientists.boxinggym_episodes import episode

from silicolab.bench.boxinggym import run_boxinggym_bench
from silicolab.envs import make
from silicolab.envs.boxinggym import parsing
from silicolab.llm import load_model
from silicolab.scientists import make_scientist, run_episode
from silicolab.scientists.boxinggym import BoxingRecord, LLMScientist


def test_a_timestamp_is_not_an_answer() -> None:
    for text in ("2024-03-16", "03/16/2024", "at 10:15:03", "2024-03-16T10:15:03"):
        assert parsing.last_number(text) is None, text
    assert parsing.last_number("checked at 10:15, I say 42") == 42.0
    assert parsing.last_number("k = 0.25") == 0.25
    death = make("boxinggym/death_process", seed=1)
    assert death.goal.parse_answer("2024-03-16 10:15") is None
    assert death.goal.parse_answer("about 31 people") == 31


class OneOfTen:
    """A scientist that observes t = 0.8 and answers only the first question it is asked
    at every checkpoint with a number; the other answers are timestamps."""

    def __init__(self, fail_after_checkpoints: int | None = None) -> None:
        self.asked = 0
        self.fail_after = fail_after_checkpoints

    def reply(self, request: Any) -> str:
        last = request.messages[-1]["content"]
        if "<answer>your answer</answer>" in last:
            self.asked += 1
            if self.fail_after is not None and self.asked > 10 * self.fail_after:
                raise RuntimeError("the provider is down")
            return "<answer>12</answer>" if self.asked % 10 == 1 else "<answer>10:15:03</answer>"
        return "<thought>late</thought><observe>0.8</observe>"


def test_a_checkpoint_resting_on_one_answer_of_ten_is_degraded_not_scored() -> None:
    model = load_model("scripted", fn=OneOfTen().reply)
    env = make("boxinggym/death_process", seed=1)
    record = run_episode(
        env, make_scientist(env, "llm", model=model), steps=1, checkpoints=(0, 1), regret=False
    )
    detail = BoxingRecord.from_dict(record.detail)
    for score in detail.scores:
        assert score.n_unparsed == 9 and score.degraded
        assert score.standardized is None and score.raw is None  # NaN, stored as null
    # before the fix: a score from the single parsed answer, and a healthy unit
    assert math.isnan(record.scores["before"]) and math.isnan(record.scores["after"])
    assert record.health.parse_failures == 2 and record.health.steps == 1 + 2
    assert record.health.all_failed and record.health.sample_reply == "10:15:03"
    stored = json.loads(json.dumps(record.to_event()))["record"]["scores"][0]
    assert stored["standardized"] is None and stored["degraded"] is True


def test_a_checkpoint_with_half_its_answers_parsed_is_scored() -> None:
    def reply(request: Any) -> str:
        last = request.messages[-1]["content"]
        if "<answer>your answer</answer>" in last:
            reply.n += 1  # type: ignore[attr-defined]
            return "<answer>12</answer>" if reply.n % 2 else "<answer>2024-03-16</answer>"  # type: ignore[attr-defined]
        return "<observe>0.8</observe>"

    reply.n = 0  # type: ignore[attr-defined]
    record = episode(
        "death_process", LLMScientist(load_model("scripted", fn=reply)), steps=1,
        checkpoints=(1,), regret=False,
    )  # fmt: skip
    score = record.scores[0]
    assert score.n_unparsed == 5 and not score.degraded and score.n == 5
    assert math.isfinite(score.standardized)


def test_a_model_error_keeps_the_finished_checkpoints() -> None:
    script = OneOfTen(fail_after_checkpoints=1)
    model = load_model("scripted", fn=lambda r: _down(script, r), max_retries=0)
    record = episode(
        "death_process", LLMScientist(model), seed=2, steps=3, checkpoints=(0, 1, 3),
        regret=True,
    )  # fmt: skip
    # before the fix the error escaped and the episode's record was lost
    assert record.partial and "provider is down" in record.model_error
    assert [s.n_experiments for s in record.scores] == [0]
    assert len(record.outcomes) == 1 and record.regret is None
    summary = record.summary()
    assert summary["health"]["model_errors"] == 1 and summary["health"]["unusable"]
    again = BoxingRecord.from_dict(json.loads(json.dumps(record.to_dict())))
    assert again.model_error == record.model_error and len(again.scores) == 1


def _down(script: OneOfTen, request: Any) -> str:
    from silicolab.core.errors import LLMError

    try:
        return script.reply(request)
    except RuntimeError as err:
        raise LLMError(str(err)) from None


def test_bench_rows_count_unparsed_answers_and_leave_degraded_checkpoints_out() -> None:
    model = load_model("scripted:gpt-4o-double", fn=OneOfTen().reply)
    table = run_boxinggym_bench(
        ["death_process"], "llm", model=model, seeds=1, jobs=1, steps=1, regret=False
    )
    row = table.iloc[0]
    assert row["unparsed_answers"] == 2 * 9 and row["degraded_checkpoints"] == 2
    assert math.isnan(row["before"]) and math.isnan(row["after"])
    assert table.attrs["health"].degraded
