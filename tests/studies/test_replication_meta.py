"""The replication meta-analysis: pooled estimates, heterogeneity and prediction intervals
against statsmodels' ``combine_effects`` and a DerSimonian-Laird computation by hand, the
variance decomposition against group means, the verdicts on scripted grids with a known
effect, the special cases (one variant, excluded rows, identical estimates) and the
figures."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.meta_analysis import combine_effects

from silicolab.core.errors import InputError
from silicolab.report.html.replication import decomposition_chart, forest_plot
from silicolab.scm import estimate_paths
from silicolab.studies.fit import StudyFit
from silicolab.studies.replication import (
    PathMeta,
    VariantEstimate,
    meta_analyze,
    rows_from_fit,
    variance_decomposition,
    verdict,
)

MODELS = ("model-a", "model-b", "model-c")
WORDINGS = (0, 1, 2)
SEEDS = (1, 2)


def grid(effect, *, path: str = "x -> y", se: float = 0.1, seed: int = 0, noise: float = 1.0):
    """One row per model x wording x seed; the estimate is ``effect(model, wording)`` plus
    normal sampling noise of sd ``noise * se``; p from the normal test of estimate / se."""
    rng = np.random.default_rng(seed)
    rows = []
    for model in MODELS:
        for wording in WORDINGS:
            for s in SEEDS:
                est = effect(model, wording) + rng.normal(0.0, noise * se)
                p = float(2 * stats.norm.sf(abs(est / se)))
                variant = f"{model}/w{wording}/s{s}"
                rows.append(
                    VariantEstimate(
                        variant=variant,
                        model=model,
                        wording=wording,
                        seed=s,
                        path=path,
                        estimate=float(est),
                        se=se,
                        p=p,
                    )
                )
    return rows


def heterogeneous_rows() -> list[VariantEstimate]:
    """Rows with real between-variant spread and unequal SEs (tau^2 > 0)."""
    rng = np.random.default_rng(7)
    rows = []
    for i in range(9):
        se = 0.05 + 0.05 * (i % 3)
        est = 0.5 + rng.normal(0, 0.3) + rng.normal(0, se)
        rows.append(
            VariantEstimate(
                variant=f"v{i}",
                model=MODELS[i % 3],
                wording=i // 3,
                seed=1,
                path="x -> y",
                estimate=float(est),
                se=se,
            )
        )
    return rows


def one(rows) -> PathMeta:
    (meta,) = meta_analyze(rows)
    return meta


def test_pooled_estimates_equal_statsmodels_combine_effects() -> None:
    rows = heterogeneous_rows()
    meta = one(rows)
    eff = np.array([r.estimate for r in rows])
    var = np.array([r.se**2 for r in rows])
    res = combine_effects(eff, var, method_re="dl")
    assert res.tau2 > 0  # the truncation at 0 does not apply: a like-for-like comparison
    assert meta.fixed.estimate == pytest.approx(res.mean_effect_fe, rel=1e-12)
    assert meta.fixed.se == pytest.approx(res.sd_eff_w_fe, rel=1e-12)
    assert meta.random.estimate == pytest.approx(res.mean_effect_re, rel=1e-12)
    assert meta.random.se == pytest.approx(res.sd_eff_w_re, rel=1e-12)
    ci_fe, ci_re, _, _ = res.conf_int(alpha=0.05, use_t=False)
    assert (meta.fixed.ci_low, meta.fixed.ci_high) == pytest.approx(tuple(ci_fe), rel=1e-12)
    assert (meta.random.ci_low, meta.random.ci_high) == pytest.approx(tuple(ci_re), rel=1e-12)
    assert meta.tau2 == pytest.approx(res.tau2, rel=1e-12)
    assert meta.i2 == pytest.approx(res.i2, rel=1e-12)
    assert meta.q == pytest.approx(res.q, rel=1e-12)
    assert meta.q_p == pytest.approx(res.test_homogeneity().pvalue, rel=1e-12)
    assert meta.method_re == "dl"


def test_pooled_estimates_equal_dersimonian_laird_by_hand() -> None:
    rows = heterogeneous_rows()
    meta = one(rows)
    y = np.array([r.estimate for r in rows])
    w = 1 / np.array([r.se for r in rows]) ** 2
    k = len(y)
    mu_fe = (w * y).sum() / w.sum()
    q = (w * (y - mu_fe) ** 2).sum()
    tau2 = max(0.0, (q - (k - 1)) / (w.sum() - (w**2).sum() / w.sum()))
    w_re = 1 / (1 / w + tau2)
    mu_re = (w_re * y).sum() / w_re.sum()
    se_re = math.sqrt(1 / w_re.sum())
    assert meta.fixed.estimate == pytest.approx(mu_fe, rel=1e-10)
    assert meta.fixed.se == pytest.approx(math.sqrt(1 / w.sum()), rel=1e-10)
    assert meta.q == pytest.approx(q, rel=1e-10)
    assert meta.q_df == k - 1
    assert meta.q_p == pytest.approx(stats.chi2.sf(q, k - 1), rel=1e-10)
    assert meta.tau2 == pytest.approx(tau2, rel=1e-10)
    assert meta.i2 == pytest.approx((q - (k - 1)) / q, rel=1e-10)
    assert meta.random.estimate == pytest.approx(mu_re, rel=1e-10)
    assert meta.random.ci_low == pytest.approx(mu_re - 1.959963984540054 * se_re, rel=1e-10)
    # Higgins, Thompson & Spiegelhalter (2009): mu +- t_{k-2} sqrt(tau^2 + se^2)
    half = stats.t.ppf(0.975, k - 2) * math.sqrt(tau2 + se_re**2)
    assert meta.prediction == pytest.approx((mu_re - half, mu_re + half), rel=1e-10)
    assert meta.prediction[0] < meta.random.ci_low < meta.random.ci_high < meta.prediction[1]


def test_q_below_its_df_sets_tau2_to_zero_and_random_equals_fixed() -> None:
    meta = one(grid(lambda m, w: 0.8, noise=0.2))
    assert meta.q < meta.k - 1
    assert meta.tau2 == 0.0 and meta.i2 == 0.0
    assert meta.random == meta.fixed
    assert any("set to 0" in note for note in meta.notes)


def test_a_common_effect_is_robust_and_recovered() -> None:
    rows = grid(lambda m, w: 0.8)
    meta = one(rows)
    assert meta.k == 18
    assert meta.random.ci_low < 0.8 < meta.random.ci_high
    assert meta.same_sign_share == 1.0 and meta.significant_share == 1.0
    decision = verdict(meta, variance_decomposition(rows, "x -> y"))
    assert decision.name == "robust"
    assert "I^2 is below 50%" in decision.rule_text


def test_one_model_flipping_the_sign_is_model_dependent() -> None:
    flip = grid(lambda m, w: -0.8 if m == "model-c" else 0.8)
    steady = grid(lambda m, w: 0.5, path="z -> y", seed=1)
    metas = {m.path: m for m in meta_analyze(flip + steady)}
    dec = variance_decomposition(flip + steady, "x -> y")
    assert dec.balanced and dec.levels == {"model": 3, "wording": 3, "seed": 2}
    assert dec.largest()[0] == "model" and dec.shares["model"] > 0.9
    assert metas["x -> y"].same_sign_share == pytest.approx(12 / 18)
    assert verdict(metas["x -> y"], dec).name == "model-dependent"
    assert verdict(metas["z -> y"], variance_decomposition(steady, "z -> y")).name == "robust"


def test_a_wording_flip_is_wording_dependent() -> None:
    rows = grid(lambda m, w: -0.6 if w == 2 else 0.6)
    dec = variance_decomposition(rows, "x -> y")
    assert dec.largest()[0] == "wording" and dec.shares["wording"] > 0.9
    decision = verdict(one(rows), dec)
    assert decision.name == "wording-dependent"
    assert "wording" in decision.rule_text and "2: sign -1" in decision.detail


def test_no_effect_is_not_supported() -> None:
    rows = grid(lambda m, w: 0.0, seed=3)
    meta = one(rows)
    assert meta.random.ci_low < 0 < meta.random.ci_high
    assert verdict(meta, variance_decomposition(rows, "x -> y")).name == "not supported"


def test_decomposition_equals_the_group_means_in_a_balanced_grid() -> None:
    rows = grid(lambda m, w: MODELS.index(m) * 0.3 + w * 0.1, noise=2.0, seed=5)
    dec = variance_decomposition(rows, "x -> y")
    frame = pd.DataFrame([r.to_dict() for r in rows])
    y = frame.estimate
    total = ((y - y.mean()) ** 2).sum()
    for factor in ("model", "wording", "seed"):
        means = frame.groupby(factor).estimate.transform("mean")
        assert dec.shares[factor] == pytest.approx(((means - y.mean()) ** 2).sum() / total)
    assert sum(dec.shares.values()) + dec.residual == pytest.approx(1.0)


def test_a_factor_with_one_level_has_share_zero() -> None:
    rows = [r for r in grid(lambda m, w: 0.3 * w, seed=2) if r.seed == 1]
    dec = variance_decomposition(rows, "x -> y")
    assert dec.levels["seed"] == 1 and dec.shares["seed"] == 0.0
    assert dec.shares["wording"] > 0.5


def test_one_variant_has_no_heterogeneity() -> None:
    row = VariantEstimate(
        variant="v", model="m", wording=0, seed=1, path="x -> y", estimate=0.4, se=0.1, p=0.0001
    )
    meta = one([row])
    assert meta.k == 1
    assert meta.fixed.estimate == meta.random.estimate == 0.4
    assert meta.tau2 is None and meta.i2 is None and meta.q is None and meta.prediction is None
    assert any("no heterogeneity" in note for note in meta.notes)
    decision = verdict(meta, variance_decomposition([row], "x -> y"))
    assert decision.name == "too few variants"


def test_unusable_rows_are_excluded_with_their_reason_and_kept() -> None:
    rows = grid(lambda m, w: 0.8)[:6]
    bad = [
        VariantEstimate(
            variant="zero-se", model="m", wording=0, seed=9, path="x -> y", estimate=0.5, se=0.0
        ),
        VariantEstimate(
            variant="nan",
            model="m",
            wording=1,
            seed=9,
            path="x -> y",
            estimate=float("nan"),
            se=0.1,
        ),
        VariantEstimate(
            variant="inf-se",
            model="m",
            wording=2,
            seed=9,
            path="x -> y",
            estimate=0.5,
            se=float("inf"),
        ),
    ]
    meta = one(rows + bad)
    assert meta.k == 6
    reasons = {e.row.variant: e.reason for e in meta.excluded}
    assert set(reasons) == {"zero-se", "nan", "inf-se"}
    assert "cannot be weighted" in reasons["zero-se"] and "not a finite" in reasons["nan"]
    assert meta.fixed.estimate == pytest.approx(one(rows).fixed.estimate)
    dumped = json.loads(json.dumps(meta.to_dict(), allow_nan=False))
    assert len(dumped["excluded"]) == 3 and dumped["k"] == 6
    dec = variance_decomposition(rows + bad, "x -> y")
    assert dec.n == 6 and "3 excluded" in dec.note


def test_identical_estimates() -> None:
    rows = grid(lambda m, w: 0.7, noise=0.0)
    meta = one(rows)
    assert meta.q == 0.0 and meta.tau2 == 0.0 and meta.i2 == 0.0
    assert meta.random.estimate == pytest.approx(0.7)
    dec = variance_decomposition(rows, "x -> y")
    assert dec.residual is None and dec.largest() is None and "no spread" in dec.note
    assert verdict(meta, dec).name == "robust"
    json.dumps(dec.to_dict(), allow_nan=False)


def test_bad_input_is_refused() -> None:
    row = grid(lambda m, w: 0.1)[0]
    with pytest.raises(InputError, match="two rows for path"):
        meta_analyze([row, row])
    with pytest.raises(InputError, match="wording="):
        VariantEstimate(
            variant="v", model="m", wording=-1, seed=0, path="x -> y", estimate=1.0, se=1.0
        )
    with pytest.raises(InputError, match="path="):
        variance_decomposition([row], "q -> y")


def test_rows_from_a_study_fit() -> None:
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x": rng.normal(size=60)})
    data["y"] = 0.5 * data.x + rng.normal(size=60)
    fit = StudyFit(main=estimate_paths(data, {"y": ["x"]}))
    (row,) = rows_from_fit(fit, variant="m/w1/s3", model="m", wording=1, seed=3)
    assert row.path == "x -> y" and row.n == 60
    assert row.estimate == pytest.approx(fit.main.coefficient("y", "x"))
    assert VariantEstimate.from_dict(row.to_dict()) == row


def test_figures_render_to_png(tmp_path) -> None:
    rows = grid(lambda m, w: -0.8 if m == "model-c" else 0.8)
    rows += [
        VariantEstimate(
            variant="bad", model="model-a", wording=0, seed=9, path="x -> y", estimate=0.1, se=0.0
        )
    ]
    rows += grid(lambda m, w: 0.7, path="z -> y", noise=0.0)
    metas = meta_analyze(rows)
    figures = [forest_plot(m, rows) for m in metas]
    figures.append(decomposition_chart([variance_decomposition(rows, m.path) for m in metas]))
    for i, fig in enumerate(figures):
        out = tmp_path / f"figure{i}.png"
        fig.savefig(out, format="png")
        data = out.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000


def test_a_saturated_grid_is_decomposed_without_f_tests() -> None:
    """Three variants, model and seed each with two levels: the additive fit has no
    residual degrees of freedom (anova_lm's F tests fail there). Type-2 shares from the
    closed form: without the model the seed groups {1, 4} and {2} leave 4.5; without the
    seed the model groups {1, 2} and {4} leave 0.5; the total is 14/3."""
    rows = [
        VariantEstimate(variant=v, model=m, wording=0, seed=s, path="x -> y", estimate=e, se=0.1)
        for v, m, s, e in [("a", "m1", 1, 1.0), ("b", "m1", 2, 2.0), ("c", "m2", 1, 4.0)]
    ]
    dec = variance_decomposition(rows, "x -> y")
    assert dec.shares["model"] == pytest.approx(4.5 / (14 / 3))
    assert dec.shares["seed"] == pytest.approx(0.5 / (14 / 3))
    assert dec.shares["wording"] == 0.0
    assert dec.residual == pytest.approx(0.0, abs=1e-12)
    assert verdict(one(rows), dec).name  # a verdict, not an error
