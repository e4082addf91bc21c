"""Meta-analysis of one study's SCM paths across its variants (subject model x wording x seed).

Each variant of a replicated study is fitted like any study (:func:`silicolab.studies.fit.
fit_study`); every path of the fit gives one :class:`VariantEstimate` (estimate, SE, p).
:func:`meta_analyze` pools the variants of each path with statsmodels'
:func:`~statsmodels.stats.meta_analysis.combine_effects`, the maintained implementation,
rather than formulas of our own:

- **Fixed effect**: the inverse-variance weighted mean, weights ``1 / se_i^2``.
- **Random effects**, ``method_re="dl"`` (DerSimonian-Laird): the one-step method-of-
  moments estimate ``tau^2 = (Q - (k - 1)) / (sum w - sum w^2 / sum w)``. We use it because
  it is closed form (always defined, no iteration that can stop unconverged as the
  Paule-Mandel ``"iterated"`` default can with few variants), it is the estimator most
  meta-analyses report (RevMan, metafor's classic default), so a reader can check it by
  hand. statsmodels does not truncate it: when ``Q < k - 1`` its ``tau^2`` is negative; we
  report ``tau^2 = 0``, the usual DL convention, and the random-effects estimate is then
  the fixed-effect one (a note says so).
- **Heterogeneity**: Cochran's ``Q`` with its chi-square p on ``k - 1`` degrees of freedom
  and Higgins' ``I^2 = max(0, (Q - (k - 1)) / Q)``, the share of the spread beyond sampling
  error.
- **Prediction interval** for the path's estimate in a new variant (Higgins, Thompson &
  Spiegelhalter 2009): ``mu_RE +- t_{k-2, 0.975} * sqrt(tau^2 + se_RE^2)``; it needs
  ``k >= 3``.
- Confidence intervals of the pooled estimates are normal (z) 95 % intervals, as in the
  classic DL analysis.

A row whose estimate is not finite, or whose SE is zero, negative or not finite, cannot be
weighted: it is **excluded with its reason** and stays in the output (``PathMeta.excluded``),
never silently dropped. With one usable variant there is nothing to compare: the pooled
estimate is that variant's, and ``tau^2``, ``I^2`` and ``Q`` are ``None`` with a note.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from silicolab.core.errors import InputError

if TYPE_CHECKING:
    from silicolab.studies.fit import StudyFit

#: The random-effects estimator passed to statsmodels (see the module docstring).
METHOD_RE = "dl"
#: Two-sided level of every interval (95 %).
ALPHA = 0.05
#: A variant's path is "significant" when its p is below this.
SIGNIFICANCE = 0.05


@dataclass(frozen=True, kw_only=True)
class VariantEstimate:
    """One variant's estimate of one path: ``variant`` (its id), the subject ``model``
    spec, the ``wording`` (0 = the original), the ``seed``, the ``path`` as ``"cause ->
    effect"``, the ``estimate``, its ``se`` and ``p``, and ``n`` (rows fitted) if known.
    ``p=None`` is taken as the two-sided normal p of ``estimate / se``."""

    variant: str
    model: str
    wording: int
    seed: int
    path: str
    estimate: float
    se: float
    p: float | None = None
    n: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.wording, bool) or not isinstance(self.wording, int) or self.wording < 0:
            raise InputError(
                f"wording={self.wording!r} for variant {self.variant!r}: give a whole number "
                "(0 = the original wording, 1, 2, ... the paraphrases)",
                params=("wording",),
            )
        if " -> " not in self.path:
            raise InputError(
                f"path={self.path!r}: write a path as 'cause -> effect'", params=("path",)
            )

    @property
    def p_value(self) -> float:
        """``p``, or the two-sided normal p of ``estimate / se`` when ``p`` is missing."""
        if self.p is not None:
            return float(self.p)
        return math.erfc(abs(self.estimate / self.se) / math.sqrt(2))

    def problem(self) -> str | None:
        """Why the row cannot enter the meta-analysis, or ``None`` when it can."""
        if not _finite(self.estimate):
            return f"the estimate is {self.estimate!r}, not a finite number"
        if not _finite(self.se):
            return f"the standard error is {self.se!r}, not a finite number"
        if self.se <= 0:
            return f"the standard error is {self.se!r}: the variant cannot be weighted (1/se^2)"
        if self.p is not None and not (_finite(self.p) and 0.0 <= self.p <= 1.0):
            return f"the p-value is {self.p!r}, not a number in [0, 1]"
        return None

    def to_dict(self) -> dict[str, Any]:
        return {k: _clean(v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VariantEstimate:
        return cls(**{k: data.get(k) for k in cls.__dataclass_fields__ if k in data})


@dataclass(frozen=True)
class Excluded:
    """A row left out of the meta-analysis and why."""

    row: VariantEstimate
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"row": self.row.to_dict(), "reason": self.reason}


@dataclass(frozen=True)
class Pooled:
    """A pooled estimate with its SE, 95 % CI and two-sided p."""

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    p: float

    def excludes_zero(self) -> bool:
        return self.ci_low > 0 or self.ci_high < 0

    def to_dict(self) -> dict[str, Any]:
        return {k: _clean(v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class PathMeta:
    """The meta-analysis of one path: its usable ``variants`` and ``excluded`` rows, the
    ``fixed`` and ``random`` pooled estimates (``None`` without a usable variant), the
    heterogeneity (``tau2``, ``i2``, ``q``, ``q_df``, ``q_p``; ``None`` when ``k < 2``), the
    ``prediction`` interval for a new variant (``None`` when ``k < 3``), the shares of
    variants with the pooled sign and with ``p < 0.05``, and ``notes`` on special cases."""

    path: str
    variants: tuple[VariantEstimate, ...]
    excluded: tuple[Excluded, ...] = ()
    fixed: Pooled | None = None
    random: Pooled | None = None
    tau2: float | None = None
    i2: float | None = None
    q: float | None = None
    q_df: int | None = None
    q_p: float | None = None
    prediction: tuple[float, float] | None = None
    same_sign_share: float | None = None
    significant_share: float | None = None
    method_re: str = METHOD_RE
    notes: tuple[str, ...] = field(default=())

    @property
    def k(self) -> int:
        """The number of usable variants."""
        return len(self.variants)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "k": self.k,
            "method_re": self.method_re,
            "fixed": self.fixed.to_dict() if self.fixed else None,
            "random": self.random.to_dict() if self.random else None,
            "tau2": _clean(self.tau2),
            "i2": _clean(self.i2),
            "q": _clean(self.q),
            "q_df": self.q_df,
            "q_p": _clean(self.q_p),
            "prediction": [_clean(v) for v in self.prediction] if self.prediction else None,
            "same_sign_share": _clean(self.same_sign_share),
            "significant_share": _clean(self.significant_share),
            "notes": list(self.notes),
            "variants": [r.to_dict() for r in self.variants],
            "excluded": [e.to_dict() for e in self.excluded],
        }


def rows_from_fit(
    fit: StudyFit, *, variant: str, model: str, wording: int, seed: int
) -> list[VariantEstimate]:
    """One row per path of ``fit``'s main model (``op == "~"``), labelled with the variant."""
    return [
        VariantEstimate(
            variant=variant,
            model=model,
            wording=wording,
            seed=seed,
            path=f"{r.rhs} -> {r.lhs}",
            estimate=float(r.est),
            se=float(r.se),
            p=float(r.p) if _finite(r.p) else None,
            n=int(fit.main.n),
        )
        for r in fit.paths().itertuples()
    ]


