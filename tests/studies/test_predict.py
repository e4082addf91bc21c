"""Predictions (paper §4) against a synthetic experiment with a known linear truth."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from silicolab.core.errors import InputError
from silicolab.llm import load_model
from silicolab.studies import Hypothesis, load_example
from silicolab.studies.hypothesis import StudyVariable
from silicolab.studies.predict import apredict, mechanical_loo, predict
from silicolab.studies.scripted import step_of

from .synthetic import EFFECTS, synthetic_auction

TRUE = EFFECTS


def synthetic(n: int = 60, seed: int = 1) -> tuple:
    return synthetic_auction(n, seed)


def press_residuals(data: pd.DataFrame) -> np.ndarray:
    """Closed-form leave-one-out residuals of OLS: e_i / (1 - h_ii)."""
    x = np.column_stack([np.ones(len(data)), data[list(TRUE)].to_numpy(float)])
    y = data["final_price"].to_numpy(float)
    hat = x @ np.linalg.solve(x.T @ x, x.T)
    return (y - hat @ y) / (1 - np.diag(hat))


def test_mechanical_loo_equals_the_press_closed_form() -> None:
    hypothesis, data, _ = synthetic()
    data.loc[3, "final_price"] = np.nan  # a missing outcome is left out, not predicted
    loo, fits = mechanical_loo(hypothesis, data)
    complete = data.dropna()
    press = press_residuals(complete)
    assert len(loo) == len(fits) == len(complete)
    residuals = complete.final_price.to_numpy() - loo.loc[complete.condition_id].to_numpy()
    np.testing.assert_allclose(residuals, press, rtol=0, atol=1e-9)
    assert abs(np.mean(residuals**2) - np.mean(press**2)) < 1e-9


def _reply(answers: dict[str, object], seen: list | None = None):
    def reply(request):
        step, subject, prompt = step_of(request)
        if seen is not None:
            seen.append((step, subject, prompt))
        payload = answers[step]
        payload = payload(prompt) if callable(payload) else payload
        return json.dumps({"explanation": f"guess for {step}", **payload})

    return reply


BETA = [
    {"path": "budget_1 -> final_price", "estimate": 0.6, "significant": True},
    {"path": "budget_2 -> final_price", "estimate": -0.25, "significant": True},
    {"path": "budget_3 -> final_price", "estimate": 0.1, "significant": True},
]


def test_predict_beta_is_compared_with_the_fit() -> None:
    hypothesis, data, fit = synthetic()
    model = load_model("scripted", fn=_reply({"predict_beta": {"paths": BETA}}))
    got = predict(hypothesis, data, fit, model, tasks=("beta",))
    rows = {r["rhs"]: r for r in got.paths}
    assert got.calls == {"predict_y": 0, "predict_beta": 1, "loo_llm": 0}
    for guess in BETA:
        cause = guess["path"].split(" ->")[0]
        row, actual = rows[cause], fit.coefficient("final_price", cause)
        assert row["estimate"] == pytest.approx(actual)
        assert row["predicted"] == guess["estimate"]
        assert row["error"] == pytest.approx(guess["estimate"] - actual)
        assert row["ratio"] == pytest.approx(abs(guess["estimate"] / actual))
        assert row["sign_correct"] == (np.sign(guess["estimate"]) == np.sign(actual))
        assert row["significance_correct"] == (row["significant"] is True)
    # the truth: budget_1 and budget_2 matter, budget_3 does not
    assert rows["budget_1"]["sign_correct"] and not rows["budget_2"]["sign_correct"]
    assert rows["budget_1"]["significant"] and not rows["budget_3"]["significant"]
    assert got.beta_summary["share_sign_correct"] == pytest.approx(
        np.mean([r["sign_correct"] for r in got.paths])
    )
    assert got.beta_summary["share_significance_correct"] == pytest.approx(2 / 3)
    assert json.loads(json.dumps(got.to_dict()))["paths"][0]["predicted"] == 0.6


def test_predict_beta_reply_missing_a_path_costs_only_predict_beta() -> None:
    hypothesis, data, fit = synthetic()
    model = load_model("scripted", fn=_reply({"predict_beta": {"paths": BETA[:2]}}))
    got = predict(hypothesis, data, fit, model, tasks=("beta",))
    assert got.paths == [] and got.beta_summary == {}
    assert (got.health.steps, got.health.parse_failures) == (1, 1)
    assert got.health.all_failed and "budget_1" in got.health.sample_reply
    assert got.to_dict()["health"]["parse_failures"] == 1


async def test_an_invalid_prediction_is_nan_and_the_others_are_scored() -> None:
    hypothesis, data, fit = synthetic()
    bad: set[str] = set()

    def reply(request):
        _, subject, _ = step_of(request)
        if int(subject.rsplit("-", 1)[-1], 16) % 3 == 0:  # a third of the conditions
            bad.add(subject)
            return "I would rather not say."
        return json.dumps({"explanation": "guess", "prediction": 100.0})

    model = load_model("scripted", fn=reply)
    got = await apredict(hypothesis, data, fit, model, conditions=30, seed=2, tasks=("y",))
    table = got.table.set_index("condition_id").loc[got.llm_conditions]
    failed = [c for c in got.llm_conditions if c in bad]
    assert failed and len(failed) < len(got.llm_conditions)
    assert table.loc[failed, "predict_y"].isna().all()
    good = [c for c in got.llm_conditions if c not in bad]
    assert (table.loc[good, "predict_y"] == 100.0).all()
    assert got.mse["predict_y"] == pytest.approx(np.mean((table.loc[good, "observed"] - 100) ** 2))
    assert got.health.steps == 30 and got.health.parse_failures == len(failed)
    assert not got.health.all_failed


async def test_predict_y_and_loo_on_a_seeded_subset() -> None:
    hypothesis, data, fit = synthetic()
    seen: list = []
    model = load_model(
        "scripted",
        fn=_reply({"predict_y": {"prediction": 100.0}, "predict_loo": {"prediction": 150.0}}, seen),
    )
    got = await apredict(hypothesis, data, fit, model, conditions=12, seed=5, tasks=("y", "loo"))
    again = await apredict(hypothesis, data, fit, model, conditions=12, seed=5, tasks=("y", "loo"))
    assert got.llm_conditions == again.llm_conditions and len(got.llm_conditions) == 12
    assert got.calls == {"predict_y": 12, "predict_beta": 0, "loo_llm": 12}
    subset = data.set_index("condition_id").loc[got.llm_conditions, "final_price"]
    assert got.mse["predict_y"] == pytest.approx(np.mean((subset - 100.0) ** 2))
    assert got.mse["loo_llm"] == pytest.approx(np.mean((subset - 150.0) ** 2))
    assert got.mse["loo_mechanical"] == pytest.approx(np.mean(press_residuals(data) ** 2))
    table = got.table.set_index("condition_id")
    assert table.predict_y.notna().sum() == 12 and table.loo_mechanical.notna().all()
    # the model LOO prompt shows the fit without that condition, and its treatments as text
    _, fits = mechanical_loo(hypothesis, data)
    _, cid, prompt = next(s for s in seen if s[0] == "predict_loo")
    assert f"{fits[cid].coefficient('final_price', 'budget_1'):.6g}" in prompt
    row = data.set_index("condition_id").loc[cid]
    assert re.search(rf"- budget_1: \${int(row.budget_1)}\b", prompt)
    y_prompt = next(s[2] for s in seen if s[0] == "predict_y")
    assert "intercept" not in y_prompt and 'Predict the value of "final_price"' in y_prompt
    record = got.to_dict()
    assert record["mse"]["loo_mechanical_subset"] is not None
    assert len(record["conditions"]) == len(data)
    assert len(record["decisions"]) == 24
    assert record["decisions"][0]["explanation"].startswith("guess for predict_")


def test_mechanical_only_needs_no_model_and_bad_tasks_are_refused() -> None:
    hypothesis, data, fit = synthetic(n=30)
    got = predict(hypothesis, data, fit, None, tasks=("loo_mechanical",))
    assert got.mse["loo_mechanical"] == pytest.approx(np.mean(press_residuals(data) ** 2))
    with pytest.raises(InputError, match="unknown prediction tasks"):
        predict(hypothesis, data, fit, None, tasks=("theory",))
    with pytest.raises(InputError, match="need a scientist model"):
        predict(hypothesis, data, fit, None, tasks=("y",))


def test_mechanical_loo_predicts_through_a_mediator() -> None:
    """y = 1 + 2 m + 0.5 x + e and m = 3 + a + u: the LOO prediction of y_i puts the LOO
    prediction of m_i into the refitted y equation, so y_i - yhat_i is the y equation's
    PRESS residual plus b_m(-i) times m's PRESS residual (b_m(-i): m's coefficient in
    the y equation refitted without i)."""
    base = load_example("mug")
    trust = StudyVariable(
        name="trust",
        role="mediator",
        type="continuous",
        questions=[{"addressee": "buyer", "text": "How much do you trust the seller?"}],
        causes=["seller_attachment"],
    )
    causes = ["buyer_budget", "trust"]
    outcome = base.outcome.model_copy(update={"type": "continuous", "causes": causes})
    variables = [outcome, base.variable("buyer_budget"), trust, base.variable("seller_attachment")]
    hypothesis = Hypothesis.model_validate(
        base.model_dump() | {"variables": [v.model_dump() for v in variables]}
    )
    gen = np.random.default_rng(0)
    n = 40
    data = pd.DataFrame(
        {
            "condition_id": [f"c{i}" for i in range(n)],
            "buyer_budget": gen.choice([3.0, 6.0, 10.0, 20.0], n),
            "seller_attachment": gen.integers(1, 6, n).astype(float),
        }
    )
    data["trust"] = 3 + data.seller_attachment + gen.normal(0, 1, n)
    data["deal"] = 1 + 2 * data.trust + 0.5 * data.buyer_budget + gen.normal(0, 0.5, n)
    loo, _ = mechanical_loo(hypothesis, data)
    x_m = np.column_stack([np.ones(n), data.seller_attachment])
    x_y = np.column_stack([np.ones(n), data.buyer_budget, data.trust])
    expected = np.empty(n)
    for i in range(n):
        keep = np.arange(n) != i
        b_m, *_ = np.linalg.lstsq(x_m[keep], data.trust[keep], rcond=None)
        b_y, *_ = np.linalg.lstsq(x_y[keep], data.deal[keep], rcond=None)
        press_y = data.deal[i] - x_y[i] @ b_y
        press_m = data.trust[i] - x_m[i] @ b_m
        expected[i] = press_y + b_y[2] * press_m
    np.testing.assert_allclose(data.deal - loo.to_numpy(), expected, atol=1e-8)
