"""BoxingGym rows: the paper's numbers only where they measure the same thing, and notes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from silicolab.bench.boxinggym import _with_published, run_boxinggym_bench
from silicolab.envs import make
from silicolab.report.bench import boxinggym_view


def _row(env: str, goal: str, fidelity: str, prior: bool = True) -> dict:
    return _with_published({"env": env, "goal": goal}, prior, fidelity)


def test_fixed_mastectomy_and_death_scores_are_not_printed_beside_the_paper() -> None:
    # before: fixed mode printed the paper's 0.27 - 1 and 1.19 beside other scales
    survival = _row("survival", "direct", "fixed")
    assert math.isnan(survival["paper_after"]) and math.isnan(survival["box_before"])
    assert "1 - exp(-hazard)" in survival["paper_not_comparable"]
    death = _row("death_process", "direct", "fixed")
    assert math.isnan(death["paper_before"]) and "names the time" in death["paper_not_comparable"]
    faithful = _row("survival", "direct", "faithful")
    assert faithful["paper_after"] == 0.27 and faithful["paper_regret"] == 0.084
    assert faithful["paper_not_comparable"] == ""
    assert _row("death_process", "direct", "faithful")["paper_before"] == 1.19
    # a goal fixed mode leaves on the paper's scale keeps its scores (accuracy shift: -1)
    hyperbolic = _row("hyperbolic_temporal_discount", "direct", "fixed")
    assert hyperbolic["paper_after"] == pytest.approx(0.74 - 1)


def test_fixed_regret_is_not_printed_beside_the_published_estimator() -> None:
    for env, goal in (("death_process", "direct"), ("dugongs", "direct")):
        row = _row(env, goal, "fixed", prior=False)
        assert math.isnan(row["paper_regret"]) and "regret: " in row["paper_not_comparable"]
        assert "0.0375" in row["paper_not_comparable"]
    assert _row("dugongs", "direct", "faithful", prior=False)["paper_regret"] == 0.17


def test_the_discount_goal_cannot_tell_answers_apart_and_the_row_says_so() -> None:
    spread = []
    for seed in range(1, 6):
        env = make("boxinggym/hyperbolic_temporal_discount", goal="discount", seed=seed)
        questions = env.goal.questions(1, np.random.default_rng(0))
        k = questions[0].truth
        scores = [env.goal.score([a], questions).standardized for a in (k, 0.0, 0.1, 10 * k)]
        assert scores[0] == pytest.approx(-0.058, abs=5e-4)
        spread.append(max(scores) - min(scores))
    assert max(spread) < 0.03  # a tenfold error moves the score by under 0.03
    note = _row("hyperbolic_temporal_discount", "discount", "fixed")["note"]
    assert note.startswith("cannot discriminate answers")
    assert _row("dugongs", "direct", "fixed")["note"] == ""


def test_the_bench_table_carries_the_reasons() -> None:
    table = run_boxinggym_bench(
        [("death_process", "direct"), ("hyperbolic_temporal_discount", "discount")],
        "reference", seeds=1, jobs=1, steps=1, regret=False,
    )  # fmt: skip
    death, discount = table.iloc[0], table.iloc[1]
    assert math.isnan(death["paper_before"]) and "names the time" in death["paper_not_comparable"]
    assert discount["note"].startswith("cannot discriminate") and discount["unparsed_answers"] == 0
    report = boxinggym_view("reference", False, table).markdown(table)
    assert "- paper before/after/after_comm not shown (death_process/direct): fixed" in report
    assert "- hyperbolic_temporal_discount/discount: cannot discriminate answers" in report
    assert report.count("paper regret not shown") == 1
