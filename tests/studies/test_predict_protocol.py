"""The paper's prediction protocol (§4): the rows the fit used, every condition by default,
the theory benchmark, and a record that names the scientist model in strict JSON."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from silicolab.core.errors import InputError
from silicolab.llm import load_model
from silicolab.runs import Run
from silicolab.scm import estimate_paths
from silicolab.studies import load_example
from silicolab.studies.fit import fit_study, scm_variables
from silicolab.studies.pipeline import StudyOptions
from silicolab.studies.predict import apredict, mechanical_loo, predict
from silicolab.studies.scripted import step_of
from silicolab.studies.study import run_study

from .synthetic import synthetic_auction

BUDGETS = ["budget_1", "budget_2", "budget_3"]


def _refuse_constant(name: str) -> float:
    raise AssertionError(f"the record holds {name}, which strict JSON parsers refuse")


def strict(record: dict) -> dict:
    """The record as a strict parser reads it (``NaN``/``Infinity`` are refused)."""
    return json.loads(json.dumps(record), parse_constant=_refuse_constant)


def budgets_in(prompt: str) -> dict[str, float]:
    """The treatments a prediction prompt shows (``- budget_1: $150``); the last of each
    (the LOO prompt lists the fit's coefficients first, the run's treatments last)."""
    found = re.findall(r"^- (budget_\d): \$(\d+)\s*$", prompt, flags=re.M)
    return {name: float(value) for name, value in found}


class Scientist:
    """A scripted scientist that logs every request: predict-y answers the highest budget,
    the LOO the mean budget, predict-β a fixed guess per path."""

    def __init__(self, bad: set[str] | None = None) -> None:
        self.seen: list[tuple[str, str, str, float | None]] = []
        self.bad = bad or set()
        self.model = load_model("scripted:protocol-scientist", fn=self.reply)

    def reply(self, request) -> str:
        step, subject, prompt = step_of(request)
        self.seen.append((step, subject, prompt, request.temperature))
        if subject in self.bad:
            return "I would rather not say."
        if step == "predict_beta":
            paths = re.findall(r"^- (\w+ -> \w+)\s*$", prompt, flags=re.M)
            guesses = [{"path": p, "estimate": 0.5, "significant": True} for p in paths]
            return json.dumps({"explanation": "guess", "paths": guesses})
        budgets = budgets_in(prompt)
        value = (
            max(budgets.values()) if step == "predict_y" else float(np.mean([*budgets.values()]))
        )
        return json.dumps({"explanation": "guess", "prediction": value})

    def subjects(self, step: str) -> list[str]:
        return [s for st, s, _, _ in self.seen if st == step]


def capped_study(n: int = 48, seed: int = 3) -> tuple:
    """The synthetic auction with every fourth run stopped by the statement cap, whose
    price is far off (so any capped row that leaks in changes every number)."""
    hypothesis, data, _ = synthetic_auction(n, seed)
    data["stop_reason"] = np.where(np.arange(n) % 4 == 1, "cap", "coordinator")
    data.loc[data.stop_reason == "cap", "final_price"] += 5000.0
    data["n_statements"] = 10
    fit = fit_study(hypothesis, data, drop_capped=True, alternatives=False).main
    return hypothesis, data, fit


def loo_ols(data: pd.DataFrame) -> np.ndarray:
    """Leave-one-out OLS predictions of final_price, refitting without each row."""
    x = np.column_stack([np.ones(len(data)), data[BUDGETS].to_numpy(float)])
    y = data["final_price"].to_numpy(float)
    out = np.empty(len(data))
    for i in range(len(data)):
        keep = np.arange(len(data)) != i
        beta, *_ = np.linalg.lstsq(x[keep], y[keep], rcond=None)
        out[i] = x[i] @ beta
    return out


async def test_drop_capped_reaches_every_prediction_task() -> None:
    hypothesis, data, fit = capped_study()
    kept = data[data.stop_reason != "cap"].reset_index(drop=True)
    assert fit.n == len(kept) == 36
    sci = Scientist()
    got = await apredict(hypothesis, data, fit, sci.model, drop_capped=True, seed=1)
    ids = list(kept.condition_id)
    assert (got.rows, got.dropped_capped, got.drop_capped) == (36, 12, True)
    assert sorted(sci.subjects("predict_y")) == sorted(ids)
    assert sorted(sci.subjects("predict_loo")) == sorted(ids)
    assert got.calls == {"predict_y": 36, "predict_beta": 1, "loo_llm": 36}
    table = got.table.set_index("condition_id")
    assert sorted(table.index) == sorted(ids)
    # the mechanical LOO is an independent refit without each uncapped row
    expected = pd.Series(loo_ols(kept), index=kept.condition_id)
    np.testing.assert_allclose(table.loc[ids, "loo_mechanical"], expected.loc[ids], atol=1e-9)
    observed = kept.set_index("condition_id").final_price.loc[ids]
    assert got.mse["loo_mechanical"] == pytest.approx(np.mean((observed - expected.loc[ids]) ** 2))
    highest = kept.set_index("condition_id")[BUDGETS].max(axis=1).loc[ids]
    assert got.mse["predict_y"] == pytest.approx(np.mean((observed - highest) ** 2))
    # the LOO prompt shows the refit on the other 35 uncapped runs
    loo_prompt = next(p for st, _, p, _ in sci.seen if st == "predict_loo")
    assert "model to 35 other runs" in loo_prompt
    # predict-β: its data summary and n are those of the uncapped runs
    (beta_prompt,) = [p for st, _, p, _ in sci.seen if st == "predict_beta"]
    assert "ran 36 conditions" in beta_prompt
    mean, sd = kept.budget_1.mean(), kept.budget_1.std()
    assert f"- budget_1: {mean:.4g}, {sd:.4g}" in beta_prompt
    rows = {r["rhs"]: r for r in got.paths}
    assert rows["budget_1"]["estimate"] == pytest.approx(fit.coefficient("final_price", "budget_1"))
    # the mechanical LOO alone, given the option, drops the same rows
    loo, fits = mechanical_loo(hypothesis, data, drop_capped=True)
    assert len(loo) == len(fits) == 36
    np.testing.assert_allclose(loo.loc[ids], expected.loc[ids], atol=1e-9)


def test_a_fit_of_other_rows_is_refused() -> None:
    hypothesis, data, fit = capped_study()
    with pytest.raises(InputError, match=r"the fit used 36 rows .* scored on 48"):
        predict(hypothesis, data, fit, None, tasks=("loo_mechanical",))
    with pytest.raises(InputError, match="stop_reason"):
        predict(
            hypothesis,
            data.drop(columns="stop_reason"),
            fit,
            None,
            tasks=("loo_mechanical",),
            drop_capped=True,
        )
    everything = fit_study(hypothesis, data, alternatives=False).main
    got = predict(hypothesis, data, everything, None, tasks=("loo_mechanical",))
    assert (got.rows, got.dropped_capped) == (48, 0)


async def test_every_condition_by_default_and_a_seeded_sample_on_request() -> None:
    hypothesis, data, fit = synthetic_auction(40, 2)
    sci = Scientist()
    every = await apredict(hypothesis, data, fit, sci.model, tasks=("y", "loo"))
    assert every.sample is None and every.rows == 40
    assert every.llm_conditions == list(data.condition_id)
    assert every.calls == {"predict_y": 40, "predict_beta": 0, "loo_llm": 40}
    assert every.mse["loo_mechanical_subset"] == pytest.approx(every.mse["loo_mechanical"])

    runs = [
        await apredict(hypothesis, data, fit, sci.model, conditions=9, seed=s, tasks=("y",))
        for s in (4, 4, 5)
    ]
    first, again, other = (r.llm_conditions for r in runs)
    assert len(first) == 9 and first == again and first != other
    assert set(first) <= set(data.condition_id)
    assert first == [c for c in data.condition_id if c in first]  # kept in table order
    assert runs[0].calls["predict_y"] == 9 and runs[0].sample == 9
    picked = runs[0].table.set_index("condition_id").predict_y
    assert sorted(picked.dropna().index) == sorted(first)
    with pytest.warns(DeprecationWarning, match="conditions="):
        old = await apredict(hypothesis, data, fit, sci.model, max_conditions=9, seed=4, tasks=())
    assert old.sample == 9
    with pytest.raises(InputError, match="not both"):
        await apredict(hypothesis, data, fit, sci.model, conditions=3, max_conditions=3)
    with pytest.raises(InputError, match="at least 1"):
        await apredict(hypothesis, data, fit, sci.model, conditions=0)


async def test_the_record_names_the_model_and_is_strict_json() -> None:
    hypothesis, data, fit = capped_study()
    data.loc[0, "final_price"] = np.nan  # an incomplete row is left out, not a NaN row
    fit = fit_study(hypothesis, data, drop_capped=True, alternatives=False).main
    ids = list(data[(data.stop_reason != "cap") & data.final_price.notna()].condition_id)
    sci = Scientist(bad=set(ids[:3]))  # three answers stay invalid: NaN predictions
    got = await apredict(
        hypothesis, data, fit, sci.model, drop_capped=True, temperature=0.3, seed=2
    )
    assert {t for *_, t in sci.seen} == {0.3}
    record = strict(got.to_dict())
    assert record["model"] == "scripted:protocol-scientist" == sci.model.spec
    assert record["temperature"] == 0.3 and record["seed"] == 2
    assert (record["rows"], record["drop_capped"], record["dropped_capped"]) == (35, True, 12)
    assert record["sample"] is None and len(record["llm_conditions"]) == 35
    by_id = {r["condition_id"]: r for r in record["conditions"]}
    assert all(by_id[c]["predict_y"] is None for c in ids[:3])
    assert all(isinstance(by_id[c]["predict_y"], float) for c in ids[3:])
    assert record["health"]["parse_failures"] == 6  # predict-y and the LOO of each
    assert record["schema_version"] == 2 and record["skipped"] == {}
    mechanical = await apredict(
        hypothesis, data, fit, None, tasks=("loo_mechanical",), drop_capped=True
    )
    assert strict(mechanical.to_dict())["model"] is None


def test_strict_json_when_a_refit_is_not_estimable() -> None:
    """budget_3 is $350 in one condition and $50 in every other: the full fit is estimable,
    but the refit without that condition has a constant regressor, so its LOO prediction
    is missing (null in the record) and the MSE is over the others."""
    hypothesis, data, _ = synthetic_auction(30, 4)
    data["budget_3"] = 50.0
    data.loc[7, "budget_3"] = 350.0
    fit = estimate_paths(data, hypothesis.equations(), variables=scm_variables(hypothesis))
    got = predict(hypothesis, data, fit, None, tasks=("loo_mechanical",))
    record = strict(got.to_dict())
    missing = [r["condition_id"] for r in record["conditions"] if r["loo_mechanical"] is None]
    assert missing == [data.condition_id[7]]
    expected = loo_ols(data.drop(index=7).reset_index(drop=True))
    observed = data.drop(index=7).final_price.to_numpy()
    assert record["mse"]["loo_mechanical"] == pytest.approx(np.mean((observed - expected) ** 2))


@pytest.mark.parametrize("price_rule", ["second_dropout", "next_increment"])
def test_the_theory_benchmark_on_the_rule_auction(tmp_path, price_rule: str) -> None:
    hypothesis = load_example("auction")
    assert hypothesis.theory == "second_highest_budget"
    options = StudyOptions(
        subjects="rule",
        conditions=30,
        seed=7,
        predict=True,
        rule_options={"price_rule": price_rule},
    )
    run = Run.create(tmp_path / "runs", kind="study", slug="auction")
    record = run_study(hypothesis, options, run=run)
    table = pd.read_csv(run.path / "data.csv")
    assert len(table) == 30
    fit = fit_study(hypothesis, table, alternatives=False).main
    sci = Scientist()
    got = predict(hypothesis, table, fit, sci.model, seed=7)
    assert record["study"] == "auction" and got.theory == "second_highest_budget"

    # independently: theory's price is the second-highest budget
    rows = table.set_index("condition_id")
    theory = pd.Series(np.sort(rows[BUDGETS].to_numpy(float), axis=1)[:, 1], index=rows.index)
    observed = rows.final_price
    highest = rows[BUDGETS].max(axis=1)
    mean = rows[BUDGETS].mean(axis=1)
    mechanical = pd.Series(loo_ols(table), index=rows.index)
    out = got.table.set_index("condition_id")
    np.testing.assert_array_equal(out.theory.loc[rows.index], theory)
    assert got.mse["theory"] == pytest.approx(np.mean((observed - theory) ** 2), abs=1e-9)
    assert got.mse["predict_y_theory"] == pytest.approx(np.mean((highest - theory) ** 2))
    assert got.mse["loo_llm_theory"] == pytest.approx(np.mean((mean - theory) ** 2))
    assert got.mse["loo_mechanical_theory"] == pytest.approx(np.mean((mechanical - theory) ** 2))
    assert got.mse["predict_y"] == pytest.approx(np.mean((observed - highest) ** 2))
    # the study's own predictions (no scientist model: the mechanical LOO) carry it too
    stored = strict(record)["predictions"]
    assert stored["model"] is None and stored["theory"] == "second_highest_budget"
    assert stored["mse"]["theory"] == pytest.approx(got.mse["theory"], abs=1e-9)
    assert stored["mse"]["loo_mechanical_theory"] == pytest.approx(got.mse["loo_mechanical_theory"])
    if price_rule == "second_dropout":  # truthful bidders clear at theory's price
        assert got.mse["theory"] == 0.0
    else:  # one increment above it, capped at the highest budget
        above = np.minimum(theory + 50.0, highest)
        np.testing.assert_allclose(observed, above)
        assert (
            got.mse["theory"] == pytest.approx(np.mean((above - theory) ** 2))
            and got.mse["theory"] > 0
        )
    # beta_summary is as before: no theory in it
    assert set(got.beta_summary) == {
        "mean_abs_error",
        "share_sign_correct",
        "share_significance_correct",
        "mean_ratio",
        "share_overestimates",
    }
    strict(got.to_dict())


def test_a_study_without_a_theory_has_no_theory_scores() -> None:
    hypothesis, data, fit = synthetic_auction(20, 1)
    plain = hypothesis.model_copy(update={"theory": None})
    got = predict(plain, data, fit, None, tasks=("loo_mechanical",))
    assert got.theory is None and "theory" not in got.table
    assert not any(k.startswith("theory") or k.endswith("_theory") for k in got.mse)


async def test_a_nominal_outcome_skips_what_has_no_squared_error() -> None:
    """A nominal outcome is fitted as indicator equations: predict-β asks for each of
    their paths; predict-y and the LOOs are skipped with the reason, and nothing crashes."""
    base = load_example("mug")
    levels = ["no deal", "deal at the seller's price", "deal at the buyer's price"]
    outcome = base.outcome.model_copy(update={"type": "nominal", "levels": levels})
    variables = [outcome, *(v for v in base.variables if v.role != "outcome")]
    hypothesis = type(base).model_validate(
        base.model_dump() | {"variables": [v.model_dump() for v in variables]}
    )
    gen = np.random.default_rng(0)
    n = 60
    data = pd.DataFrame(
        {
            "condition_id": [f"c{i}" for i in range(n)],
            "buyer_budget": gen.choice([3.0, 10.0, 25.0], n),
            "seller_min_price": gen.choice([3.0, 10.0, 25.0], n),
            "seller_attachment": gen.integers(1, 6, n).astype(float),
            "deal": gen.choice(levels, n),
            "stop_reason": "coordinator",
        }
    )
    fit = estimate_paths(data, hypothesis.equations(), variables=scm_variables(hypothesis))
    sci = Scientist()
    got = await apredict(hypothesis, data, fit, sci.model)
    assert set(got.skipped) == {"y", "loo"}
    assert all("nominal" in reason for reason in got.skipped.values())
    assert got.calls == {"predict_y": 0, "predict_beta": 1, "loo_llm": 0}
    assert got.llm_conditions == [] and sci.subjects("predict_y") == []
    assert {"predict_y", "loo_mechanical", "loo_llm"}.isdisjoint(got.table.columns)
    indicator = fit.table[fit.table.op == "~"]
    assert len(got.paths) == len(indicator) == 6
    assert {r["lhs"] for r in got.paths} == set(indicator.lhs)
    record = strict(got.to_dict())
    assert record["mse"] == {} and record["rows"] == n
    assert sorted({r["observed"] for r in record["conditions"]}) == sorted(levels)
    with pytest.raises(InputError, match="nominal"):
        mechanical_loo(hypothesis, data)


def test_replicates_are_one_row_each_keyed_by_their_run() -> None:
    """Two replicates of each condition: every run is a row of its own (LOO leaves out one
    run), keyed like the events (``<condition>/r1``); duplicates without a replicate
    column are refused."""
    hypothesis, data, _ = synthetic_auction(15, 6)
    second = data.assign(replicate=1, final_price=data.final_price + 7.0)
    both = pd.concat([data.assign(replicate=0), second], ignore_index=True)
    fit = estimate_paths(both, hypothesis.equations(), variables=scm_variables(hypothesis))
    got = predict(hypothesis, both, fit, None, tasks=("loo_mechanical",))
    table = got.table
    assert got.rows == 30 and list(table.unit_id[15:]) == [f"{c}/r1" for c in data.condition_id]
    assert list(table.condition_id) == list(both.condition_id)
    np.testing.assert_allclose(table.loo_mechanical, loo_ols(both), atol=1e-9)
    with pytest.raises(InputError, match="several rows"):
        predict(hypothesis, both.drop(columns="replicate"), fit, None, tasks=("loo_mechanical",))