def meta_analyze(rows: Iterable[VariantEstimate]) -> list[PathMeta]:
    """The meta-analysis of every path in ``rows``, in the order the paths first appear.

    Raises :class:`InputError` when one variant has two rows for the same path."""
    by_path: dict[str, list[VariantEstimate]] = {}
    seen: set[tuple[str, str]] = set()
    for row in rows:
        if (row.variant, row.path) in seen:
            raise InputError(
                f"variant {row.variant!r} has two rows for path {row.path!r}: give one "
                "estimate per variant and path"
            )
        seen.add((row.variant, row.path))
        by_path.setdefault(row.path, []).append(row)
    return [_analyze_path(path, group) for path, group in by_path.items()]


def _analyze_path(path: str, rows: Sequence[VariantEstimate]) -> PathMeta:
    usable = tuple(r for r in rows if r.problem() is None)
    excluded = tuple(Excluded(r, str(r.problem())) for r in rows if r.problem() is not None)
    notes: list[str] = []
    if excluded:
        notes.append(f"{len(excluded)} row(s) excluded (see 'excluded' for each reason)")
    if not usable:
        notes.append("no usable variant: nothing to pool")
        return PathMeta(path, usable, excluded, notes=tuple(notes))
    pooled = _combine(usable, notes)
    return PathMeta(path, usable, excluded, notes=tuple(notes), **pooled)


