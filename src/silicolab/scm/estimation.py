"""Path analysis of a recursive linear SCM, equal to lavaan's ML fit.

A recursive path model with uncorrelated errors and observed exogenous variables
(lavaan's ``fixed.x = TRUE``) has a likelihood that factorises into one regression per
endogenous variable, so the ML estimates are the per-equation OLS estimates (statsmodels).
lavaan's ML standard errors use the residual variance ``RSS / n`` instead of
``RSS / (n - k)``: ``SE_ML = SE_OLS * sqrt((n - k) / n)`` with k counting the intercept, and
tests are z-tests. ``std_all`` is ``b * sd(x) / sd(y)`` with standard deviations from the
model-implied covariance matrix, which equals the sample one for saturated models.
``se="ols"`` gives the classical OLS standard errors with t-tests (the ``z`` column then
holds t statistics).

Before anything is fitted every equation is checked by
:func:`silicolab.scm.estimability.check_estimable` (too few rows, an outcome or regressor
without variance, a singular or near-singular design, a perfect fit); any problem raises
:class:`~silicolab.scm.estimability.NotEstimable` listing them all, so no estimate, SE or
p-value is ever computed from a degenerate fit.

A nominal endogenous variable with levels ``[a, b, c]`` becomes the indicator outcomes
``<name>_b`` and ``<name>_c`` (linear probability equations; ``a`` is the reference) with
the variable's causes. Their estimates and SEs are those of separate OLS fits of each
indicator (seemingly unrelated regressions with identical regressors reduce to OLS); the
indicators' residual covariance ``R'R / n`` is free, as for lavaan's endogenous outcomes,
and enters the log-likelihood, the joint Wald tests and the model-implied variances.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from silicolab.core.errors import InputError
from silicolab.core.records import SCHEMA_VERSION
from silicolab.scm.estimability import NotEstimable, check_estimable
from silicolab.scm.estimation_design import build_design, lavaan_syntax, model_equations
from silicolab.scm.variables import Variable

TABLE_COLUMNS = ["lhs", "op", "rhs", "est", "se", "z", "p", "ci_low", "ci_high", "std_all"]


@dataclass(frozen=True)
class EquationFit:
    """One fitted equation: coefficients (intercept first) and their covariance."""

    lhs: str
    terms: tuple[str, ...]
    params: np.ndarray
    cov: np.ndarray
    residual_variance: float
    r2: float
    ssr: float
    n: int
    residuals: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def k(self) -> int:
        """Number of coefficients including the intercept."""
        return len(self.params)

    def loglik(self) -> float:
        """Gaussian log-likelihood of this equation at the ML residual variance."""
        sigma2 = self.ssr / self.n
        return -0.5 * self.n * (np.log(2 * np.pi * sigma2) + 1.0)


@dataclass(frozen=True)
class ModelComparison:
    """Likelihood-ratio and Wald tests of a restricted model against a fuller one."""

    lr_stat: float
    lr_df: int
    lr_p: float
    wald_stat: float
    wald_df: int
    wald_p: float
    restrictions: tuple[tuple[str, str], ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "lr": {"stat": self.lr_stat, "df": self.lr_df, "p": self.lr_p},
            "wald": {"stat": self.wald_stat, "df": self.wald_df, "p": self.wald_p},
            "restrictions": [list(r) for r in self.restrictions],
        }


@dataclass(frozen=True)
class PathEstimates:
    """The result of :func:`estimate_paths`: a tidy ``table`` (columns
    ``lhs, op, rhs, est, se, z, p, ci_low, ci_high, std_all``; ops ``~`` regression,
    ``~1`` intercept, ``~~`` residual variance), R² per equation, ``n`` used and
    ``n_dropped`` by listwise deletion, and the ``lavaan`` syntax of the model."""

    table: pd.DataFrame
    r2: dict[str, float]
    n: int
    n_dropped: int
    lavaan: str
    se: Literal["ml", "ols"]
    equations: dict[str, EquationFit] = field(repr=False)
    descriptives: pd.DataFrame = field(repr=False)
    #: Nominal endogenous variable -> its indicator equations (see the module docstring).
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)

    @property
    def loglik(self) -> float:
        """Log-likelihood of the endogenous variables given the exogenous ones (the
        indicator equations of a nominal variable jointly, with their residual covariance)."""
        grouped = {lhs for members in self.groups.values() for lhs in members}
        total = sum(eq.loglik() for lhs, eq in self.equations.items() if lhs not in grouped)
        for members in self.groups.values():
            total += _joint_loglik([self.equations[m] for m in members])
        return float(total)

    def coefficient(self, lhs: str, rhs: str) -> float:
        """The estimate of the path ``rhs -> lhs``."""
        row = self.table[(self.table.lhs == lhs) & (self.table.op == "~") & (self.table.rhs == rhs)]
        if row.empty:
            raise InputError(f"the model has no path {rhs} -> {lhs}")
        return float(row.est.iloc[0])

    def compare(self, other: PathEstimates) -> ModelComparison:
        """LR and Wald tests between two nested fits of the same data.

        Either model may be the restricted one; the fuller model is the one whose equations
        contain every term of the other. The Wald test uses the fuller model's covariance.
        """
        full, small = (self, other) if _contains(self, other) else (other, self)
        if not _contains(full, small):
            raise InputError(
                "the two models are not nested: one model's equations must contain every term "
                "of the other's (same outcomes, a superset of causes)"
            )
        if full.n != small.n:
            raise InputError(
                f"the models were fitted on different rows (n = {full.n} and {small.n}); fit "
                "both on the same complete-case data"
            )
        from scipy import stats

        restrictions: list[tuple[str, str]] = []
        wald = 0.0
        blocks = [list(g) for g in full.groups.values()]
        grouped = {lhs for members in blocks for lhs in members}
        blocks += [[lhs] for lhs in full.equations if lhs not in grouped]
        for members in blocks:
            eqs = [full.equations[m] for m in members]
            kept = set(small.equations[members[0]].terms)
            index = [i + 1 for i, t in enumerate(eqs[0].terms) if t not in kept]
            restrictions += [(m, eqs[0].terms[i - 1]) for m in members for i in index]
            if index:
                beta = np.concatenate([eq.params[index] for eq in eqs])
                cov = _joint_cov(eqs, index)
                wald += float(beta @ np.linalg.solve(cov, beta))
        df = len(restrictions)
        lr = max(2.0 * (full.loglik - small.loglik), 0.0)
        return ModelComparison(
            lr_stat=lr,
            lr_df=df,
            lr_p=float(stats.chi2.sf(lr, df)) if df else float("nan"),
            wald_stat=wald,
            wald_df=df,
            wald_p=float(stats.chi2.sf(wald, df)) if df else float("nan"),
            restrictions=tuple(restrictions),
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record (table rows, R², n, lavaan syntax) with ``schema_version``."""
        table = self.table.astype(object).where(self.table.notna(), None)
        extra = {"groups": {k: list(v) for k, v in self.groups.items()}} if self.groups else {}
        return {
            "schema_version": SCHEMA_VERSION,
            "se_type": self.se,
            "n": self.n,
            "n_dropped": self.n_dropped,
            "lavaan": self.lavaan,
            "r2": dict(self.r2),
            "params": table.to_dict(orient="records"),
            "descriptives": self.descriptives.reset_index(names="variable").to_dict(
                orient="records"
            ),
            **extra,
        }


