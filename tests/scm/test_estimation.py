"""estimate_paths against closed-form NumPy computations and lavaan's definitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from silicolab.core.errors import InputError
from silicolab.scm import (
    SCM,
    CausalGraph,
    LinearMechanism,
    Noise,
    PathEstimates,
    RandomSCMSpec,
    Variable,
    estimate_paths,
    random_scm,
)


def numpy_ols(y: np.ndarray, *columns: np.ndarray) -> dict[str, np.ndarray | float]:
    """beta = (X'X)^-1 X'y with an intercept column, and the two variance estimates."""
    x = np.column_stack([np.ones(len(y)), *columns])
    n, k = x.shape
    xtx_inv = np.linalg.inv(x.T @ x)
    beta = xtx_inv @ x.T @ y
    ssr = float(((y - x @ beta) ** 2).sum())
    return {
        "beta": beta,
        "se_ols": np.sqrt(np.diag(xtx_inv) * ssr / (n - k)),
        "se_ml": np.sqrt(np.diag(xtx_inv) * ssr / n),
        "sigma2_ml": ssr / n,
        "sigma2_ols": ssr / (n - k),
        "r2": 1 - ssr / float(((y - y.mean()) ** 2).sum()),
        "n": n,
        "k": k,
    }


@pytest.fixture
def two_cause_data() -> pd.DataFrame:
    gen = np.random.default_rng(7)
    n = 400
    x1 = gen.normal(10, 3, n)
    x2 = 0.5 * x1 + gen.normal(0, 2, n)
    y = 2.0 + 0.8 * x1 - 1.5 * x2 + gen.normal(0, 4, n)
    return pd.DataFrame({"x1": x1, "x2": x2, "y": y})


def rows(result: PathEstimates, op: str = "~") -> pd.DataFrame:
    return result.table[result.table.op == op].set_index("rhs")


def test_ml_estimates_equal_numpy(two_cause_data: pd.DataFrame) -> None:
    d = two_cause_data
    ref = numpy_ols(d.y.to_numpy(), d.x1.to_numpy(), d.x2.to_numpy())
    result = estimate_paths(d, {"y": ["x1", "x2"]})
    reg = rows(result)
    assert np.allclose(reg.loc[["x1", "x2"], "est"], ref["beta"][1:])
    assert np.allclose(reg.loc[["x1", "x2"], "se"], ref["se_ml"][1:])
    intercept = rows(result, "~1").iloc[0]
    assert intercept.est == pytest.approx(ref["beta"][0])
    assert intercept.se == pytest.approx(ref["se_ml"][0])
    # The spec's rescaling: SE_ML = SE_OLS * sqrt((n - k) / n).
    n, k = ref["n"], ref["k"]
    assert np.allclose(ref["se_ml"], ref["se_ols"] * np.sqrt((n - k) / n))
    resid = rows(result, "~~").iloc[0]
    assert resid.est == pytest.approx(ref["sigma2_ml"])
    assert resid.se == pytest.approx(ref["sigma2_ml"] * np.sqrt(2 / n))
    z = ref["beta"][1] / ref["se_ml"][1]
    assert reg.loc["x1", "z"] == pytest.approx(z)
    assert reg.loc["x1", "p"] == pytest.approx(2 * stats.norm.sf(abs(z)))
    half = 1.959963984540054 * ref["se_ml"][1]
    assert reg.loc["x1", "ci_low"] == pytest.approx(ref["beta"][1] - half)
    assert reg.loc["x1", "ci_high"] == pytest.approx(ref["beta"][1] + half)
    assert result.r2["y"] == pytest.approx(ref["r2"])
    assert (result.n, result.n_dropped) == (400, 0)
    assert list(result.table.columns) == [
        "lhs",
        "op",
        "rhs",
        "est",
        "se",
        "z",
        "p",
        "ci_low",
        "ci_high",
        "std_all",
    ]


def test_ols_standard_errors_and_t_tests(two_cause_data: pd.DataFrame) -> None:
    d = two_cause_data
    ref = numpy_ols(d.y.to_numpy(), d.x1.to_numpy(), d.x2.to_numpy())
    result = estimate_paths(d, {"y": ["x1", "x2"]}, se="ols")
    reg = rows(result)
    assert np.allclose(reg.loc[["x1", "x2"], "se"], ref["se_ols"][1:])
    t = ref["beta"][2] / ref["se_ols"][2]
    dof = ref["n"] - ref["k"]
    assert reg.loc["x2", "p"] == pytest.approx(2 * stats.t.sf(abs(t), dof))
    assert reg.loc["x2", "ci_high"] - reg.loc["x2", "est"] == pytest.approx(
        stats.t.ppf(0.975, dof) * ref["se_ols"][2]
    )
    assert rows(result, "~~").iloc[0].est == pytest.approx(ref["sigma2_ols"])


def test_std_all_saturated_is_b_sdx_over_sdy(two_cause_data: pd.DataFrame) -> None:
    d = two_cause_data
    result = estimate_paths(d, CausalGraph.from_edges([("x1", "y"), ("x2", "y"), ("x1", "x2")]))
    table = result.table.set_index(["lhs", "op", "rhs"])
    for lhs, rhs in (("y", "x1"), ("y", "x2"), ("x2", "x1")):
        b = table.loc[(lhs, "~", rhs), "est"]
        assert table.loc[(lhs, "~", rhs), "std_all"] == pytest.approx(
            b * d[rhs].std() / d[lhs].std()
        )
    resid = table.loc[("y", "~~", "y"), "std_all"]
    assert resid == pytest.approx(1 - result.r2["y"])
    assert estimate_paths(d, {"y": ["x1"]}, standardize=False).table.std_all.isna().all()


def test_std_all_uses_model_implied_variance_when_not_saturated() -> None:
    # x -> m1, x -> m2, m1 -> y, m2 -> y (no x -> y, no m1 - m2 path): the implied
    # cov(m1, m2) is b1 * b2 * var(x), not the sample covariance.
    gen = np.random.default_rng(3)
    n = 2000
    x = gen.normal(size=n)
    shared = gen.normal(size=n)  # an unmodelled common cause of m1 and m2
    m1 = 0.8 * x + shared + gen.normal(size=n)
    m2 = -0.5 * x + shared + gen.normal(size=n)
    y = 1.0 * m1 + 0.7 * m2 + 0.4 * x + gen.normal(size=n)
    d = pd.DataFrame({"x": x, "m1": m1, "m2": m2, "y": y})
    result = estimate_paths(d, {"m1": ["x"], "m2": ["x"], "y": ["m1", "m2"]})
    b1 = numpy_ols(m1, x)
    b2 = numpy_ols(m2, x)
    c = numpy_ols(y, m1, m2)
    var_x = x.var()
    var_m1 = b1["beta"][1] ** 2 * var_x + b1["sigma2_ml"]
    var_m2 = b2["beta"][1] ** 2 * var_x + b2["sigma2_ml"]
    cov_m = b1["beta"][1] * b2["beta"][1] * var_x
    c1, c2 = c["beta"][1:]
    var_y = c1**2 * var_m1 + c2**2 * var_m2 + 2 * c1 * c2 * cov_m + c["sigma2_ml"]
    table = result.table.set_index(["lhs", "op", "rhs"])
    assert table.loc[("y", "~", "m1"), "std_all"] == pytest.approx(c1 * np.sqrt(var_m1 / var_y))
    assert table.loc[("y", "~", "m2"), "std_all"] == pytest.approx(c2 * np.sqrt(var_m2 / var_y))
    assert table.loc[("y", "~~", "y"), "std_all"] == pytest.approx(c["sigma2_ml"] / var_y)
    # The sample variance would give a different number here.
    assert abs(var_y - y.var()) > 0.5


def test_ordinal_binary_nominal_and_listwise_deletion() -> None:
    gen = np.random.default_rng(5)
    n = 300
    level = gen.integers(1, 4, n)
    group = gen.choice(["red", "green", "blue"], n)
    flag = gen.integers(0, 2, n)
    y = 1 + 2 * level + np.select([group == "green", group == "blue"], [1.0, -2.0], 0.0)
    y = y + 0.5 * flag + gen.normal(size=n)
    data = pd.DataFrame(
        {
            "level": pd.Series(level).map({1: "low", 2: "mid", 3: "high"}),
            "group": group,
            "flag": pd.Series(flag).map({0: "no", 1: "yes"}),
            "y": y,
        }
    )
    data.loc[[3, 10], "y"] = np.nan
    data.loc[20, "group"] = None
    variables = [
        Variable(name="level", type="ordinal", levels=("low", "mid", "high")),
        Variable(name="group", type="nominal", levels=("red", "green", "blue")),
        Variable(name="flag", type="binary", levels=("no", "yes")),
    ]
    result = estimate_paths(data, {"y": ["level", "group", "flag"]}, variables=variables)
    assert (result.n, result.n_dropped) == (297, 3)
    keep = np.ones(n, bool)
    keep[[3, 10, 20]] = False
    ref = numpy_ols(
        y[keep],
        level[keep].astype(float),
        (group[keep] == "green").astype(float),
        (group[keep] == "blue").astype(float),
        flag[keep].astype(float),
    )
    reg = rows(result)
    assert list(reg.index) == ["level", "group_green", "group_blue", "flag"]
    assert np.allclose(reg.est, ref["beta"][1:])
    assert "y ~ level + group_green + group_blue + flag" in result.lavaan


def test_interactions_are_products(two_cause_data: pd.DataFrame) -> None:
    d = two_cause_data
    result = estimate_paths(d, {"y": ["x1", "x2"]}, interactions=True)
    ref = numpy_ols(d.y.to_numpy(), d.x1.to_numpy(), d.x2.to_numpy(), (d.x1 * d.x2).to_numpy())
    reg = rows(result)
    assert np.allclose(reg.loc[["x1", "x2", "x1:x2"], "est"], ref["beta"][1:])
    assert np.allclose(reg.loc[["x1", "x2", "x1:x2"], "se"], ref["se_ml"][1:])
    assert result.lavaan.splitlines()[0] == "y ~ x1 + x2 + x1:x2"
    assert "x1:x2" in estimate_paths(d, {"y": ["x1", "x2"]}, interactions=[("x2", "x1")]).lavaan


def test_compare_lr_and_wald(two_cause_data: pd.DataFrame) -> None:
    d = two_cause_data
    full = estimate_paths(d, {"y": ["x1", "x2"]})
    small = estimate_paths(d, {"y": ["x1"]})
    ref_full = numpy_ols(d.y.to_numpy(), d.x1.to_numpy(), d.x2.to_numpy())
    ref_small = numpy_ols(d.y.to_numpy(), d.x1.to_numpy())
    test = small.compare(full)
    n = len(d)
    assert test.lr_stat == pytest.approx(n * np.log(ref_small["sigma2_ml"] / ref_full["sigma2_ml"]))
    assert test.wald_stat == pytest.approx((ref_full["beta"][2] / ref_full["se_ml"][2]) ** 2)
    assert test.lr_df == test.wald_df == 1
    assert test.lr_p == pytest.approx(stats.chi2.sf(test.lr_stat, 1))
    assert test.restrictions == (("y", "x2"),)
    assert full.compare(small) == test
    with pytest.raises(InputError, match="not nested"):
        small.compare(estimate_paths(d, {"y": ["x2"]}))


def test_result_record(two_cause_data: pd.DataFrame) -> None:
    record = estimate_paths(two_cause_data, {"y": ["x1"]}).to_dict()
    assert record["schema_version"] == 1 and record["n"] == 400
    assert {"lhs", "op", "rhs", "est", "std_all"} <= set(record["params"][0])


@given(seed=st.integers(0, 10_000), n_nodes=st.integers(3, 6))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_large_sample_recovers_random_linear_scm(seed: int, n_nodes: int) -> None:
    spec = RandomSCMSpec(
        n_nodes=n_nodes,
        edge_density=0.6,
        weight_range=(0.3, 1.5),
        negative_weights=True,
        noise=Noise.normal(0, 1),
    )
    scm = random_scm(spec, seed=seed)
    if not scm.graph.edges:
        return
    data = scm.sample(50_000, seed=seed + 1)
    result = estimate_paths(data, scm)
    for (cause, effect), weight in scm.coefficients().items():
        assert result.coefficient(effect, cause) == pytest.approx(weight, abs=0.08)


def test_input_errors(two_cause_data: pd.DataFrame) -> None:
    d = two_cause_data
    with pytest.raises(InputError, match=r"no column for \['z'\]"):
        estimate_paths(d, {"y": ["x1", "z"]})
    text = d.assign(x1=d.x1.map(lambda v: f"{v:.1f} kg"))
    with pytest.raises(InputError, match="column 'x1' is not numeric") as info:
        estimate_paths(text, {"y": ["x1"]})
    assert "levels" in str(info.value)
    bad_level = d.assign(x1=np.where(d.x1 > 10, "high", "medium"))
    with pytest.raises(InputError, match="not one of the levels"):
        estimate_paths(
            bad_level,
            {"y": ["x1"]},
            variables=[Variable(name="x1", type="ordinal", levels=("low", "high"))],
        )
    # a nominal outcome is dummy-coded (tests/scm/test_estimability.py); one level is not
    one_level = d.assign(y="same")
    with pytest.raises(InputError, match="single level"):
        estimate_paths(one_level, {"y": ["x1"]}, variables=[Variable(name="y", type="nominal")])
    with pytest.raises(InputError, match="no edges"):
        estimate_paths(d, CausalGraph(["x1", "y"]))
    with pytest.raises(InputError, match="perfectly collinear"):
        estimate_paths(d.assign(x2=2 * d.x1), {"y": ["x1", "x2"]})
    with pytest.raises(InputError, match="se must be"):
        estimate_paths(d, {"y": ["x1"]}, se="robust")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="cycle"):
        estimate_paths(d, {"y": ["x1"], "x1": ["y"]})


def test_scm_variables_drive_the_design() -> None:
    scm = SCM(
        {"x": LinearMechanism(), "y": LinearMechanism({"x": 1.0})},
        variables=[Variable(name="x", type="ordinal", levels=("a", "b", "c"))],
    )
    data = pd.DataFrame({"x": ["a", "b", "c", "a", "c", "b"], "y": [1.1, 2.0, 2.9, 1.0, 3.1, 2.0]})
    assert estimate_paths(data, scm).coefficient("y", "x") == pytest.approx(
        numpy_ols(data.y.to_numpy(), np.array([1, 2, 3, 1, 3, 2.0]))["beta"][1]
    )
