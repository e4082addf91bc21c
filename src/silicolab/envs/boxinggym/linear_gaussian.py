"""A one-parameter linear-Gaussian design problem with a closed-form EIG (a test fixture).

theta ~ N(0, s^2); a design is a real x; y = theta * x + eps with eps ~ N(0, sigma^2). The
posterior after data is conjugate normal with variance v = 1 / (1/s^2 + sum x_i^2 / sigma^2),
and the expected information gain of x is 0.5 * log(1 + v x^2 / sigma^2). It is *not* one of
the paper's environments and is not registered; the EIG tests and the docs use it to measure
the NMC estimators against the exact value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from silicolab.envs.boxinggym import parsing
from silicolab.envs.boxinggym.base import (
    BoxingEnv,
    InvalidDesign,
    Question,
    SquaredErrorGoal,
    Theta,
)

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


class LinearGaussian(BoxingEnv):
    """y = theta * x + N(0, sigma^2) noise, theta ~ N(0, prior_sd^2)."""

    name = "linear_gaussian"
    goals = ("direct",)
    goal_classes = ("_PredictGoal",)
    param_names = ("prior_sd", "sigma")

    def __init__(self, *, prior_sd: float = 1.0, sigma: float = 1.0, **kwargs: Any) -> None:
        self.prior_sd, self.sigma = float(prior_sd), float(sigma)
        super().__init__(**kwargs)

    def validate(self, design_text: str) -> float:
        """A finite real number."""
        try:
            return parsing.parse_float(str(design_text))
        except ValueError:
            raise InvalidDesign("Error: the input must be a real number.") from None

    def sample_design(self, rng: np.random.Generator) -> float:
        """x ~ U(-3, 3)."""
        return float(rng.uniform(-3.0, 3.0))

    def format_outcome(self, y: Any) -> str:
        """Rounded to 3 decimals."""
        return parsing.format_number(float(y), 3)

    def prior_sample(self, n: int, rng: np.random.Generator) -> Theta:
        """theta ~ N(0, prior_sd^2), shape ``(n,)``."""
        return {"theta": rng.normal(0.0, self.prior_sd, n)}

    def log_prior(self, theta: Theta) -> np.ndarray:
        """Normal log density up to a constant."""
        return -0.5 * (theta["theta"] / self.prior_sd) ** 2

    def simulate(self, theta: Theta, design: Any, rng: np.random.Generator) -> np.ndarray:
        """y = theta x + noise."""
        mean = theta["theta"] * float(design)
        return mean + self.sigma * rng.standard_normal(mean.shape)

    def log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """Normal log density of y around theta x."""
        z = (np.asarray(y, dtype=float) - theta["theta"] * float(design)) / self.sigma
        return -0.5 * z**2 - np.log(self.sigma) - _LOG_SQRT_2PI

    def cross_log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """All (y_n, theta_m) pairs by broadcasting."""
        mean = theta["theta"] * float(design)
        z = (np.asarray(y, dtype=float)[:, None] - mean[None, :]) / self.sigma
        return -0.5 * z**2 - np.log(self.sigma) - _LOG_SQRT_2PI

    def posterior_moments(
        self, data: Sequence[tuple[Any, Any]] | None = None
    ) -> tuple[float, float]:
        """Conjugate posterior mean and variance of theta."""
        data = self.data if data is None else data
        xs = np.asarray([float(x) for x, _ in data])
        ys = np.asarray([float(y) for _, y in data])
        precision = 1.0 / self.prior_sd**2 + np.sum(xs**2) / self.sigma**2
        variance = 1.0 / precision
        return float(variance * np.sum(xs * ys) / self.sigma**2), float(variance)

    def posterior_sample(
        self,
        n: int,
        rng: np.random.Generator,
        data: Sequence[tuple[Any, Any]] | None = None,
    ) -> Theta:
        """Exact draws from the conjugate normal posterior."""
        mean, variance = self.posterior_moments(data)
        return {"theta": rng.normal(mean, np.sqrt(variance), n)}

    def exact_eig(self, design: Any, data: Sequence[tuple[Any, Any]] | None = None) -> float:
        """0.5 * log(1 + v x^2 / sigma^2) with v the posterior variance."""
        _, variance = self.posterior_moments(data)
        return 0.5 * float(np.log1p(variance * float(design) ** 2 / self.sigma**2))


class _PredictGoal(SquaredErrorGoal):
    """Predict y at a point (a minimal goal so the fixture is a complete environment)."""

    name = "direct"
    norm_mu = 1.0
    norm_sigma = 1.0
    env: LinearGaussian

    def system_message(self, include_prior: bool) -> str:
        """A short abstract prompt."""
        return self.scientist_prompt(
            "You observe a noisy real response to a real input. Predict the response."
        )

    def task_text(self, include_prior: bool) -> str:
        """The goal sentence."""
        return "Predict the real response to a real input."

    def questions(self, n: int, rng: np.random.Generator) -> list[Question]:
        """Points x ~ U(-3, 3); truth = theta x (noise-free)."""
        out = []
        for _ in range(n):
            x = float(rng.uniform(-3.0, 3.0))
            truth = float(self.env.theta["theta"][0] * x)
            text = f"What is the response at {parsing.format_number(x, 3)}?"
            out.append(Question(text=text, truth=truth, point=x))
        return out

    def bayes_answer(self, question: Question, theta: Theta, rng: np.random.Generator) -> float:
        """Posterior mean of theta x."""
        return float(np.mean(theta["theta"]) * float(question.point))

    def prior_mean_answer(self, question: Question) -> float:
        """Zero."""
        return 0.0


#: The registry's factory (``prior`` is ``include_prior``; other keywords go to the class).
make_linear_gaussian = LinearGaussian.factory