def _contains(full: PathEstimates, small: PathEstimates) -> bool:
    return set(full.equations) == set(small.equations) and all(
        set(small.equations[lhs].terms) <= set(eq.terms) for lhs, eq in full.equations.items()
    )


def _fit_equation(lhs: str, terms: list[str], columns: pd.DataFrame, se: str) -> EquationFit:
    # the one module, not statsmodels.api (which loads time series and more: ~0.4 s)
    from statsmodels.regression.linear_model import OLS

    y = columns[lhs].to_numpy(dtype=float)
    x = np.column_stack([np.ones(len(y)), columns[terms].to_numpy(dtype=float)])
    n, k = x.shape
    fit = OLS(y, x).fit()
    scale = (n - k) / n if se == "ml" else 1.0
    ssr = float(fit.ssr)
    return EquationFit(
        lhs=lhs,
        terms=tuple(terms),
        params=np.asarray(fit.params, dtype=float),
        cov=np.asarray(fit.cov_params(), dtype=float) * scale,
        residual_variance=ssr / n if se == "ml" else ssr / (n - k),
        r2=float(fit.rsquared),
        ssr=ssr,
        n=n,
        residuals=np.asarray(fit.resid, dtype=float),
    )


def _residual_cov(eqs: Sequence[EquationFit]) -> np.ndarray:
    """ML residual covariance ``R'R / n`` of equations fitted on the same rows."""
    residuals = np.column_stack([np.asarray(eq.residuals) for eq in eqs])
    return residuals.T @ residuals / eqs[0].n


