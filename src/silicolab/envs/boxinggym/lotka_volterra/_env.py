"""Predator–prey: deterministic Lotka–Volterra populations observed at chosen times (§10).

The environment and its goal. The model -- dynamics, priors, the rounded observation and the
Taylor-series integrator -- is :mod:`~silicolab.envs.boxinggym.lotka_volterra._model`. The
outcome is a deterministic function of θ, so ``p(y | θ, t)`` is 1 when the rounded, clipped
state equals ``y`` and 0 otherwise (``log_likelihood`` returns 0 or ``-inf``).

Posterior (:meth:`LotkaVolterra.posterior_sample`): the prior restricted to the θ that
reproduce every observation exactly, by ABC-SMC to exactness
(:mod:`~silicolab.envs.boxinggym.lotka_volterra._posterior`).

EIG (fixed fidelity only): ``H[y | θ] = 0``, so ``EIG(t) = H[p(y | t, data)]``, the entropy of
the posterior-predictive distribution of the observed pair
(:mod:`~silicolab.envs.boxinggym.lotka_volterra._eig`), estimated from the N + M posterior
samples ``nmc_eig`` supplies. States are cached per sample set on a time grid, so a design
costs ~1 ms at 1000 samples. The published code had no EIG here, so faithful fidelity keeps
``supports_eig`` false and ``nmc_eig`` raises :class:`NotImplementedError`;
:meth:`LotkaVolterra.exact_eig` is ``None``.

Fidelity: ``faithful`` tells the novice to answer "a single number" (upstream quirk), has no
EIG and keeps the untruncated priors; ``fixed`` asks for the ``[prey, predator]`` pair the
metric needs and truncates the priors to positive rates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from silicolab.envs.boxinggym.base import (
    Goal,
    PosteriorUnavailable,
    Question,
    Theta,
    TimeDesignEnv,
    naive_message,
)
from silicolab.envs.boxinggym.lotka_volterra._eig import outcome_entropy
from silicolab.envs.boxinggym.lotka_volterra._model import (
    NAMES,
    POSITIVE_U,
    PRED0,
    PREY0,
    PRIOR_MEAN,
    PRIOR_SD,
    T_HIGH,
    T_LOW,
    GridStates,
    integrate,
    observe,
    positive_normal,
    theta_of,
    true_state,
)
from silicolab.envs.boxinggym.lotka_volterra._posterior import check_data, constrained_smc
from silicolab.envs.boxinggym.parsing import literal_list, parse_float
from silicolab.envs.boxinggym.text import answer_instruction, observe_instruction

__all__ = [
    "NAMES",
    "PRIOR_MEAN",
    "PRIOR_SD",
    "LotkaVolterra",
    "PopulationGoal",
    "PosteriorUnavailable",
    "constrained_smc",
    "integrate",
    "make_lotka_volterra",
    "observe",
    "outcome_entropy",
    "true_state",
]


class PopulationGoal(Goal):
    """Predict both populations at a time; metric: mean absolute error over the pair."""

    name = "direct"
    norm_mu = 8.327445247142364
    norm_sigma = 17.548285564117467
    task_texts = (
        "Your goal is to predict the populations of prey and predators at a given time.",
        "Your goal is to predict the two outputs of a function at a given input.",
    )
    observe_format = observe_instruction("time")
    answer_format = answer_instruction(
        "two numbers in the format [prey, predators], e.g. <answer>[2, 3]</answer>."
    )

    def system_message(self, include_prior: bool) -> str:
        if include_prior:
            story = (
                "You are observing the populations of predators and prey at different times. "
                "Run an experiment by writing one time, a float between 0 and 50, e.g. "
                "<observe>2.5</observe>; the environment replies with the prey count and then "
                "the predator count at that time, as [prey, predators]."
            )
        else:
            outputs = "floating numbers" if self.env.fidelity == "faithful" else "integers"
            story = (
                "You can observe the function one input at a time: write one float between 0 "
                f"and 50, e.g. <observe>2.5</observe>; it returns two nonnegative {outputs}."
            )
        return self.scientist_prompt(
            self.task_text(include_prior), "Conduct experiments to learn the dynamics.", story
        )

    def naive_system_message(self, include_prior: bool) -> str:
        if self.env.fidelity == "faithful":  # upstream quirk: the novice is told one number
            return naive_message(
                self.task_text(include_prior),
                "Reply inside <answer></answer> tags with a single number.",
            )
        return super().naive_system_message(include_prior)

    def questions(self, n: int, rng: np.random.Generator) -> list[Question]:
        env: LotkaVolterra = self.env  # type: ignore[assignment]
        out = []
        for _ in range(n):
            t = round(float(rng.beta(2, 5) * 4), 1)
            truth = [int(v) for v in env.true_observation(t)]
            if env.include_prior:
                text = f"Predict the populations of prey and predators at time {t}."
            else:
                text = f"Predict the two outputs of the function at input {t}."
            text += " Answer in the format [prey, predators], e.g. <answer>[2, 3]</answer>."
            out.append(Question(text, truth, t))
        return out

    def parse_answer(self, text: str) -> list[float] | None:
        value = literal_list(text)
        if value is None or len(value) != 2:
            return None
        try:
            return [parse_float(str(v)) for v in value]
        except ValueError:
            return None

    def question_value(self, prediction: Any, question: Question) -> float:
        pred = np.asarray(prediction, dtype=float)
        return float(np.abs(pred - np.asarray(question.truth, dtype=float)).mean())

    def bayes_answer(self, question: Question, theta: Theta, rng: np.random.Generator) -> list:
        """Componentwise posterior-predictive median (minimises expected absolute error)."""
        y = observe(integrate(theta, [float(question.point)])[:, 0, :])
        return [float(v) for v in np.median(y, axis=0)]

    def prior_mean_answer(self, question: Question) -> list:
        """The prior-predictive mean of both populations (Monte Carlo, fixed seed)."""
        theta = self.env.prior_sample(4000, np.random.default_rng(0))
        y = observe(integrate(theta, [float(question.point)])[:, 0, :])
        return [float(v) for v in y.mean(axis=0)]


class LotkaVolterra(TimeDesignEnv):
    """Predator–prey: design = a time in [0, 50], outcome = ``(prey, predators)``."""

    name = "lotka_volterra"
    goals = ("direct",)
    t_low, t_high = T_LOW, T_HIGH
    _grid_cache: tuple[tuple[np.ndarray, ...], GridStates] | None = None

    @property
    def supports_eig(self) -> bool:  # type: ignore[override]
        """EIG in fixed fidelity only; faithful keeps the published "no EIG"."""
        return self.fidelity == "fixed"

    def make_goal(self, name: str) -> Goal:
        return PopulationGoal(self)

    def true_observation(self, t: float) -> np.ndarray:
        """The observed populations at ``t`` under the true θ (``odeint``, as upstream)."""
        params = {k: float(np.asarray(v)[0]) for k, v in self.theta.items()}
        return observe(true_state(params, t))

    def draw_outcome(self, design: Any) -> tuple[int, int]:
        prey, pred = self.true_observation(float(design))
        return int(prey), int(pred)

    def format_outcome(self, y: Any) -> str:
        prey, pred = y
        return f"[{int(prey)}, {int(pred)}]"

    def prior_sample(self, n: int, rng: np.random.Generator) -> Theta:
        """Normal priors (published); fixed fidelity truncates them to positive rates."""
        if self.fidelity == "faithful":
            return {k: rng.normal(PRIOR_MEAN[k], PRIOR_SD[k], n) for k in NAMES}
        return theta_of(positive_normal(n, rng, POSITIVE_U))

    def simulate(
        self, theta: Theta, design: Any, rng: np.random.Generator | None = None
    ) -> np.ndarray:
        """The (deterministic) observation of every sample, shape ``(S, 2)``; ``rng`` unused."""
        return observe(integrate(theta, [float(design)])[:, 0, :]).astype(np.int64)

    def log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """0 where the sample reproduces ``y`` exactly, else ``-inf`` (no noise)."""
        match = np.all(self.simulate(theta, design, None) == np.asarray(y).reshape(-1, 2), axis=1)
        return np.where(match, 0.0, -np.inf)

    def data_log_likelihood(
        self, theta: Theta, data: Sequence[tuple[Any, Any]] | None = None
    ) -> np.ndarray:
        """The indicator log-likelihood of all ``data``, from one integration pass."""
        data = self.data if data is None else data
        size = len(next(iter(theta.values())))
        if not data:
            return np.zeros(size)
        times = np.array([float(d) for d, _ in data])
        observed = np.array([list(y) for _, y in data], dtype=float)
        simulated = observe(integrate(theta, times))
        match = np.all(simulated == observed[None], axis=(1, 2))
        return np.where(match, 0.0, -np.inf)

    def sample_posterior(
        self, n: int, rng: np.random.Generator, data: Sequence[tuple[Any, Any]]
    ) -> Theta:
        """``n`` exact posterior samples: the prior restricted to parameters that reproduce
        every observed pair (:func:`constrained_smc`).

        Raises :class:`PosteriorUnavailable` for data this model cannot produce (negative or
        non-integer counts, a state other than ``(40, 9)`` at ``t = 0``, two different
        outcomes at one time, or the tolerance stalling above exactness).
        """
        times, observed = check_data(data)
        return constrained_smc(times, observed, n, rng, positive=self.fidelity == "fixed")

    def eig_estimate(
        self,
        design: Any,
        outer: Theta,
        inner: Theta,
        *,
        estimator: str,
        rng: np.random.Generator,
    ) -> float:
        """EIG of observing at time ``design``: the entropy of the predictive distribution of
        the observed pair, from all ``outer`` and ``inner`` samples (:func:`outcome_entropy`).

        There is no closed form (:meth:`exact_eig` stays ``None``: the predictive
        distribution of the rounded state has no tractable form). The outcome is a
        deterministic function of θ, so ``H[y | θ] = 0`` and
        ``EIG = I(θ; y) = H[y]``; the outer/inner split of NMC is not needed and NMC itself
        would fail (indicator likelihood). States come from a per-sample-set
        :class:`GridStates` cache, so repeated designs on the same samples cost ~1 ms.
        ``estimator="faithful"`` raises :class:`NotImplementedError` (none was published).
        """
        if estimator != "fixed":
            raise NotImplementedError(
                f"{self.name} has no published EIG estimator; only estimator='fixed' exists"
            )
        grid = self._grid_for(outer, inner)
        return outcome_entropy(observe(grid.states(float(design))), rng)

    def _grid_for(self, outer: Theta, inner: Theta) -> GridStates:
        """The :class:`GridStates` of ``outer`` + ``inner``, reused while the same arrays are
        passed (the cache holds them, so their identities cannot be recycled)."""
        key = tuple(outer[k] for k in NAMES) + tuple(inner[k] for k in NAMES)
        cached = self._grid_cache
        if cached is not None and all(a is b for a, b in zip(cached[0], key, strict=True)):
            return cached[1]
        pooled = {k: np.concatenate([outer[k], inner[k]]) for k in NAMES}
        grid = GridStates(pooled)
        self._grid_cache = (key, grid)
        return grid

    def params(self) -> dict[str, Any]:
        return {
            "prey0": PREY0,
            "predator0": PRED0,
            "prior_mean": PRIOR_MEAN,
            "prior_sd": PRIOR_SD,
            "t_range": [T_LOW, T_HIGH],
        }


def make_lotka_volterra(
    *,
    goal: str = "direct",
    prior: bool = True,
    fidelity: str = "fixed",
    seed: int | None = 0,
    **env_params: Any,
) -> LotkaVolterra:
    """The predator–prey environment (BoxingGym §10). It takes no extra parameters."""
    if env_params:
        raise TypeError(f"lotka_volterra takes no parameters; got {sorted(env_params)}")
    return LotkaVolterra(goal=goal, include_prior=prior, fidelity=fidelity, seed=seed)
