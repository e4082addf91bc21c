"""A study's fit never publishes inference from a degenerate model: not-estimable main
models raise NotEstimable, not-estimable alternatives and interactions are skipped with
their reasons, nested tests run only between estimable models; plus another outcome
column (``fit_study(outcome=...)``) and nominal outcomes, each against statsmodels."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from silicolab.core.errors import InputError
from silicolab.report.html import build_report
from silicolab.report.study_report import study_report
from silicolab.runs import Run
from silicolab.scm import NotEstimable
from silicolab.studies import load_example, make_design
from silicolab.studies.fit import fit_study
from silicolab.studies.hypothesis import Hypothesis
from silicolab.studies.pipeline import StudyOptions
from silicolab.studies.study import run_study

MUG_CAUSES = ["buyer_budget", "seller_min_price", "seller_attachment"]


def _design_table(hypothesis: Hypothesis) -> pd.DataFrame:
    """The full factorial's treatment columns as the study table codes them."""
    rows = [
        {
            "condition_id": c.id,
            **{v.name: v.numeric(c.treatments[v.name]) for v in hypothesis.treatments},
        }
        for c in make_design(hypothesis).conditions
    ]
    return pd.DataFrame(rows)


def _ml_ols(y: pd.Series, x: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """OLS estimates and lavaan's ML standard errors, SE_OLS * sqrt((n - k) / n)."""
    ols = sm.OLS(y, sm.add_constant(x)).fit()
    n, k = len(y), x.shape[1] + 1
    return ols.params, ols.bse * np.sqrt((n - k) / n)


@pytest.fixture(scope="module")
def auction_run(tmp_path_factory) -> tuple[Run, dict]:
    options = StudyOptions(subjects="rule")  # truthful bidders: price = second-highest budget
    with Run.create(tmp_path_factory.mktemp("auction"), kind="study", slug="auction") as run:
        record = run_study(load_example("auction"), options, run=run)
    return run, record


def test_auction_rule_record_has_no_test_from_a_perfect_fit(auction_run) -> None:
    run, record = auction_run
    assert run.status == "finished"
    est = json.loads(json.dumps(record["estimation"], allow_nan=False))  # strict JSON
    skipped = {s["model"]: s["problems"] for s in est["skipped"]}
    perfect = {
        "final_price ~ second_highest_budget",
        "final_price ~ budget_1 + budget_2 + budget_3 + second_highest_budget",
    }
    assert set(skipped) == perfect
    assert all([p["kind"] for p in skipped[m]] == ["perfect_fit"] for m in perfect)
    assert not perfect & set(est["alternatives"])  # no estimates from them are published
    assert len(est["tests"]) == 2
    for test in est["tests"]:
        assert "lr" not in test and "wald" not in test
        assert "perfect_fit" in test["skipped"] and perfect & set(test["models"])
    # the main fit (not a perfect fit) is still there
    assert 0.5 < est["main"]["r2"]["final_price"] < 0.99
    report = study_report(record)
    assert "LR" not in report and "## Models not estimable" in report
    assert "not run: final_price ~ second_highest_budget is not estimable (perfect_fit)" in report
    html = build_report(run.path)
    assert "Models not estimable" in html and "perfect_fit" in html


def test_alternatives_and_tests_when_every_model_is_estimable() -> None:
    # next_increment prices: min(second-highest + 50, highest), not an exact function of
    # the second-highest budget or of the budgets' linear span
    auction = load_example("auction")
    table = _design_table(auction)
    budgets = np.sort(table[["budget_1", "budget_2", "budget_3"]].to_numpy(), axis=1)
    table["final_price"] = np.minimum(budgets[:, 1] + 50.0, budgets[:, 2])
    table["stop_reason"], table["n_statements"] = "closed", 4
    fit = fit_study(auction, table)
    assert fit.skipped == []
    second = pd.Series(budgets[:, 1], name="second_highest_budget")
    causes = table[["budget_1", "budget_2", "budget_3"]]
    y = table.final_price

    def rss(x: pd.DataFrame) -> float:
        return float(sm.OLS(y, sm.add_constant(x)).fit().ssr)

    both = rss(pd.concat([causes, second], axis=1))
    n = len(table)
    lr = {t["name"]: t["lr"]["stat"] for t in fit.tests}
    assert lr["does second_highest_budget add to budget_1, budget_2, budget_3?"] == pytest.approx(
        n * np.log(rss(causes) / both)
    )
    assert lr["do budget_1, budget_2, budget_3 add to second_highest_budget?"] == pytest.approx(
        n * np.log(rss(second.to_frame()) / both)
    )
    params, _ = _ml_ols(y, second.to_frame())
    alone = fit.alternatives["final_price ~ second_highest_budget"]
    assert alone.coefficient("final_price", "second_highest_budget") == pytest.approx(
        params["second_highest_budget"]
    )


def _mug_table(deal: np.ndarray | float, rows: int | None = None) -> pd.DataFrame:
    table = _design_table(load_example("mug"))
    if rows is not None:
        table = table.head(rows)
    table["deal"] = deal if np.isscalar(deal) else deal[: len(table)]
    table["stop_reason"] = "agreement"
    table["n_statements"] = 6
    return table


def test_constant_binary_outcome_is_not_estimable() -> None:
    # the mug reproduction: deal = 1 in all 405 rows
    with pytest.raises(NotEstimable) as info:
        fit_study(load_example("mug"), _mug_table(1.0))
    assert [(p["equation"], p["kind"]) for p in info.value.problems] == [
        ("deal", "no_outcome_variance")
    ]
    assert isinstance(info.value, InputError) and "every complete row is 1" in str(info.value)


def test_as_many_conditions_as_coefficients_is_not_estimable() -> None:
    deal = np.array([0.0, 1.0, 1.0, 0.0])  # 'study run mug --conditions 4'
    with pytest.raises(NotEstimable) as info:
        fit_study(load_example("mug"), _mug_table(deal, rows=4))
    assert [p["kind"] for p in info.value.problems] == ["too_few_rows"]


def test_a_non_estimable_interaction_model_is_skipped_not_raised() -> None:
    mug = load_example("mug")
    gen = np.random.default_rng(3)
    n = 120
    budget = gen.choice([0.0, 3.0, 6.0], n)
    table = pd.DataFrame(
        {
            "buyer_budget": budget,
            # seller_min_price is 5 only when the budget is 0: budget * price == budget
            "seller_min_price": np.where(budget == 0, gen.choice([1.0, 5.0], n), 1.0),
            "seller_attachment": gen.integers(1, 6, n).astype(float),
            "deal": gen.integers(0, 2, n).astype(float),
            "stop_reason": "agreement",
            "n_statements": gen.integers(2, 20, n),
        }
    )
    fit = fit_study(mug, table, interactions=True)
    assert fit.interactions is None
    (skipped,) = fit.skipped
    assert skipped["model"] == "pairwise interactions"
    assert [p["kind"] for p in skipped["problems"]] == ["collinear"]
    (test,) = fit.tests
    assert "lr" not in test and "collinear" in test["skipped"]
    params, ses = _ml_ols(table.deal, table[MUG_CAUSES])
    paths = fit.paths().set_index("rhs")
    assert np.allclose(paths.est, params[MUG_CAUSES]) and np.allclose(paths.se, ses[MUG_CAUSES])


def test_another_outcome_column() -> None:
    mug = load_example("mug")
    gen = np.random.default_rng(9)
    table = _mug_table(gen.integers(0, 2, 405).astype(float))
    table["n_statements"] = gen.integers(2, 21, 405)
    fit = fit_study(mug, table, outcome="n_statements")
    assert fit.outcome == "n_statements" and set(fit.main.table.lhs) == {"n_statements"}
    params, ses = _ml_ols(table.n_statements.astype(float), table[MUG_CAUSES])
    paths = fit.paths().set_index("rhs")
    assert np.allclose(paths.est, params[MUG_CAUSES]) and np.allclose(paths.se, ses[MUG_CAUSES])
    assert fit.to_dict()["outcome"] == "n_statements"
    with pytest.raises(InputError, match=r"'n_statement' cannot be fitted.*'n_statements'"):
        fit_study(mug, table, outcome="n_statement")
    with pytest.raises(InputError, match="'deal'"):  # a cause is no outcome; choices named
        fit_study(mug, table, outcome="buyer_budget")
    with pytest.raises(InputError, match="cannot be fitted"):
        fit_study(mug, table, outcome="stop_reason")


def test_nominal_outcome_is_dummy_coded() -> None:
    data = load_example("mug").to_dict()
    outcome = data["variables"][0]
    outcome.update(type="nominal", levels=["walked_away", "deal", "postponed"], units="")
    mug = Hypothesis.model_validate(data)
    table = _design_table(mug)
    gen = np.random.default_rng(17)
    score = 0.2 * table.buyer_budget - 0.2 * table.seller_min_price + gen.normal(0, 1, len(table))
    table["deal"] = np.select([score > 0.5, score < -0.5], ["deal", "walked_away"], "postponed")
    table["stop_reason"], table["n_statements"] = "agreement", 6
    fit = fit_study(mug, table)
    assert set(fit.main.table.lhs) == {"deal_deal", "deal_postponed"}
    for level in ("deal", "postponed"):
        params, ses = _ml_ols((table.deal == level).astype(float), table[MUG_CAUSES])
        rows = fit.main.table[(fit.main.table.lhs == f"deal_{level}") & (fit.main.table.op == "~")]
        rows = rows.set_index("rhs")
        assert np.allclose(rows.est, params[MUG_CAUSES], atol=1e-12)
        assert np.allclose(rows.se, ses[MUG_CAUSES], rtol=1e-10)


def test_reports_show_a_not_estimable_main_fit(auction_run, tmp_path) -> None:
    run, record = auction_run
    with pytest.raises(NotEstimable) as info:
        fit_study(load_example("mug"), _mug_table(1.0))
    broken = {
        **record,
        "estimation": None,
        "fit_error": str(info.value),
        "fit_problems": info.value.problems,
    }
    report = study_report(broken)
    assert "not estimable" in report and info.value.problems[0]["detail"] in report
    assert "| cause |" not in report and "R²" not in report  # no path table, no fit line
    copy = shutil.copytree(run.path, tmp_path / "copy")
    (copy / "record.json").write_text(json.dumps(broken), encoding="utf-8")
    html = build_report(copy)
    assert "Not estimable" in html and "no_outcome_variance" in html
    assert "Path estimates" not in html
