"""BoxingGym rows say where each paper number comes from and why an empty one is empty
(issue 25): per-cell provenance like the other benches, a mark on the numbers put on our
scale, withheld numbers told apart from numbers the paper does not have, and the emotion
goal's fixed-mode scores withheld beside the paper's."""

from __future__ import annotations

import math

import numpy as np
import pytest

from silicolab.bench.anchors import ROW_KEY
from silicolab.bench.boxinggym import _with_published, run_boxinggym_bench
from silicolab.bench.harness import null_reasons
from silicolab.cli.bench._run import table_rows
from silicolab.envs import make
from silicolab.envs.boxinggym.emotion._model import EMOTIONS
from silicolab.report.bench import boxinggym_view

HAPPINESS, SADNESS = EMOTIONS.index("happiness"), EMOTIONS.index("sadness")


def _row(env: str, goal: str, fidelity: str, prior: bool = True) -> dict:
    return _with_published({"env": env, "goal": goal}, prior, fidelity)


def _nulls(row: dict) -> dict:
    """The row as strict JSON writes it (NaN -> None) and the reasons for its nulls."""
    return null_reasons({k: None if isinstance(v, float) and math.isnan(v) else v
                         for k, v in row.items()})  # fmt: skip


def test_each_paper_cell_names_its_table_cell() -> None:
    row = _row("dugongs", "direct", "faithful")
    prov = row[ROW_KEY]
    assert prov["paper_after"] == {
        "kind": "table", "where": "Table 1, row dugongs/direct, col gpt-4o after",
        "source": "paper", "low": -0.09, "high": None,
    }  # fmt: skip
    assert prov["box_before"]["where"] == "Table 2, row dugongs/direct, col box before"
    assert prov["paper_regret"]["where"] == "Table 3, row dugongs/direct, col gpt-4o regret"
    # every number printed beside ours has a provenance; an empty cell has none
    shown = {c for c, v in row.items() if c.startswith(("paper_", "box_"))
             and isinstance(v, float) and not math.isnan(v)} - {"paper_shift"}  # fmt: skip
    assert shown == set(prov)


def test_a_number_put_on_our_scale_is_derived_and_marked_in_the_printed_table() -> None:
    # before: the shifted -0.26 printed as if it were the paper's cell (the paper has 0.74)
    row = _row("hyperbolic_temporal_discount", "direct", "fixed")
    prov = row[ROW_KEY]["paper_after"]
    assert prov["kind"] == "derived" and prov["low"] == -0.26
    assert prov["where"].startswith("Table 1, row hyperbolic_temporal_discount/direct")
    assert "minus 1" in prov["where"]
    assert row["box_before"] == -0.34  # 0.66 - 1, not -0.33999999999999997
    assert (
        _row("hyperbolic_temporal_discount", "direct", "faithful")[ROW_KEY]["paper_after"]["kind"]
        == "table"
    )
    table = run_boxinggym_bench(
        [("hyperbolic_temporal_discount", "direct"), ("dugongs", "direct")],
        "reference", seeds=1, jobs=1, steps=1, regret=False,
    )  # fmt: skip
    report = boxinggym_view("reference", False, table).markdown(table)
    assert "| -0.69‡ |" in report and "| -0.26‡ |" in report
    assert "| 0.06 |" in report  # dugongs' before: a table cell, unmarked
    assert "‡ computed from a table cell" in report
    assert "paper columns marked ‡ (hyperbolic_temporal_discount/direct)" in report


def test_an_empty_paper_cell_says_whether_it_is_withheld_or_absent() -> None:
    # before: every empty paper cell said "the published tables have no value for this row",
    # also where the paper has a number and the bench withholds it
    reasons = _nulls(_row("survival", "direct", "fixed"))
    after = reasons["paper_after"]
    assert after.startswith("withheld: the paper prints 0.27 here (Table 1, row survival/direct")
    assert "1 - exp(-hazard)" in after
    assert "docs/boxinggym.md, 'Not comparable with the paper (fixed mode)'" in after
    assert reasons["box_before"].startswith("withheld: the paper prints 0.14 here (Table 2")
    assert reasons["paper_regret"].startswith("withheld: the paper prints 0.084 here (Table 3")
    # the paper has no number: Box's Apprentice never ran on the discount goal
    discount = _nulls(_row("hyperbolic_temporal_discount", "discount", "faithful"))
    assert discount["box_after"] == "the published tables have no value for this row"
    assert discount["paper_after_comm"] == "the published tables have no value for this row"
    # the paper has a number we do not hold: its no-prior standardized errors
    no_prior = _nulls(_row("dugongs", "direct", "faithful", prior=False))
    assert no_prior["paper_before"].startswith("not held: the paper's no-prior")
    assert "paper_regret" not in no_prior  # faithful no-prior regret is shown: 0.17


def test_bench_json_rows_carry_the_withheld_reason() -> None:
    table = run_boxinggym_bench(
        [("death_process", "direct")], "reference", seeds=1, jobs=1, steps=1, regret=False
    )
    row = table_rows(table)[0]
    assert row["paper_before"] is None
    assert row["null_reasons"]["paper_before"].startswith("withheld: the paper prints 1.19")
    assert "names the time" in row["null_reasons"]["paper_before"]


def _mean_ratings(fidelity: str) -> np.ndarray:
    truths = []
    for seed in range(1, 41):
        env = make("boxinggym/emotion", seed=seed, fidelity=fidelity)
        truths += [q.truth for q in env.goal.questions(10, np.random.default_rng(seed))]
    return np.asarray(truths, dtype=float).mean(axis=0)


def test_emotion_fixed_scores_are_withheld_because_the_questions_score_other_ratings() -> None:
    # faithful (as published): the truth is the ratings for winning $0-$2, whatever prize the
    # question names; fixed: for the prize named. The scored ratings differ a lot.
    faithful, fixed = _mean_ratings("faithful"), _mean_ratings("fixed")
    assert faithful[HAPPINESS] < 2.5 and fixed[HAPPINESS] > 5.0
    assert faithful[SADNESS] > 4.5 and fixed[SADNESS] < 3.0
    row = _row("emotion", "direct", "fixed")
    assert math.isnan(row["paper_before"]) and math.isnan(row["paper_after"])
    assert "index ($0, $1 or $2)" in row["paper_not_comparable"]
    assert _nulls(row)["paper_after"].startswith("withheld: the paper prints 0.82 here")
    shown = _row("emotion", "direct", "faithful")
    assert shown["paper_after"] == pytest.approx(0.82) and shown["paper_not_comparable"] == ""