def _joint_loglik(eqs: Sequence[EquationFit]) -> float:
    """Gaussian log-likelihood of several equations with a free residual covariance."""
    if len(eqs) == 1 or any(eq.residuals is None for eq in eqs):
        return float(sum(eq.loglik() for eq in eqs))
    sign, logdet = np.linalg.slogdet(_residual_cov(eqs))
    if sign <= 0:  # dependent residuals: no joint density; fall back to the marginal ones
        return float(sum(eq.loglik() for eq in eqs))
    m, n = len(eqs), eqs[0].n
    return float(-0.5 * n * (m * np.log(2 * np.pi) + logdet + m))


def _joint_cov(eqs: Sequence[EquationFit], index: list[int]) -> np.ndarray:
    """Covariance of the coefficients ``index`` stacked over equations with identical
    regressors: ``Cov(b_i, b_j) = S_ij / S_ii * Cov(b_i)`` (the scale factor is shared)."""
    if len(eqs) == 1:
        return eqs[0].cov[np.ix_(index, index)]
    s = _residual_cov(eqs)
    size = len(index)
    out = np.zeros((size * len(eqs), size * len(eqs)))
    for i, eq in enumerate(eqs):
        base = eq.cov[np.ix_(index, index)] / s[i, i]
        for j in range(len(eqs)):
            out[i * size : (i + 1) * size, j * size : (j + 1) * size] = base * s[i, j]
    return out


def _implied_variances(
    fits: Mapping[str, EquationFit],
    columns: pd.DataFrame,
    groups: Mapping[str, Sequence[str]],
) -> dict[str, float]:
    """Model-implied variances (ML, divisor n) of every design variable, with the exogenous
    block fixed at its sample covariance (lavaan's ``fixed.x``) and the residual covariance
    of a nominal variable's indicators free."""
    endogenous = list(fits)
    exogenous = [c for c in columns.columns if c not in fits]
    names = endogenous + exogenous
    position = {name: i for i, name in enumerate(names)}
    size = len(names)
    b = np.zeros((size, size))
    psi = np.zeros((size, size))
    for lhs, eq in fits.items():
        for term, coef in zip(eq.terms, eq.params[1:], strict=True):
            b[position[lhs], position[term]] = coef
        psi[position[lhs], position[lhs]] = eq.ssr / eq.n
    for members in groups.values():
        idx = [position[m] for m in members]
        psi[np.ix_(idx, idx)] = _residual_cov([fits[m] for m in members])
    if exogenous:
        block = np.atleast_2d(
            np.cov(columns[exogenous].to_numpy(dtype=float), rowvar=False, ddof=0)
        )
        idx = [position[x] for x in exogenous]
        psi[np.ix_(idx, idx)] = block
    inverse = np.linalg.inv(np.eye(size) - b)
    sigma = inverse @ psi @ inverse.T
    return {name: float(sigma[i, i]) for name, i in position.items()}


