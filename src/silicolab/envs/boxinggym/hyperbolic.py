"""Hyperbolic temporal discounting: a person chooses now-or-later rewards (BoxingGym §4).

Hidden model (Vincent 2016; Foster et al. 2019): ``log k ~ N(−4.25, 0.5²)``,
``α ~ HalfNormal(2)``. For a design ``(iR, dR, D)`` -- ``iR`` dollars now or ``dR`` dollars in
``D`` days -- the values are ``V0 = iR`` and ``V1 = dR / (1 + k D)``, and the person picks the
delayed reward (``y = 1``) with probability ``ε + (1 − 2ε) Φ((V1 − V0) / α)``, ``ε = 0.01``.

Posterior (``posterior_sample``): a 2-d grid over ``(log k, α)`` -- 300 cells on
``μ ± 10σ`` for ``log k`` and 400 cells on ``[0, 20]`` for ``α`` (10 prior s.d.) -- with
prior × Bernoulli likelihood at cell midpoints, sampled exactly from the piecewise-constant
density (cell by weight, uniform point inside). The range is safe: each observation changes
the likelihood by at most a factor ``(1 − ε)/ε ≈ 99``, so no realistic data set moves mass
10 prior s.d. out. ``exact_eig`` is ``I(θ; y) = H(E p) − E H(p)`` by quadrature on that grid.

Fidelity (spec §4, §15 items 10-13):

* ``fixed``: a non-numeric design (or the prompt's own ``[1, 2, 3] (trivial example)``) is an
  :class:`InvalidDesign` -- the bracketed list is read and trailing text ignored; ``iR ≥ dR``
  and negative rewards are refused; answers are read as the last standalone 0/1.
* ``faithful``: the published validator -- a parse failure becomes an ``InvalidDesign``
  carrying Python's conversion error (upstream crashed), ``iR == dR`` is allowed; the
  published substring rule for answers; the novice's system message keeps only the knowledge
  header (the goal and format text were overwritten upstream). The published ``discount``
  EIG variant is not reproduced (it is not a mutual information); both goals use the standard
  NMC. Published inner-block layout ``n·M…`` via ``nmc_inner_layout``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import special, stats

from silicolab.envs.boxinggym import parsing
from silicolab.envs.boxinggym.base import (
    NAIVE_KNOWLEDGE_HEADER,
    BoxingEnv,
    Goal,
    InvalidDesign,
    ParameterGoal,
    Question,
    Theta,
)

Design = tuple[int, int, int]
LOGK_CELLS, ALPHA_CELLS = 300, 400
_BRACKETED = re.compile(r"\[[^\]]*\]")
_BINARY = re.compile(r"(?<![\d.])[01](?![\d.])")


def choice_probability(
    log_k: np.ndarray, alpha: np.ndarray, design: Design, epsilon: float
) -> np.ndarray:
    """``P(choose delayed) = ε + (1 − 2ε) Φ((dR / (1 + k D) − iR) / α)`` (broadcasting)."""
    i_r, d_r, days = (float(v) for v in design)
    v1 = d_r / (1.0 + np.exp(log_k) * days)
    return epsilon + (1.0 - 2.0 * epsilon) * special.ndtr((v1 - i_r) / alpha)


def bernoulli_log_pmf(y: Any, p: np.ndarray) -> np.ndarray:
    """``log p`` for ``y = 1`` and ``log(1 − p)`` for ``y = 0``."""
    y = np.asarray(y, dtype=float)
    return special.xlogy(y, p) + special.xlog1py(1.0 - y, -p)


def binary_entropy(p: np.ndarray) -> np.ndarray:
    """Entropy (nats) of Bernoulli(p)."""
    return -(special.xlogy(p, p) + special.xlog1py(1.0 - p, -p))


class TemporalDiscount(BoxingEnv):
    """The hyperbolic temporal-discounting environment (goals ``direct``, ``discount``)."""

    name = "hyperbolic_temporal_discount"
    goals = ("direct", "discount")
    goal_classes = ("ChoiceGoal", "DiscountGoal")
    param_names = ("epsilon", "k_mean", "k_std", "alpha_scale")
    nmc_inner_layout = "from_start"

    def __init__(
        self,
        *,
        epsilon: float = 0.01,
        k_mean: float = -4.25,
        k_std: float = 0.5,
        alpha_scale: float = 2.0,
        **kwargs: Any,
    ) -> None:
        self.epsilon = float(epsilon)
        self.k_mean = float(k_mean)
        self.k_std = float(k_std)
        self.alpha_scale = float(alpha_scale)
        self._grid_cache: dict[tuple[Any, ...], tuple[np.ndarray, ...]] = {}
        super().__init__(**kwargs)

    # text interface ---------------------------------------------------------------------------
    def validate(self, design_text: str) -> Design:
        """``[iR, dR, D]`` as integers, or :class:`InvalidDesign` with the spec's messages."""
        raw = str(design_text)
        if self.fidelity == "faithful":
            try:
                items = [int(float(v)) for v in raw.strip().strip("[]").split(",")]
            except (ValueError, OverflowError) as err:  # upstream crashed here
                raise InvalidDesign(str(err)) from None
        else:
            found = _BRACKETED.search(raw)
            try:
                values = parsing.parse_number_list(found.group(0) if found else raw, float)
                if not all(np.isfinite(values)):
                    raise ValueError(raw)
                items = [int(v) for v in values]
            except ValueError:
                raise InvalidDesign(
                    "Error: the input must be three numbers [iR, dR, D], for example [10, 20, 5]."
                ) from None
        if len(items) != 3:
            raise InvalidDesign(f"Item len not 3 {raw}")
        i_r, d_r, days = items
        if i_r > d_r or (self.fidelity == "fixed" and i_r == d_r):
            raise InvalidDesign(f"item 0 not less than item 1, {raw}")
        if days <= 0:
            raise InvalidDesign(f"item 2 not greater than 0, {raw}")
        if self.fidelity == "fixed" and i_r < 0:
            raise InvalidDesign(f"item 0 must not be negative, {raw}")
        return (i_r, d_r, days)

    def sample_design(self, rng: np.random.Generator) -> Design:
        """The published random design: ``iR ∈ [1, 200)``, ``dR ∈ [iR+1, 300)``,
        ``D ∈ [1, 365)``."""
        i_r = int(rng.integers(1, 200))
        return (i_r, int(rng.integers(i_r + 1, 300)), int(rng.integers(1, 365)))

    def format_design(self, design: Any) -> str:
        """``[iR, dR, D]``."""
        return "[" + ", ".join(str(int(v)) for v in design) + "]"

    def format_outcome(self, y: Any) -> str:
        """``1`` (delayed) or ``0`` (immediate)."""
        return str(int(y))

    # Bayesian model ---------------------------------------------------------------------------
    def _theta(self, log_k: np.ndarray, alpha: np.ndarray) -> Theta:
        return {"log_k": log_k, "k": np.exp(log_k), "alpha": alpha}

    def prior_sample(self, n: int, rng: np.random.Generator) -> Theta:
        """Exact prior draws."""
        log_k = self.k_mean + self.k_std * rng.standard_normal(n)
        return self._theta(log_k, np.abs(self.alpha_scale * rng.standard_normal(n)))

    def probability(self, theta: Theta, design: Any) -> np.ndarray:
        """``P(y = 1)`` per sample."""
        return choice_probability(theta["log_k"], theta["alpha"], design, self.epsilon)

    def simulate(self, theta: Theta, design: Any, rng: np.random.Generator) -> np.ndarray:
        """One choice per sample."""
        p = self.probability(theta, design)
        return (rng.uniform(size=p.shape) < p).astype(int)

    def log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """Bernoulli log-pmf of the choice, per sample."""
        return bernoulli_log_pmf(y, self.probability(theta, design))

    def cross_log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """``out[n, m] = log p(y[n] | θ[m])`` by broadcasting."""
        p = self.probability(theta, design)
        y = np.asarray(y, dtype=float).reshape(-1, 1)
        return y * np.log(p)[None, :] + (1.0 - y) * np.log1p(-p)[None, :]

    def grid(self, data: Sequence[tuple[Any, Any]] | None = None) -> tuple[np.ndarray, ...]:
        """``(log_k, alpha, weight)`` at the cell midpoints (flattened; weights sum to 1) and
        the two cell widths."""
        data = self.data if data is None else data
        key = tuple((tuple(int(v) for v in d), int(y)) for d, y in data)
        if key in self._grid_cache:
            return self._grid_cache[key]
        lo, hi = self.k_mean - 10 * self.k_std, self.k_mean + 10 * self.k_std
        hk, ha = (hi - lo) / LOGK_CELLS, 10 * self.alpha_scale / ALPHA_CELLS
        log_k, alpha = np.meshgrid(
            lo + hk * (np.arange(LOGK_CELLS) + 0.5), ha * (np.arange(ALPHA_CELLS) + 0.5)
        )
        log_k, alpha = log_k.ravel(), alpha.ravel()
        log_w = stats.norm.logpdf(log_k, self.k_mean, self.k_std) + stats.halfnorm.logpdf(
            alpha, scale=self.alpha_scale
        )
        for design, y in data:
            p = choice_probability(log_k, alpha, design, self.epsilon)
            log_w += bernoulli_log_pmf(y, p)
        w = np.exp(log_w - log_w.max())
        out = (log_k, alpha, w / w.sum(), np.array([hk, ha]))
        if len(self._grid_cache) > 64:
            self._grid_cache.clear()
        self._grid_cache[key] = out
        return out

    def sample_posterior(
        self, n: int, rng: np.random.Generator, data: Sequence[tuple[Any, Any]]
    ) -> Theta:
        """Exact prior draws without data; otherwise exact draws from the grid posterior."""
        log_k, alpha, w, widths = self.grid(data)
        cell = rng.choice(w.size, size=n, p=w)
        jitter = (rng.uniform(size=(n, 2)) - 0.5) * widths
        new_alpha = np.maximum(alpha[cell] + jitter[:, 1], 1e-12)
        return self._theta(log_k[cell] + jitter[:, 0], new_alpha)

    def exact_eig(self, design: Any, data: Sequence[tuple[Any, Any]] | None = None) -> float:
        """``I(θ; y) = H(E[p]) − E[H(p)]`` by quadrature on the posterior grid."""
        log_k, alpha, w, _ = self.grid(data)
        p = choice_probability(log_k, alpha, design, self.epsilon)
        return float(binary_entropy(w @ p) - w @ binary_entropy(p))


