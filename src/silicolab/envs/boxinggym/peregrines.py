"""Peregrines: falcon counts from a Poisson cubic regression in time (BoxingGym §8).

The hidden model (posteriordb "peregrine"): ``log λ(t) = α + β1·t + β2·t² + β3·t³`` and
the count at time ``t ∈ [0, 5]`` is ``C ~ Poisson(λ(t))``. Priors, drawn at reset:
``α ~ N(4.5, 0.1²)``, ``β1 ~ N(1.2, 0.1²)``, ``β2 ~ N(0.07, 0.01²)``, ``β3 ~ N(-0.24, 0.05²)``.

Posterior (``posterior_sample``): the log posterior is concave in the four coefficients
(Poisson GLM with a log link under a Gaussian prior), so we find its mode by Newton's
method, build a multivariate-t proposal from the Laplace covariance (inflated, 5 degrees of
freedom, so its tails cover the posterior's) and importance-sample with exact weights
``prior × likelihood / proposal``, self-normalised and resampled. Without data it samples
the prior directly. Prior importance sampling alone would collapse here: ten counts of a
few hundred pin ``log λ`` to a few percent.

Fidelity: the model has no listed upstream bug, so ``fixed`` and ``faithful`` simulate the
same way; the faithful EIG hack (``log(pmf + 1e-4)`` in NMC) is exposed as
:meth:`Peregrines.nmc_log_likelihood`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import special, stats

from silicolab.envs.boxinggym.base import (
    Question,
    SquaredErrorGoal,
    Theta,
    TimeDesignEnv,
    systematic_resample,
)
from silicolab.envs.boxinggym.parsing import int_from_float
from silicolab.envs.boxinggym.posterior import normalized_weights
from silicolab.envs.boxinggym.text import answer_instruction, observe_instruction

PRIOR_MEAN = np.array([4.5, 1.2, 0.07, -0.24])
PRIOR_SD = np.array([0.1, 0.1, 0.01, 0.05])
NAMES = ("alpha", "beta1", "beta2", "beta3")
T_LOW, T_HIGH = 0.0, 5.0


def features(t: np.ndarray | float) -> np.ndarray:
    """The cubic design row ``[1, t, t², t³]`` for each time (shape ``(..., 4)``)."""
    t = np.asarray(t, dtype=float)
    return np.stack([np.ones_like(t), t, t**2, t**3], axis=-1)


def coef_matrix(theta: dict[str, np.ndarray]) -> np.ndarray:
    """The coefficients as an ``(S, 4)`` array in the order α, β1, β2, β3."""
    return np.stack([np.asarray(theta[k], dtype=float).reshape(-1) for k in NAMES], axis=-1)


def log_rate(theta: dict[str, np.ndarray], t: float) -> np.ndarray:
    """``log λ(t)`` for every sample (shape ``(S,)``)."""
    return coef_matrix(theta) @ features(t)


def _newton_mode(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mode and Hessian-based covariance of the coefficients given counts ``y`` at
    times ``x`` (damped Newton; the objective is strictly concave)."""
    X = features(x)
    prec0 = 1.0 / PRIOR_SD**2

    def logpost(b: np.ndarray) -> float:
        eta = X @ b
        return float(y @ eta - np.exp(eta).sum() - 0.5 * (((b - PRIOR_MEAN) ** 2) * prec0).sum())

    b = PRIOR_MEAN.copy()
    current = logpost(b)
    for _ in range(100):
        lam = np.exp(X @ b)
        grad = X.T @ (y - lam) - (b - PRIOR_MEAN) * prec0
        hess = -(X.T * lam) @ X - np.diag(prec0)
        step = np.linalg.solve(hess, -grad)
        scale = 1.0
        while scale > 1e-8:
            cand = b + scale * step
            value = logpost(cand)
            if value >= current - 1e-12:
                break
            scale /= 2
        b, moved, current = cand, np.abs(scale * step).max(), value
        if moved < 1e-10:
            break
    lam = np.exp(X @ b)
    cov = np.linalg.inv((X.T * lam) @ X + np.diag(prec0))
    return b, cov


def posterior_coefficients(
    data: Sequence[tuple[Any, Any]], n: int, rng: np.random.Generator, n_proposal: int = 20_000
) -> np.ndarray:
    """``n`` posterior draws of the coefficients (``(n, 4)``) given ``(t, count)`` pairs,
    by Laplace-t importance sampling (see the module docstring)."""
    if not data:
        return PRIOR_MEAN + PRIOR_SD * rng.standard_normal((n, 4))
    x = np.array([float(d) for d, _ in data])
    y = np.array([float(c) for _, c in data])
    mode, cov = _newton_mode(x, y)
    df = 5.0
    proposal = stats.multivariate_t(loc=mode, shape=1.5 * cov, df=df)
    draws = np.atleast_2d(proposal.rvs(size=n_proposal, random_state=rng))
    eta = draws @ features(x).T
    log_lik = (y * eta - np.exp(eta)).sum(axis=1)  # log(y!) is constant: cancels
    log_prior = stats.norm.logpdf(draws, PRIOR_MEAN, PRIOR_SD).sum(axis=1)
    log_w = log_lik + log_prior - proposal.logpdf(draws)
    weights, _ = normalized_weights(log_w)
    return draws[systematic_resample(weights, n, rng)]


