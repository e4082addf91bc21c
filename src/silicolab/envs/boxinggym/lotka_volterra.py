"""Predator–prey: deterministic Lotka–Volterra populations observed at chosen times (§10).

Hidden model: ``d prey/dt = α·prey − β·prey·pred``, ``d pred/dt = δ·prey·pred − γ·pred`` from
``(prey, pred) = (40, 9)`` at ``t = 0``; priors ``α ~ N(0.1, 0.01²)``, ``β ~ N(0.02, 0.01²)``,
``γ ~ N(0.4, 0.04²)``, ``δ ~ N(0.01, 0.001²)``. Observing time ``t ∈ [0, 50]`` returns the
state at ``t`` rounded to integers and clipped at 0. There is no observation noise.

Likelihood: since the outcome is a deterministic function of θ, ``p(y | θ, t)`` is 1 when
the rounded, clipped state equals ``y`` and 0 otherwise (``log_likelihood`` returns 0 or
``-inf``). Posterior (``posterior_sample``): importance sampling from the prior with that
exact indicator likelihood, every candidate integrated at once with a vectorised fixed-step
RK4 (:func:`integrate`). It is exact but its acceptance rate falls quickly with each
observation; when no candidate reproduces the data it raises :class:`PosteriorUnavailable`
saying so (EIG was not implemented upstream either; see :meth:`LotkaVolterra.exact_eig`).

Fidelity: ``faithful`` tells the novice to answer "a single number" (upstream quirk);
``fixed`` asks for the ``[prey, predator]`` pair the metric needs. The true trajectory is
solved with ``scipy.integrate.odeint`` in both modes, as upstream.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.integrate import odeint

from silicolab.envs.boxinggym.base import (
    BoxingEnv,
    Goal,
    InvalidDesign,
    Question,
    Theta,
    naive_message,
)
from silicolab.envs.boxinggym.parsing import format_number, literal_list, parse_float
from silicolab.envs.boxinggym.posterior import normalized_weights, systematic_resample

PREY0, PRED0 = 40.0, 9.0
PRIOR_MEAN = {"alpha": 0.1, "beta": 0.02, "gamma": 0.4, "delta": 0.01}
PRIOR_SD = {"alpha": 0.01, "beta": 0.01, "gamma": 0.04, "delta": 0.001}
NAMES = ("alpha", "beta", "gamma", "delta")
T_LOW, T_HIGH = 0.0, 50.0
#: Populations beyond this are treated as having diverged (negative β draws explode).
BLOW_UP = 1e12


class PosteriorUnavailable(RuntimeError):
    """No prior draw reproduces the observed (deterministic) populations exactly."""


def true_state(params: dict[str, float], t: float) -> np.ndarray:
    """The state at ``t`` for one parameter set, solved with ``odeint`` (as upstream)."""
    a, b, g, d = (float(params[k]) for k in NAMES)
    if t == 0:
        return np.array([PREY0, PRED0])

    def rhs(s: np.ndarray, _t: float) -> list[float]:
        return [a * s[0] - b * s[0] * s[1], d * s[0] * s[1] - g * s[1]]

    out = odeint(rhs, [PREY0, PRED0], [0.0, float(t)], rtol=1e-10, atol=1e-10)[-1]
    return np.asarray(out, dtype=float)


def observe(state: np.ndarray) -> np.ndarray:
    """The observed populations: rounded to integers, clipped at 0 (non-finite → huge)."""
    state = np.where(np.isfinite(state), state, BLOW_UP)
    return np.clip(np.round(np.minimum(state, BLOW_UP)), 0, None)


def integrate(theta: dict[str, np.ndarray], times: np.ndarray, dt: float = 0.02) -> np.ndarray:
    """States of every parameter sample at each of ``times`` (``(S, len(times), 2)``).

    Classical RK4 with step ``≤ dt`` on all samples at once; each output time is hit
    exactly by shortening the last step. Diverging trajectories are frozen at ``BLOW_UP``.
    """
    a, b, g, d = (np.asarray(theta[k], dtype=float).reshape(-1) for k in NAMES)
    times = np.asarray(times, dtype=float).reshape(-1)
    order = np.argsort(times)
    s = a.shape[0]
    x, y = np.full(s, PREY0), np.full(s, PRED0)
    out = np.empty((s, times.size, 2))
    now = 0.0

    def rhs(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return a * x - b * x * y, d * x * y - g * y

    with np.errstate(over="ignore", invalid="ignore"):
        for idx in order:
            target = times[idx]
            n_steps = int(np.ceil((target - now) / dt)) if target > now else 0
            h = (target - now) / n_steps if n_steps else 0.0
            for _ in range(n_steps):
                k1x, k1y = rhs(x, y)
                k2x, k2y = rhs(x + h / 2 * k1x, y + h / 2 * k1y)
                k3x, k3y = rhs(x + h / 2 * k2x, y + h / 2 * k2y)
                k4x, k4y = rhs(x + h * k3x, y + h * k3y)
                x = x + h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x)
                y = y + h / 6 * (k1y + 2 * k2y + 2 * k3y + k4y)
                bad = ~(np.isfinite(x) & np.isfinite(y)) | (np.abs(x) > BLOW_UP)
                bad |= np.abs(y) > BLOW_UP
                x, y = np.where(bad, BLOW_UP, x), np.where(bad, BLOW_UP, y)
            now = max(now, target)
            out[:, idx, 0], out[:, idx, 1] = x, y
    return out


class PopulationGoal(Goal):
    """Predict both populations at a time; metric: mean absolute error over the pair."""

    name = "direct"
    norm_mu = 8.327445247142364
    norm_sigma = 17.548285564117467
    kind = "error"

    def task_text(self, include_prior: bool) -> str:
        if include_prior:
            return "Your goal is to predict the populations of prey and predators at a given time."
        return "Your goal is to predict the two outputs of a function at a given input."

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
        return "\n".join(
            [
                self.task_text(include_prior),
                "Conduct experiments to learn the dynamics.",
                story,
                OBSERVE,
                ANSWER,
            ]
        )

    def naive_system_message(self, include_prior: bool) -> str:
        if self.env.fidelity == "faithful":  # upstream quirk: the novice is told one number
            return naive_message(
                self.task_text(include_prior),
                "Reply inside <answer></answer> tags with a single number.",
            )
        return naive_message(self.task_text(include_prior), ANSWER)

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


OBSERVE = (
    "Write your reasoning inside <thought></thought> tags and the time you choose inside "
    "<observe></observe> tags."
)
ANSWER = (
    "When asked a question, reply inside <answer></answer> tags with two numbers in the "
    "format [prey, predators], e.g. <answer>[2, 3]</answer>."
)


class LotkaVolterra(BoxingEnv):
    """Predator–prey: design = a time in [0, 50], outcome = ``(prey, predators)``."""

    name = "lotka_volterra"
    goals = ("direct",)
    supports_eig = False

    def make_goal(self, name: str) -> Goal:
        return PopulationGoal(self)

    def true_observation(self, t: float) -> np.ndarray:
        """The observed populations at ``t`` under the true θ (``odeint``, as upstream)."""
        params = {k: float(np.asarray(v)[0]) for k, v in self.theta.items()}
        return observe(true_state(params, t))

    def validate(self, design_text: str) -> float:
        try:
            t = parse_float(design_text)
        except (ValueError, TypeError):
            raise InvalidDesign("Input must be a float.") from None
        if not T_LOW <= t <= T_HIGH:
            raise InvalidDesign(f"Input must be between {T_LOW:g} and {T_HIGH:g}.")
        return t

    def draw_outcome(self, design: Any) -> tuple[int, int]:
        prey, pred = self.true_observation(float(design))
        return int(prey), int(pred)

    def sample_design(self, rng: np.random.Generator) -> float:
        return float(rng.uniform(T_LOW, T_HIGH))

    def format_design(self, design: Any) -> str:
        return format_number(float(design), 2)

    def format_outcome(self, y: Any) -> str:
        prey, pred = y
        return f"[{int(prey)}, {int(pred)}]"

    def prior_sample(self, n: int, rng: np.random.Generator) -> Theta:
        return {k: rng.normal(PRIOR_MEAN[k], PRIOR_SD[k], n) for k in NAMES}

    def simulate(self, theta: Theta, design: Any, rng: np.random.Generator) -> np.ndarray:
        """The (deterministic) observation of every sample, shape ``(S, 2)``."""
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

    def posterior_sample(
        self, n: int, rng: np.random.Generator, data: Sequence[tuple[Any, Any]] | None = None
    ) -> Theta:
        """Exact prior importance sampling with the indicator likelihood; raises
        :class:`PosteriorUnavailable` when no prior draw reproduces the data."""
        data = self.data if data is None else data
        if not data:
            return self.prior_sample(n, rng)
        proposals = self.prior_sample(max(20 * n, 20_000), rng)
        log_w = self.data_log_likelihood(proposals, data)
        if not np.isfinite(log_w).any():
            raise PosteriorUnavailable(
                f"none of {log_w.size} prior draws reproduces the {len(data)} observed "
                "population pairs exactly (deterministic model); the posterior is too narrow "
                "for prior importance sampling"
            )
        weights, _ = normalized_weights(log_w)
        index = systematic_resample(weights, n, rng)
        return {k: v[index] for k, v in proposals.items()}

    def exact_eig(self, design: Any, data: Sequence[tuple[Any, Any]] | None = None) -> None:
        """Not available: the published code has no EIG for this environment, and with a
        noise-free simulator the likelihood is an indicator, so NMC does not apply."""
        return None

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