# --- goals --------------------------------------------------------------------------------------


def _story(env: TemporalDiscount, include_prior: bool, goal_text: str) -> tuple[str, str]:
    """The prompt's opening (the reward story with the prior, else the abstract map) and
    its example design."""
    faithful = env.fidelity == "faithful"
    if include_prior:
        example = "[1, 2, 3] (trivial example)" if faithful else "[1, 2, 3]"
        intro = (
            "A person has to choose between an immediate reward of iR dollars today and a "
            f"delayed reward of dR dollars in D days. {goal_text} Remember that the decisions "
            "are not deterministic.\n"
            "You make an observation by giving [iR, dR, D], where D is a positive whole number "
            "of days and dR is strictly larger than iR. The response is 1 if the person takes "
            "the delayed reward and 0 if they take the immediate reward."
        )
    else:
        example = "[10, 20, 1]"
        intro = (
            "You are observing a binary response for a tuple of three positive integers "
            f"(integer, integer, integer). {goal_text}\n"
            "The first integer must be smaller than the second; the third is a positive integer."
        )
    return intro, example


class ChoiceGoal(Goal):
    """Predict the person's choice for a design; metric: accuracy."""

    name = "direct"
    norm_mu = 0.5
    norm_sigma = 0.4692829610160591
    kind = "accuracy"
    env: TemporalDiscount

    task_texts = (
        "Your goal is to predict which reward the person chooses for given iR, dR, D.",
        "Your goal is to predict the binary response for a given tuple.",
    )

    def system_message(self, include_prior: bool) -> str:
        """The scientist's prompt."""
        intro, example = _story(self.env, include_prior, self.task_text(include_prior))
        return self.scientist_prompt(intro, example=example)

    def naive_system_message(self, include_prior: bool) -> str:
        """Faithful mode keeps only the knowledge header (the upstream overwrite)."""
        if self.env.fidelity == "faithful":
            return NAIVE_KNOWLEDGE_HEADER
        return super().naive_system_message(include_prior)

    def _draw_point(self, rng: np.random.Generator) -> Design:
        i_r = int(rng.uniform(1, 300))
        return (i_r, int(rng.uniform(i_r + 1, 300)), int(rng.integers(1, 365)))

    def questions(self, n: int, rng: np.random.Generator) -> list[Question]:
        """Class-balanced questions: each targets the label seen less often so far (ties: 1)
        and redraws designs until the simulated choice has that label."""
        out: list[Question] = []
        counts = [0, 0]
        for _ in range(n):
            target = 1 if counts[1] <= counts[0] else 0
            while True:
                point = self._draw_point(rng)
                y = int(self.env.simulate(self.env.theta, point, rng)[0])
                if y == target:
                    break
            counts[y] += 1
            i_r, d_r, days = point
            if self.env.include_prior:
                text = (
                    f"The person is offered iR = {i_r} dollars now or dR = {d_r} dollars in "
                    f"D = {days} days. Which do they choose? Answer 1 for the delayed reward or "
                    "0 for the immediate reward."
                )
            else:
                text = (
                    f"What is the binary response for the input [{i_r}, {d_r}, {days}]? "
                    "Answer 0 or 1."
                )
            out.append(Question(text, y, point))
        return out

    def parse_answer(self, text: str) -> int | None:
        """Faithful: "1" anywhere → 1, else "0" → 0. Fixed: the last standalone 0 or 1."""
        if self.env.fidelity == "faithful":
            return parsing.binary_answer(text)
        found = _BINARY.findall(str(text))
        return int(found[-1]) if found else None

    def question_value(self, prediction: Any, question: Question) -> float:
        """1 for a correct choice, else 0."""
        return float(int(prediction) == int(question.truth))

    def bayes_answer(self, question: Question, theta: Theta, rng: np.random.Generator) -> int:
        """The posterior-predictive majority choice."""
        return int(self.env.probability(theta, question.point).mean() >= 0.5)

    def prior_mean_answer(self, question: Question) -> int:
        """The prior-predictive majority choice at the question's design (by quadrature)."""
        log_k, alpha, w, _ = self.env.grid(data=())
        p = choice_probability(log_k, alpha, question.point, self.env.epsilon)
        return int(w @ p >= 0.5)


class DiscountGoal(ParameterGoal, ChoiceGoal):
    """Estimate the discount factor k; metric: squared error (one question)."""

    name = "discount"
    norm_mu = 0.25  # published: k_std², the variance of log k (spec §15 item 12)
    norm_sigma = 4.3
    parameter = "k"

    def task_text(self, include_prior: bool) -> str:
        """The goal sentence, with the value formulas."""
        return (
            "Your goal is to estimate the discount factor k in the person's valuation: the "
            "immediate reward is worth V0 = iR and the delayed one V1 = dR / (1 + k * D)."
        )

    def question_text(self) -> str:
        """The question about k."""
        return "What is the person's discount factor k? Respond with the float value of k."

    def prior_mean_answer(self, question: Question) -> float:
        """The prior mean of k, ``exp(μ + σ²/2)``."""
        return float(np.exp(self.env.k_mean + self.env.k_std**2 / 2))


#: The registry's factory (``prior`` is ``include_prior``; other keywords go to the class).
make_hyperbolic_temporal_discount = TemporalDiscount.factory