# --- goal -------------------------------------------------------------------------------------


class PopulationGoal(SquaredErrorGoal):
    """Predict the falcon count at a time; metric: squared error of the integer count."""

    name = "direct"
    norm_mu = 10991.5464
    norm_sigma = 15725.115658658306
    task_texts = (
        "Your goal is to predict the population count of peregrine falcons (an integer) at a "
        "given time.",
        "Your goal is to predict the integer-valued response to a float-valued input.",
    )
    observe_format = observe_instruction("time")
    answer_format = answer_instruction("only one integer, e.g. <answer>12</answer>.")

    def system_message(self, include_prior: bool) -> str:
        if include_prior:
            story = (
                "The number of peregrine falcons counted in a region changes over time. "
                "You run experiments by choosing one time at which to count them: write a "
                f"single float between {T_LOW:g} and {T_HIGH:g}, e.g. <observe>1.5</observe>. "
                "The environment replies with the count at that time."
            )
        else:
            story = (
                "You are observing an integer-valued response to a float-valued input. You "
                "run experiments by choosing one input: write a single float between "
                f"{T_LOW:g} and {T_HIGH:g}, e.g. <observe>1.5</observe>. The environment "
                "replies with the response."
            )
        return self.scientist_prompt(
            self.task_text(include_prior), "Conduct experiments to learn the relationship.", story
        )

    def questions(self, n: int, rng: np.random.Generator) -> list[Question]:
        out = []
        for _ in range(n):
            t = round(float(rng.beta(2, 5) * 4), 1)
            truth = int(self.env.simulate(self.env.theta, t, rng)[0])
            if self.env.include_prior:
                text = (
                    f"Predict the population count of peregrine falcons (an integer) at time {t}."
                )
            else:
                text = f"Predict the integer-valued response to the input {t}."
            out.append(Question(text, truth, t))
        return out

    def parse_answer(self, text: str) -> int | None:
        try:
            return int_from_float(text)
        except (ValueError, TypeError, OverflowError):
            return None

    def bayes_answer(self, question: Question, theta: Theta, rng: np.random.Generator) -> int:
        """The posterior-predictive mean ``E[λ(t)]`` (minimises expected squared error),
        rounded to the integer the question asks for."""
        return round(float(np.exp(log_rate(theta, float(question.point))).mean()))

    def prior_mean_answer(self, question: Question) -> int:
        """``E[λ(t)]`` under the prior, in closed form: ``log λ(t)`` is Gaussian."""
        x = features(float(question.point))
        mean, var = float(PRIOR_MEAN @ x), float((PRIOR_SD**2) @ (x**2))
        return round(np.exp(mean + var / 2))


# --- environment ------------------------------------------------------------------------------


class Peregrines(TimeDesignEnv):
    """Peregrine falcon counts: design = a time in [0, 5], outcome = a Poisson count."""

    name = "peregrines"
    goals = ("direct",)
    t_low, t_high = T_LOW, T_HIGH
    goal_classes = ("PopulationGoal",)

    def format_outcome(self, y: Any) -> str:
        return str(int(y))

    def prior_sample(self, n: int, rng: np.random.Generator) -> Theta:
        draws = PRIOR_MEAN + PRIOR_SD * rng.standard_normal((n, 4))
        return {k: draws[:, i] for i, k in enumerate(NAMES)}

    def simulate(self, theta: Theta, design: Any, rng: np.random.Generator) -> np.ndarray:
        return rng.poisson(np.exp(log_rate(theta, float(design)))).astype(np.int64)

    def log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        return stats.poisson.logpmf(np.asarray(y).reshape(-1), np.exp(log_rate(theta, design)))

    def cross_log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """``out[n, m] = y[n] log λ_m − λ_m − log(y[n]!)`` for counts ``y`` (``log λ`` is the
        linear predictor, so no log is taken per pair); three passes over the matrix instead
        of scipy's per-element ``logpmf`` (~20x slower)."""
        eta = log_rate(theta, float(design))
        y = np.asarray(y, dtype=float).reshape(-1)
        out = np.multiply.outer(y, eta)
        out -= np.exp(eta)
        out -= special.gammaln(y + 1.0)[:, None]
        return out

    def faithful_log_likelihood(
        self, y: np.ndarray, theta: Theta, design: Any, *, inner: bool
    ) -> np.ndarray:
        """The published NMC's ``log(pmf + 0.0001)`` (outer and inner alike)."""
        return np.log(np.exp(self.log_likelihood(y, theta, design)) + 1e-4)

    def posterior_sample(
        self, n: int, rng: np.random.Generator, data: Sequence[tuple[Any, Any]] | None = None
    ) -> Theta:
        """Laplace-t importance sampling (exact prior draws without data); see module doc."""
        data = self.data if data is None else data
        draws = posterior_coefficients(data, n, rng)
        return {k: draws[:, i] for i, k in enumerate(NAMES)}

    def params(self) -> dict[str, Any]:
        return {"prior_mean": PRIOR_MEAN, "prior_sd": PRIOR_SD, "t_range": [T_LOW, T_HIGH]}


#: The registry's factory (``prior`` is ``include_prior``; other keywords go to the class).
make_peregrines = Peregrines.factory