def _combine(rows: Sequence[VariantEstimate], notes: list[str]) -> dict[str, Any]:
    """statsmodels' pooled estimates for ``rows`` (all usable), as PathMeta fields."""
    import numpy as np
    from statsmodels.stats.meta_analysis import combine_effects

    effects = np.array([r.estimate for r in rows], dtype=float)
    variances = np.array([r.se**2 for r in rows], dtype=float)
    k = len(rows)
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # k = 1 or Q = 0: 0/0 in I^2, tau^2
        res = combine_effects(effects, variances, method_re=METHOD_RE, alpha=ALPHA)
    fixed = _pooled(res.mean_effect_fe, res.sd_eff_w_fe)
    out: dict[str, Any] = {"fixed": fixed}
    if k == 1:
        notes.append("one usable variant: no heterogeneity to estimate; pooled = that variant")
        out["random"] = fixed
    else:
        out.update(_heterogeneity(res, k, notes))
        if res.tau2 < 0:
            out["random"] = fixed
        else:
            out["random"] = _pooled(res.mean_effect_re, res.sd_eff_w_re)
        out["prediction"] = _prediction(out["random"], out["tau2"], k, notes)
    if np.ptp(effects) == 0:
        notes.append("every variant gives the same estimate")
    sign = np.sign(out["random"].estimate)
    out["same_sign_share"] = float(np.mean(np.sign(effects) == sign)) if sign != 0 else 0.0
    out["significant_share"] = float(np.mean([r.p_value < SIGNIFICANCE for r in rows]))
    return out


def _heterogeneity(res: Any, k: int, notes: list[str]) -> dict[str, Any]:
    """tau^2 (truncated at 0), I^2, Q and its p from a statsmodels result with ``k >= 2``."""
    q = max(0.0, float(res.q))  # its one-pass formula can round equal estimates to -1e-13
    homogeneity = res.test_homogeneity()
    tau2 = float(res.tau2)
    if tau2 < 0:
        notes.append(
            f"Q = {q:.3g} <= k - 1 = {k - 1}: the DL tau^2 ({tau2:.3g}) is set to 0, "
            "so the random-effects estimate equals the fixed-effect one"
        )
        tau2 = 0.0
    i2 = max(0.0, (q - (k - 1)) / q) if q > 0 else 0.0
    return {"tau2": tau2, "i2": i2, "q": q, "q_df": k - 1, "q_p": float(homogeneity.pvalue)}


def _prediction(
    random: Pooled, tau2: float, k: int, notes: list[str]
) -> tuple[float, float] | None:
    """Higgins' prediction interval ``mu +- t_{k-2} sqrt(tau^2 + se^2)``; ``None`` if k < 3."""
    if k < 3:
        notes.append("fewer than 3 variants: no prediction interval (it needs t with k-2 df)")
        return None
    from scipy import stats

    half = float(stats.t.ppf(1 - ALPHA / 2, k - 2)) * math.sqrt(tau2 + random.se**2)
    return (random.estimate - half, random.estimate + half)


def _pooled(estimate: float, se: float) -> Pooled:
    from scipy import stats

    crit = float(stats.norm.isf(ALPHA / 2))
    z = estimate / se if se > 0 else math.inf
    p = float(2 * stats.norm.sf(abs(z)))
    return Pooled(float(estimate), float(se), estimate - crit * se, estimate + crit * se, p)


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _clean(value: Any) -> Any:
    """JSON-ready: numpy scalars as Python numbers, non-finite floats as ``None``."""
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, int):
        return int(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return value
    return number if math.isfinite(number) else None


__all__ = [
    "ALPHA",
    "METHOD_RE",
    "SIGNIFICANCE",
    "Excluded",
    "PathMeta",
    "Pooled",
    "VariantEstimate",
    "meta_analyze",
    "rows_from_fit",
]
