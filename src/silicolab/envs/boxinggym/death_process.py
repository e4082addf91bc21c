"""Death process: how many of N individuals are infected at a chosen time (BoxingGym §5).

Hidden model (Foster et al. 2021): ``θ ~ TruncatedNormal(μ=1, σ=1, [0, 2])`` drawn at reset;
a query at time ``ξ ∈ (0, 2)`` returns ``y ~ Binomial(N=50, η)`` with ``η = 1 − exp(−θ ξ)``.
Each query is a fresh binomial draw (not a consistent trajectory), as upstream.

Posterior (``posterior_sample``): θ is one-dimensional and bounded, so the posterior is
computed on a fine grid (4000 equal cells on [0, 2], truncated-normal prior × binomial
likelihood at the cell midpoints) and sampled exactly from the resulting piecewise-constant
density (pick a cell by its weight, then a uniform point inside it). ``exact_eig`` is the
mutual information ``I(θ; y)`` by quadrature over the same grid times enumeration of
``y ∈ {0..N}``.

Fidelity (spec §15 items 2 and 4):

* ``fixed`` shows the query time in the evaluation questions, and the NMC uses the proper
  binomial likelihood of the count.
* ``faithful`` reproduces the overwritten question texts (" Respond with a positive
  integer." / " Respond with a positive real number."), the per-individual *averaged*
  log-likelihood in the NMC (:meth:`DeathProcess.faithful_log_likelihood`), and, for the
  ``infection`` goal, a posterior that never conditions on data (always the prior). The
  published inner-block layout (indices ``n·M…``) is declared via ``nmc_inner_layout``.

``exact_eig`` always returns the true mutual information of the count under the env's
posterior; in faithful mode it is therefore *not* what the faithful estimator targets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import special, stats

from silicolab.envs.boxinggym import parsing
from silicolab.envs.boxinggym.base import (
    BoxingEnv,
    InvalidDesign,
    ParameterGoal,
    Question,
    SquaredErrorGoal,
    Theta,
)

UPPER = 2.0  # hard-coded upstream
GRID_CELLS = 4000
EIG_GRID_CELLS = 1500


def infected_probability(theta: np.ndarray, t: float | np.ndarray) -> np.ndarray:
    """``η = 1 − exp(−θ t)``: the chance an individual is infected by time ``t``."""
    return -np.expm1(-np.asarray(theta, dtype=float) * np.asarray(t, dtype=float))


def binomial_log_likelihood(y: Any, theta: Any, t: Any, n: int) -> np.ndarray:
    """``log Binomial(y | n, η(θ, t))`` (broadcasting)."""
    return stats.binom.logpmf(np.asarray(y), n, infected_probability(theta, t))


def averaged_log_likelihood(y: Any, theta: Any, t: Any, n: int) -> np.ndarray:
    """The published per-individual mean of Bernoulli log-likelihoods of a count ``y``:
    ``(y log η + (n − y) log(1 − η)) / n`` (no binomial coefficient)."""
    eta = infected_probability(theta, t)
    y = np.asarray(y, dtype=float)
    return (special.xlogy(y, eta) + special.xlog1py(n - y, -eta)) / n


class DeathProcess(BoxingEnv):
    """The death-process environment (goals ``direct`` = number infected, ``infection``)."""

    name = "death_process"
    goals = ("direct", "infection")
    goal_classes = ("DirectGoal", "InfectionGoal")
    param_names = ("N", "mu", "sigma", "lower_bound")
    nmc_inner_layout = "from_start"

    def __init__(
        self,
        *,
        N: int = 50,  # the spec's name
        mu: float = 1.0,
        sigma: float = 1.0,
        lower_bound: float = 0.0,
        **kwargs: Any,
    ) -> None:
        self.N = int(N)
        self.mu = float(mu)
        self.sigma = float(sigma)
        self.lower = self.lower_bound = float(lower_bound)
        self.upper = UPPER
        a, b = (self.lower - self.mu) / self.sigma, (self.upper - self.mu) / self.sigma
        self.prior = stats.truncnorm(a, b, loc=self.mu, scale=self.sigma)
        super().__init__(**kwargs)

    # text interface ---------------------------------------------------------------------------
    def validate(self, design_text: str) -> float:
        """A time in (0, 2); fixed mode also accepts ``[0.5]`` and a trailing ``(comment)``."""
        t = parsing.design_float(design_text, self.fidelity, "Error: The input must be a float.")
        if t <= 0:
            raise InvalidDesign("Error: The input must be greater than 0.")
        if t >= self.upper:
            if self.fidelity == "faithful":
                raise InvalidDesign("Error: The input must be less than the 2.")
            raise InvalidDesign("Error: The input must be less than 2.")
        return t

    def sample_design(self, rng: np.random.Generator) -> float:
        """The published random design, ``U(0, 2)``."""
        return float(rng.uniform(0.0, self.upper))

    def format_design(self, design: Any) -> str:
        """The time as text."""
        return parsing.format_number(float(design), 4)

    def format_outcome(self, y: Any) -> str:
        """The infected count as text."""
        return str(int(y))

    # Bayesian model ---------------------------------------------------------------------------
    def prior_sample(self, n: int, rng: np.random.Generator) -> Theta:
        """Exact truncated-normal draws (inverse CDF of a uniform)."""
        return {"theta": self.prior.ppf(rng.uniform(size=n))}

    def simulate(self, theta: Theta, design: Any, rng: np.random.Generator) -> np.ndarray:
        """One fresh binomial count per sample."""
        return rng.binomial(self.N, infected_probability(theta["theta"], float(design)))

    def log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """Binomial log-pmf of the count, per sample."""
        return binomial_log_likelihood(y, theta["theta"], float(design), self.N)

    def cross_log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """``out[n, m] = log p(y[n] | θ[m])`` by broadcasting."""
        y = np.asarray(y, dtype=float).reshape(-1, 1)
        eta = infected_probability(theta["theta"], float(design))[None, :]
        log_choose = (
            special.gammaln(self.N + 1) - special.gammaln(y + 1) - special.gammaln(self.N - y + 1)
        )
        return log_choose + special.xlogy(y, eta) + special.xlog1py(self.N - y, -eta)

    def faithful_log_likelihood(
        self, y: np.ndarray, theta: Theta, design: Any, *, inner: bool
    ) -> np.ndarray:
        """The published per-individual averaged log-likelihood (outer and inner alike)."""
        return averaged_log_likelihood(y, theta["theta"], float(design), self.N)

    def _conditions_on_data(self) -> bool:
        """False for the published infection-goal posterior, which ignores the data."""
        return not (self.fidelity == "faithful" and self.goal_name == "infection")

    @property
    def goal_name(self) -> str:
        """The goal's name (available before ``self.goal`` is built)."""
        goal = getattr(self, "goal", None)
        return goal.name if goal is not None else "direct"

    def grid_posterior(
        self, data: Sequence[tuple[Any, Any]] | None = None, cells: int = GRID_CELLS
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """Cell midpoints, normalised posterior cell probabilities and the cell width."""
        data = self.data if data is None else data
        width = (self.upper - self.lower) / cells
        mids = self.lower + width * (np.arange(cells) + 0.5)
        log_w = self.prior.logpdf(mids)
        if self._conditions_on_data():
            for t, y in data:
                log_w = log_w + binomial_log_likelihood(y, mids, float(t), self.N)
        w = np.exp(log_w - log_w.max())
        return mids, w / w.sum(), width

    def sample_posterior(
        self, n: int, rng: np.random.Generator, data: Sequence[tuple[Any, Any]]
    ) -> Theta:
        """Exact draws from the grid posterior (prior draws when there is no data)."""
        if not self._conditions_on_data():
            return self.prior_sample(n, rng)
        mids, w, width = self.grid_posterior(data)
        cell = rng.choice(mids.size, size=n, p=w)
        return {"theta": mids[cell] + width * (rng.uniform(size=n) - 0.5)}

    def exact_eig(self, design: Any, data: Sequence[tuple[Any, Any]] | None = None) -> float:
        """``I(θ; y)`` for the count at time ``design`` by grid quadrature × enumeration."""
        mids, w, _ = self.grid_posterior(data, cells=EIG_GRID_CELLS)
        ys = np.arange(self.N + 1)
        pmf = stats.binom.pmf(
            ys[None, :], self.N, infected_probability(mids, float(design))[:, None]
        )
        marginal = w @ pmf
        conditional = w @ special.xlogy(pmf, pmf).sum(axis=1)
        return float(conditional - special.xlogy(marginal, marginal).sum())


# --- goals --------------------------------------------------------------------------------------


def _story(env: DeathProcess, include_prior: bool, goal_text: str) -> str:
    """The prompt's opening: the population story (with the prior) or the abstract map."""
    if include_prior:
        intro = (
            f"There is a disease spreading in a population of {env.N} individuals. "
            f"{goal_text}\n"
            "You make observations by asking how many individuals are infected at a specific "
            "time, a positive real number. You cannot observe at time 0. The time must be "
            f"greater than 0 and less than {env.upper:g}."
        )
    else:
        intro = (
            f"You are observing a positive integer (at most {env.N}) produced for a positive "
            f"real input. {goal_text}\n"
            f"The input must be greater than 0 and less than {env.upper:g}."
        )
    return intro


class DirectGoal(SquaredErrorGoal):
    """Predict the (noisy) number infected at a time; metric: squared error."""

    name = "direct"
    norm_mu = 222.2998
    norm_sigma = 189.76853880440774
    env: DeathProcess

    task_texts = (
        "Your goal is to predict the number of infected individuals at a given time.",
        "Your goal is to predict the integer response for a given input.",
    )

    def system_message(self, include_prior: bool) -> str:
        """The scientist's prompt."""
        example = "0.1(time to observe)" if self.env.fidelity == "faithful" else "0.1"
        intro = _story(self.env, include_prior, self.task_text(include_prior))
        return self.scientist_prompt(intro, example=example)

    def questions(self, n: int, rng: np.random.Generator) -> list[Question]:
        """Times ``U(0.001, 2)``; the truth is a fresh binomial draw from the true θ."""
        out: list[Question] = []
        faithful = self.env.fidelity == "faithful"
        for _ in range(n):
            t = float(rng.uniform(0.001, self.env.upper))
            if not faithful:
                t = round(t, 3)  # the shown time is the time asked about
            truth = int(
                rng.binomial(self.env.N, infected_probability(self.env.theta["theta"][0], t))
            )
            if faithful:
                text = " Respond with a positive integer."
            elif self.env.include_prior:
                text = (
                    f"How many individuals are infected at time {t:g}? "
                    "Respond with a positive integer."
                )
            else:
                text = f"What is the output for the input {t:g}? Respond with a positive integer."
            out.append(Question(text, truth, t))
        return out

    def parse_answer(self, text: str) -> int | None:
        """``int(float(answer))``; fixed mode falls back to the last number in the text."""
        try:
            return int(float(str(text).strip()))
        except (ValueError, OverflowError):
            if self.env.fidelity == "faithful":
                return None
        value = parsing.last_number(text)
        return None if value is None else int(value)

    def bayes_answer(self, question: Question, theta: Theta, rng: np.random.Generator) -> float:
        """The posterior-predictive mean count (optimal for squared error)."""
        return float(self.env.N * infected_probability(theta["theta"], question.point).mean())

    def prior_mean_answer(self, question: Question) -> float:
        """The prior-predictive mean count at the question's time (by quadrature)."""
        mids, w, _ = self.env.grid_posterior(data=(), cells=EIG_GRID_CELLS)
        return float(self.env.N * (w @ infected_probability(mids, question.point)))


class InfectionGoal(ParameterGoal, DirectGoal):
    """Estimate the infection rate θ; metric: squared error (one question)."""

    name = "infection"
    norm_mu = 0.2902838787350395
    norm_sigma = 1.756991075450312
    parameter = "theta"

    def task_text(self, include_prior: bool) -> str:
        """The goal sentence, with the model form."""
        return (
            "Your goal is to estimate the infection rate θ: the probability that an individual "
            "is infected by time x is 1 − exp(−θx)."
        )

    def question_text(self) -> str:
        """The question about θ (faithful: only the answer instruction, as upstream)."""
        if self.env.fidelity == "faithful":
            return " Respond with a positive real number."
        return "What is the infection rate θ? Respond with a positive real number."

    def prior_mean_answer(self, question: Question) -> float:
        """The prior mean of θ."""
        return float(self.env.prior.mean())


#: The registry's factory (``prior`` is ``include_prior``; other keywords go to the class).
make_death_process = DeathProcess.factory