def _require_estimable(columns: pd.DataFrame, equations: Mapping[str, list[str]]) -> None:
    """Raise :class:`NotEstimable` listing the problems of every equation, if any."""
    problems = [
        problem
        for lhs, terms in equations.items()
        for problem in check_estimable(
            lhs, columns[lhs].to_numpy(float), columns[terms].to_numpy(float), terms
        )
    ]
    if problems:
        raise NotEstimable(problems)


def estimate_paths(
    data: pd.DataFrame,
    graph_or_model: Any,
    *,
    standardize: bool = True,
    interactions: bool | Iterable[tuple[str, str]] = False,
    se: Literal["ml", "ols"] = "ml",
    variables: Sequence[Variable] | None = None,
    level: float = 0.95,
) -> PathEstimates:
    """Fit a recursive linear path model by one OLS regression per endogenous variable.

    ``graph_or_model`` is a :class:`CausalGraph`, an :class:`SCM` or ``{outcome: [causes]}``.
    ``variables`` overrides the types/levels declared on the graph (ordinal levels are
    scored 1..k, nominal causes become dummies). ``interactions=True`` adds every pairwise
    product of each equation's causes; a list of pairs adds only those. ``standardize``
    fills ``std_all`` (NaN otherwise). Estimates and ML standard errors equal lavaan's
    ``sem(..., fixed.x = TRUE)`` for these models. Raises
    :class:`~silicolab.scm.estimability.NotEstimable` (an ``InputError`` with
    ``problems``) when any equation cannot be estimated, before anything is fitted.
    """
    if se not in ("ml", "ols"):
        raise InputError(f"se must be 'ml' (lavaan's) or 'ols'; got {se!r}")
    if not 0 < level < 1:
        raise InputError(f"level must be between 0 and 1, e.g. 0.95; got {level!r}")
    from scipy import stats

    equations, declared = model_equations(graph_or_model)
    declared.update({v.name: v for v in variables or ()})
    design = build_design(data, equations, declared, interactions)
    _require_estimable(design.columns, design.equations)
    fits = {
        lhs: _fit_equation(lhs, terms, design.columns, se)
        for lhs, terms in design.equations.items()
    }
    n = len(design.columns)
    variances = _implied_variances(fits, design.columns, design.groups) if standardize else {}
    rows = []
    for lhs, eq in fits.items():
        ses = np.sqrt(np.diag(eq.cov))
        sd_y = np.sqrt(variances[lhs]) if standardize else np.nan
        for i, rhs in enumerate(("", *eq.terms)):
            std = (
                (eq.params[i] / sd_y) * (np.sqrt(variances[rhs]) if rhs else 1.0)
                if standardize
                else np.nan
            )
            rows.append((lhs, "~" if rhs else "~1", rhs, eq.params[i], ses[i], std))
        var_se = eq.residual_variance * np.sqrt(2.0 / (n if se == "ml" else n - eq.k))
        std = eq.ssr / eq.n / variances[lhs] if standardize else np.nan
        rows.append((lhs, "~~", lhs, eq.residual_variance, var_se, std))
    table = pd.DataFrame(rows, columns=["lhs", "op", "rhs", "est", "se", "std_all"])
    table["z"] = table.est / table.se
    if se == "ml":
        table["p"] = 2 * stats.norm.sf(table.z.abs())
        half = stats.norm.ppf(0.5 + level / 2) * table.se
    else:
        dof = table.lhs.map({lhs: n - eq.k for lhs, eq in fits.items()})
        table["p"] = 2 * stats.t.sf(table.z.abs(), dof)
        half = stats.t.ppf(0.5 + level / 2, dof) * table.se
    table["ci_low"], table["ci_high"] = table.est - half, table.est + half
    descriptives = pd.DataFrame(
        {"mean": design.columns.mean(), "variance": design.columns.var(ddof=0)}
    )
    return PathEstimates(
        table=table[TABLE_COLUMNS],
        r2={lhs: eq.r2 for lhs, eq in fits.items()},
        n=n,
        n_dropped=design.n_dropped,
        lavaan=lavaan_syntax(design.equations),
        se=se,
        equations=fits,
        descriptives=descriptives,
        groups={k: tuple(v) for k, v in design.groups.items()},
    )
