"""Estimability checks before inference, and nominal outcomes as indicator equations.

Each degenerate design must raise NotEstimable with the right kind before any estimate
exists; the nominal outcome's estimates, SEs and joint tests are checked against
statsmodels OLS and closed forms computed here.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from silicolab.core.errors import InputError
from silicolab.scm import NotEstimable, Variable, check_estimable, estimate_paths
from silicolab.scm.estimability import CONDITION_LIMIT, PERFECT_FIT_TOL


@pytest.fixture
def data() -> pd.DataFrame:
    gen = np.random.default_rng(11)
    n = 120
    x1 = gen.normal(10, 3, n)
    x2 = gen.normal(0, 1, n)
    y = 1.0 + 0.5 * x1 - 2.0 * x2 + gen.normal(0, 1, n)
    return pd.DataFrame({"x1": x1, "x2": x2, "y": y})


def _problems(frame: pd.DataFrame, model: dict, **kw) -> list[dict]:
    with pytest.raises(NotEstimable) as info:
        estimate_paths(frame, model, **kw)
    assert isinstance(info.value, InputError)
    for p in info.value.problems:
        assert p["detail"] in str(info.value)  # the message lists every problem
    return info.value.problems


def test_constant_outcome_is_not_estimable(data: pd.DataFrame) -> None:
    # the mug reproduction: deal = 1 in every row gave est 1.5e-16, p 2.8e-91
    problems = _problems(data.assign(y=1.0), {"y": ["x1", "x2"]})
    assert [(p["equation"], p["kind"]) for p in problems] == [("y", "no_outcome_variance")]
    assert "every complete row is 1" in problems[0]["detail"]
    # rounding noise around a constant is no variance either, at any scale
    noisy = data.assign(y=1e6 + 1e-12 * data.x2)
    assert _problems(noisy, {"y": ["x1"]})[0]["kind"] == "no_outcome_variance"
    small = data.assign(y=1e-12 * data.y)  # real variation in tiny units is fine
    assert estimate_paths(small, {"y": ["x1", "x2"]}).n == len(data)


def test_constant_regressor_is_named(data: pd.DataFrame) -> None:
    problems = _problems(data.assign(x2=5.0), {"y": ["x1", "x2"]})
    assert [p["kind"] for p in problems] == ["constant_regressor"]
    assert "'x2'" in problems[0]["detail"] and "'x1'" not in problems[0]["detail"]


def test_collinear_regressors_are_named(data: pd.DataFrame) -> None:
    frame = data.assign(x3=data.x1 - 2 * data.x2, x4=np.random.default_rng(2).normal(size=120))
    problems = _problems(frame, {"y": ["x1", "x2", "x3", "x4"]})
    assert [p["kind"] for p in problems] == ["collinear"]
    detail = problems[0]["detail"]
    assert all(f"'{c}'" in detail for c in ("x1", "x2", "x3")) and "'x4'" not in detail
    assert "rank 4 for 5 coefficients" in detail
    # the dummy trap: a dummy for every level is collinear with the intercept
    trap = data.assign(a=(data.x2 > 0).astype(float), b=(data.x2 <= 0).astype(float))
    detail = _problems(trap, {"y": ["a", "b"]})[0]["detail"]
    assert "the intercept" in detail and "'a'" in detail and "'b'" in detail


def test_as_many_coefficients_as_rows(data: pd.DataFrame) -> None:
    problems = _problems(data.head(3), {"y": ["x1", "x2"]})  # n == k == 3
    assert [p["kind"] for p in problems] == ["too_few_rows"]
    assert "3 complete rows for 3 coefficients" in problems[0]["detail"]
    estimate_paths(data.head(4), {"y": ["x1", "x2"]})  # one residual degree of freedom


def test_perfect_fit_is_not_estimable(data: pd.DataFrame) -> None:
    exact = data.assign(y=2.0 + 3.0 * data.x1)
    problems = _problems(exact, {"y": ["x1", "x2"]})
    assert [p["kind"] for p in problems] == ["perfect_fit"]
    # the auction reproduction: price = second-highest budget, alone and with the budgets
    gen = np.random.default_rng(4)
    budgets = gen.choice(np.arange(50.0, 400.0, 50.0), size=(343, 3))
    auction = pd.DataFrame(budgets, columns=["b1", "b2", "b3"])
    auction["second"] = np.sort(budgets, axis=1)[:, -2]
    auction["price"] = auction.second.copy()
    for causes in (["second"], ["b1", "b2", "b3", "second"]):
        assert [p["kind"] for p in _problems(auction, {"price": causes})] == ["perfect_fit"]
    fit = estimate_paths(auction, {"price": ["b1", "b2", "b3"]})  # not exact: estimable
    assert 0.5 < fit.r2["price"] < 1 - 1e-6


def test_ill_conditioned_design(data: pd.DataFrame) -> None:
    z = np.random.default_rng(8).normal(size=len(data))
    frame = data.assign(x3=data.x2 + 1e-11 * z)
    problems = _problems(frame, {"y": ["x1", "x2", "x3"]})
    assert [p["kind"] for p in problems] == ["ill_conditioned"]
    assert "'x2'" in problems[0]["detail"] and "'x3'" in problems[0]["detail"]
    # just inside the limit: still fitted
    ok = data.assign(x3=data.x2 + 1e-5 * z)
    assert estimate_paths(ok, {"y": ["x1", "x2", "x3"]}).n == len(data)
    assert CONDITION_LIMIT == 1e10


def test_noisy_but_nearly_exact_fit_is_estimable(data: pd.DataFrame) -> None:
    # 1 - R² of about 1e-8 is above the perfect-fit threshold of 1e-10: a real (tiny) error
    y = 2.0 + 3.0 * data.x1 + 3e-4 * np.random.default_rng(3).normal(size=len(data))
    fit = estimate_paths(data.assign(y=y), {"y": ["x1"]})
    assert PERFECT_FIT_TOL < 1 - fit.r2["y"] < 1e-6
    assert check_estimable("y", y, data[["x1"]].to_numpy(), ["x1"]) == []


def test_every_equation_is_checked_and_nothing_is_fitted(data: pd.DataFrame) -> None:
    frame = data.assign(m=7.0, w=data.x1 * 2)
    problems = _problems(frame, {"m": ["x1"], "y": ["x1", "w", "m"]})
    kinds = {(p["equation"], p["kind"]) for p in problems}
    assert kinds == {("m", "no_outcome_variance"), ("y", "constant_regressor"), ("y", "collinear")}
    error = NotEstimable(problems)
    again = pickle.loads(pickle.dumps(error))
    assert again.problems == problems and str(again) == str(error)


def test_normal_model_matches_statsmodels(data: pd.DataFrame) -> None:
    fit = estimate_paths(data, {"y": ["x1", "x2"]})
    ols = sm.OLS(data.y, sm.add_constant(data[["x1", "x2"]])).fit()
    n, k = len(data), 3
    reg = fit.table[fit.table.op == "~"].set_index("rhs")
    assert np.allclose(reg.est, ols.params[["x1", "x2"]])
    assert np.allclose(reg.se, ols.bse[["x1", "x2"]] * np.sqrt((n - k) / n))


# -- nominal outcomes ----------------------------------------------------------------------


@pytest.fixture
def choices() -> pd.DataFrame:
    gen = np.random.default_rng(21)
    n = 600
    x = gen.normal(size=n)
    w = gen.integers(0, 2, n).astype(float)
    scores = np.column_stack([np.zeros(n), 0.8 * x + 0.3 * w, -0.6 * x + 0.9 * w])
    scores = scores + gen.gumbel(size=(n, 3))
    choice = np.array(["stay", "move", "quit"])[scores.argmax(axis=1)]
    frame = pd.DataFrame({"x": x, "w": w, "choice": choice})
    frame.loc[[5, 17], "choice"] = None  # missing answers are dropped listwise
    return frame


NOMINAL = [Variable(name="choice", type="nominal", levels=("stay", "move", "quit"))]


def test_nominal_outcome_equals_ols_of_each_indicator(choices: pd.DataFrame) -> None:
    fit = estimate_paths(choices, {"choice": ["x", "w"]}, variables=NOMINAL)
    complete = choices.dropna()
    n, k = len(complete), 3
    assert (fit.n, fit.n_dropped) == (n, 2)
    assert set(fit.table.lhs) == {"choice_move", "choice_quit"}  # "stay" is the reference
    assert fit.groups == {"choice": ("choice_move", "choice_quit")}
    for level in ("move", "quit"):
        indicator = (complete.choice == level).astype(float)
        ols = sm.OLS(indicator, sm.add_constant(complete[["x", "w"]])).fit()
        rows = fit.table[fit.table.lhs == f"choice_{level}"].set_index(["op", "rhs"])
        for term in ("x", "w"):
            assert rows.loc[("~", term), "est"] == pytest.approx(ols.params[term], abs=1e-12)
            ml_se = ols.bse[term] * np.sqrt((n - k) / n)  # lavaan's ML scaling
            assert rows.loc[("~", term), "se"] == pytest.approx(ml_se, rel=1e-10)
        assert rows.loc[("~1", ""), "est"] == pytest.approx(ols.params["const"], abs=1e-12)
        assert rows.loc[("~~", f"choice_{level}"), "est"] == pytest.approx(ols.ssr / n)
        assert fit.r2[f"choice_{level}"] == pytest.approx(ols.rsquared)
    assert "choice_move ~ x + w" in fit.lavaan


def test_nominal_outcome_joint_tests(choices: pd.DataFrame) -> None:
    full = estimate_paths(choices, {"choice": ["x", "w"]}, variables=NOMINAL)
    small = estimate_paths(choices, {"choice": ["x"]}, variables=NOMINAL)
    complete = choices.dropna()
    n = len(complete)
    y = np.column_stack([(complete.choice == lv).to_numpy(float) for lv in ("move", "quit")])
    xf = sm.add_constant(complete[["x", "w"]]).to_numpy()
    xs = sm.add_constant(complete[["x"]]).to_numpy()

    def resid_cov(x: np.ndarray) -> np.ndarray:
        beta = np.linalg.lstsq(x, y, rcond=None)[0]
        r = y - x @ beta
        return r.T @ r / n

    s_full, s_small = resid_cov(xf), resid_cov(xs)
    test = small.compare(full)
    lr = n * (np.log(np.linalg.det(s_small)) - np.log(np.linalg.det(s_full)))
    assert test.lr_stat == pytest.approx(lr, rel=1e-9)
    assert test.lr_df == 2 and test.lr_p == pytest.approx(stats.chi2.sf(lr, 2))
    # Wald: Cov(vec B) = S ⊗ (X'X)^-1 for identical regressors; the w row of each equation
    beta = np.linalg.lstsq(xf, y, rcond=None)[0][2]
    cov = s_full * np.linalg.inv(xf.T @ xf)[2, 2]
    assert test.wald_stat == pytest.approx(float(beta @ np.linalg.solve(cov, beta)), rel=1e-9)
    assert set(test.restrictions) == {("choice_move", "w"), ("choice_quit", "w")}


def test_nominal_level_never_chosen_is_not_estimable(choices: pd.DataFrame) -> None:
    never = [Variable(name="choice", type="nominal", levels=("stay", "move", "quit", "other"))]
    problems = _problems(choices, {"choice": ["x", "w"]}, variables=never)
    assert [(p["equation"], p["kind"]) for p in problems] == [
        ("choice_other", "no_outcome_variance")
    ]
