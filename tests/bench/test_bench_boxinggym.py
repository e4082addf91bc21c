"""The BoxingGym benchmark: rows beside the paper's numbers, resume, LLM agent."""

from __future__ import annotations

import json
import math

import pytest

from silicolab.bench.boxinggym import (
    ENV_GOALS,
    PRIOR_ONLY,
    PUBLISHED,
    _with_published,
    find_anchor,
    published_table,
    run_boxinggym_bench,
)
from silicolab.core.errors import InputError
from silicolab.llm import load_model
from silicolab.runs import Run

SMALL = {"n_candidates": 20, "n_outer": 150, "n_inner": 150, "n_posterior": 400}
FAST = {"steps": 3, "regret_random": 20, "regret_nmc": (150, 150)}


def _events(run: Run) -> list[dict]:
    lines = run.events_path.read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_published_tables_are_data() -> None:
    table = published_table()
    assert len(ENV_GOALS) == 13 and len(PRIOR_ONLY) == 3
    gpt = table[(table.agent == "gpt-4o") & (table.metric != "regret")]
    assert len(gpt) == 13 * 3 - 3  # three parameter goals have no communication column
    assert find_anchor("peregrines", "direct", "gpt-4o", "before") == 2.29
    assert find_anchor("death_process", "direct", "box", "after") == -1.02
    assert find_anchor("location_finding", "direct", "gpt-4o", "regret", prior=False) == 11.8
    assert math.isnan(find_anchor("lotka_volterra", "direct", "gpt-4o", "regret"))
    assert all(a.note for a in PUBLISHED if a.env == "location_finding" and a.metric == "regret")
    # accuracy goals: fixed mode standardizes the error, the paper's 1 - z is shifted by -1
    # (survival's fixed-mode scores are not comparable: tests/bench/test_boxinggym_comparable.py)
    row = _with_published({"env": "moral_machines", "goal": "direct"}, True, "fixed")
    assert row["paper_after"] == pytest.approx(0.44 - 1) and row["paper_shift"] == -1
    row = _with_published({"env": "survival", "goal": "direct"}, True, "faithful")
    assert row["paper_after"] == 0.27 and row["paper_regret"] == 0.084
    row = _with_published({"env": "dugongs", "goal": "direct"}, False, "faithful")
    assert math.isnan(row["paper_before"]) and row["paper_regret"] == 0.17


def test_reference_rows_and_resume(tmp_path) -> None:
    run = Run.create(tmp_path, kind="bench", slug="boxinggym")
    pairs = [("death_process", "direct"), ("death_process", "infection")]
    table = run_boxinggym_bench(pairs, "reference", seeds=2, jobs=2, run=run, options=SMALL, **FAST)
    assert list(zip(table.env, table.goal, strict=True)) == pairs
    row = table.iloc[0]
    assert row["seeds"] == 2 and row["errors"] == 0 and row["skipped_steps"] == 0
    assert row["after"] < 0 and row["regret"] < 0.1 and not math.isnan(row["regret_ci"])
    assert math.isnan(row["after_comm"])
    # fixed mode: the death question names its time, the regret uses the fixed estimator
    assert math.isnan(row["paper_before"]) and math.isnan(row["box_after"])
    infection = table.iloc[1]
    assert math.isnan(infection["paper_regret"]) and infection["paper_after"] == 1.64
    events = _events(run)
    assert len(events) == 4 and all(e["status"] == "ok" for e in events)
    record = events[0]["data"]["record"]
    assert record["schema_version"] == "1" and len(record["regret"]) == 3

    again = run_boxinggym_bench(
        pairs[:1],
        "reference",
        seeds=[1, 2, 3],
        jobs=1,
        run=Run.open(run.path),
        options=SMALL,
        **FAST,
    )
    assert len(_events(run)) == 5  # only seed 3 ran
    assert again.iloc[0]["seeds"] == 3


def test_random_agent_in_process_without_regret() -> None:
    table = run_boxinggym_bench(
        ["dugongs"], "random", seeds=1, jobs=1, regret=False, options={"n_posterior": 400}, steps=2
    )
    row = table.iloc[0]
    assert (row["env"], row["goal"], row["label"]) == ("dugongs", "direct", "Dugongs / Length")
    assert row["errors"] == 0 and math.isnan(row["regret"])
    assert row["paper_after"] == -0.09


def test_llm_agent_with_communication() -> None:
    def reply(request) -> str:
        last = request.messages[-1]["content"]
        if "<answer>your answer</answer>" in last:
            return "<answer>9</answer>"
        if "explain" in last.lower():
            return "Infections grow quickly at first and then saturate near 40."
        return "<thought>spread out</thought><observe>0.8</observe>"

    model = load_model("scripted:gpt-4o-double", fn=reply)
    table = run_boxinggym_bench(
        ["death_process"], "llm", model=model, seeds=2, jobs=2, communicate=True, **FAST
    )
    row = table.iloc[0]
    assert row["errors"] == 0 and row["seeds"] == 2 and not math.isnan(row["after_comm"])
    assert row["model"] == model.spec and row["llm_calls"] > 0
    by_tag = table.attrs["usage"]["by_tag"]
    assert by_tag["novice"]["calls"] == 2 * 10 and by_tag["scientist"]["calls"] > 0


def test_bad_arguments() -> None:
    with pytest.raises(InputError, match="agent"):
        run_boxinggym_bench("all", "oracle")
    with pytest.raises(InputError, match="model"):
        run_boxinggym_bench("all", "llm")
    with pytest.raises(InputError, match="novice"):
        run_boxinggym_bench("all", "reference", communicate=True)
    with pytest.raises(InputError, match="envs"):
        run_boxinggym_bench("dugongs", "reference")
