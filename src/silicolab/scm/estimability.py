"""Whether a linear equation can be estimated from the data at hand, checked before fitting.

Least squares returns numbers for almost any design, and a z-test turns rounding noise into
"significance" (a constant outcome gives an estimate of 1e-16 with p = 1e-91). Trusted SEM
software refuses such fits (lavaan stops on a variable without variance and warns that a
covariance matrix is not positive definite); :func:`check_estimable` does the same for one
equation ``y ~ 1 + x_1 + ... + x_p`` on its complete rows, and :func:`estimate_paths
<silicolab.scm.estimate_paths>` raises :class:`NotEstimable` listing every problem of every
equation before any estimate, standard error or p-value exists.

The checks, in order (``n`` complete rows, ``k = p + 1`` coefficients with the intercept):

* ``too_few_rows``: ``n <= k``. Without a residual degree of freedom there is no error
  variance to estimate (the other checks are skipped).
* ``no_outcome_variance``: ``sd(y) <= 1e-9 * max|y|`` (:data:`VARIANCE_TOL`; population
  sd). Scale-free: it flags a column that is constant up to rounding at any magnitude.
* ``constant_regressor``: the same rule for a regressor; its effect cannot be told apart
  from the intercept.
* ``collinear``: the design ``[1, x_1..x_p]`` (constant regressors left out), each column
  scaled to unit length, has rank below its column count, by NumPy's rank rule (a singular
  value ``<= s_max * max(n, k) * 2.2e-16``). The columns of the null space are named.
* ``ill_conditioned``: full rank, but the condition number ``s_max / s_min`` of that scaled
  design (Belsley, Kuh & Welsch's scaling: unit length, not centred, intercept included)
  exceeds :data:`CONDITION_LIMIT` = 1e10. Least squares then loses about ten of double
  precision's sixteen significant digits in the coefficients, and more in the standard
  errors, which involve ``(X'X)^-1`` (condition number squared).
* ``perfect_fit``: only for an equation that passed the checks above: the residual sum of
  squares is at most :data:`PERFECT_FIT_TOL` = 1e-10 of the total (``1 - R² <= 1e-10``,
  a residual sd below 1e-5 of the outcome's). The outcome is then a deterministic function
  of the regressors; the residual variance is rounding noise, so standard errors, p-values
  and likelihood-ratio or Wald tests computed from it are meaningless.

Each problem is a dict ``{"equation": lhs, "kind": ..., "detail": sentence}`` whose
sentence names the columns involved and the fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from silicolab.core.errors import InputError

#: A column whose population sd is at most this fraction of its largest absolute value is
#: constant (up to rounding).
VARIANCE_TOL = 1e-9
#: Largest condition number of the unit-length-scaled design that is still estimated.
CONDITION_LIMIT = 1e10
#: Largest residual share ``RSS / TSS`` (``1 - R²``) of an estimable fit.
PERFECT_FIT_TOL = 1e-10
#: The kinds of problem :func:`check_estimable` reports.
KINDS = (
    "too_few_rows",
    "no_outcome_variance",
    "constant_regressor",
    "collinear",
    "ill_conditioned",
    "perfect_fit",
)
INTERCEPT = "(intercept)"


class NotEstimable(InputError):
    """A model that cannot be estimated from the data; ``problems`` lists why, one dict
    ``{"equation", "kind", "detail"}`` per problem (see :mod:`silicolab.scm.estimability`)."""

    def __init__(self, problems: Sequence[dict[str, str]], what: str = "the model") -> None:
        self.problems = [dict(p) for p in problems]
        self.what = what
        super().__init__(f"{what} is not estimable: {describe_problems(self.problems)}")

    def __reduce__(self) -> tuple[Any, ...]:  # keep ``problems`` across process boundaries
        return (type(self), (self.problems, self.what))


def describe_problems(problems: Sequence[dict[str, str]]) -> str:
    """The problems as one line: ``equation (kind): detail; ...``."""
    return "; ".join(f"{p['equation']} ({p['kind']}): {p['detail']}" for p in problems)


def is_constant(values: np.ndarray) -> bool:
    """Whether ``values`` vary by no more than rounding (see :data:`VARIANCE_TOL`)."""
    if len(values) == 0:
        return True
    return float(np.std(values)) <= VARIANCE_TOL * float(np.max(np.abs(values)))


def _constant_text(values: np.ndarray) -> str:
    if np.all(values == values[0]):
        return f"every complete row is {values[0]:.6g}"
    return f"sd {np.std(values):.3g} around {np.mean(values):.6g}, rounding noise"


def _problem(lhs: str, kind: str, detail: str) -> dict[str, str]:
    return {"equation": lhs, "kind": kind, "detail": detail}


def _names(names: Sequence[str]) -> str:
    return ", ".join(repr(n) if n != INTERCEPT else "the intercept" for n in names)


def _involved(v: np.ndarray, names: Sequence[str]) -> list[str]:
    """Columns with a non-negligible weight in the (near-)null directions ``v``."""
    weight = np.abs(v).max(axis=1)
    return [name for name, w in zip(names, weight, strict=True) if w > 1e-6]


def _design_problems(lhs: str, x: np.ndarray, names: list[str]) -> list[dict[str, str]]:
    """Rank and conditioning of the unit-length-scaled design ``x`` (intercept first)."""
    n, k = x.shape
    scaled = x / np.linalg.norm(x, axis=0)
    _, s, vt = np.linalg.svd(scaled, full_matrices=False)
    tol = s[0] * max(n, k) * np.finfo(float).eps
    null = vt[s <= tol].T
    if null.shape[1]:
        rank = k - null.shape[1]
        involved = _names(_involved(null, names))
        return [
            _problem(
                lhs,
                "collinear",
                f"the regressors {involved} are perfectly collinear in the {n} complete rows "
                f"(the design has rank {rank} for {k} coefficients), so their effects cannot be "
                "separated; drop a redundant cause or vary it independently in the design",
            )
        ]
    condition = float(s[0] / s[-1])
    if condition > CONDITION_LIMIT:
        involved = _names(_involved(vt[-1:].T, names))
        return [
            _problem(
                lhs,
                "ill_conditioned",
                f"the design is nearly singular (condition number {condition:.3g} > "
                f"{CONDITION_LIMIT:.0e}, columns scaled to unit length; nearly collinear: "
                f"{involved}), so its estimates and standard errors are numerically "
                "unreliable; drop or recode a nearly redundant cause",
            )
        ]
    return []


def check_estimable(
    lhs: str, outcome: Any, regressors: Any, terms: Sequence[str]
) -> list[dict[str, str]]:
    """The problems that make ``outcome ~ 1 + regressors`` not estimable (empty: fine).

    ``outcome`` has one value per complete row, ``regressors`` one column per name in
    ``terms`` (no intercept column). See the module docstring for the checks and their
    thresholds.
    """
    y = np.asarray(outcome, dtype=float).reshape(-1)
    x = np.asarray(regressors, dtype=float).reshape(len(y), len(terms))
    n, k = len(y), len(terms) + 1
    if n <= k:
        return [
            _problem(
                lhs,
                "too_few_rows",
                f"{n} complete rows for {k} coefficients (including the intercept): at least "
                f"{k + 1} are needed to estimate an error variance; collect more data "
                "(more conditions) or drop causes",
            )
        ]
    problems = []
    if is_constant(y):
        problems.append(
            _problem(
                lhs,
                "no_outcome_variance",
                f"the outcome {lhs!r} does not vary ({_constant_text(y)}), so there is nothing "
                "for its causes to explain; vary the design or measure another outcome",
            )
        )
    varying = []
    for j, term in enumerate(terms):
        if is_constant(x[:, j]):
            problems.append(
                _problem(
                    lhs,
                    "constant_regressor",
                    f"the regressor {term!r} does not vary ({_constant_text(x[:, j])}), so "
                    "its effect cannot be told apart from the intercept; vary it in the "
                    "design or drop it",
                )
            )
        else:
            varying.append(j)
    design = np.column_stack([np.ones(n), x[:, varying]])
    design_problems = _design_problems(lhs, design, [INTERCEPT, *(terms[j] for j in varying)])
    problems += design_problems
    if problems:
        return problems
    beta = np.linalg.lstsq(design, y, rcond=None)[0]
    rss = float(np.sum((y - design @ beta) ** 2))
    tss = float(np.sum((y - y.mean()) ** 2))
    if rss <= PERFECT_FIT_TOL * tss:
        share = rss / tss
        return [
            _problem(
                lhs,
                "perfect_fit",
                f"the regressors {_names(list(terms))} explain {lhs!r} exactly (1 - R² = "
                f"{share:.2g} <= {PERFECT_FIT_TOL:.0e}): the outcome is a deterministic "
                "function of them and the residual variance is rounding noise, so standard "
                "errors, p-values and tests would be meaningless",
            )
        ]
    return []


__all__ = [
    "CONDITION_LIMIT",
    "KINDS",
    "PERFECT_FIT_TOL",
    "VARIANCE_TOL",
    "NotEstimable",
    "check_estimable",
    "describe_problems",
    "is_constant",
]
