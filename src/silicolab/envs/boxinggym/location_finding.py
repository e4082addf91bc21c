"""Location finding (spec section 3): find K signal sources on the plane from noisy intensities.

Model (Foster et al. 2021, observing the raw intensity): K sources theta_k ~ N(0, I_d); the
noise-free intensity at x is mu(x) = b + sum_k alpha / (m + |theta_k - x|^2) and an observation
is y ~ N(mu(x), sigma^2), shown and stored rounded to 2 decimals. Designs are points written as
``[0.5, 1]``; there are no bounds. Goals: ``direct`` (predict mu at x ~ N(0, I)) and ``source``
(predict the K source coordinates; prior only, one question).

Posterior (fixed): exact prior samples without data, else adaptive-tempering SMC
(:func:`~silicolab.envs.boxinggym.posterior.smc_posterior`, with one-source block moves, see
``SMC_SETTINGS``) -- the likelihood is far too peaked for prior importance sampling after a few
observations near a source. Faithful mode samples the
published (buggy) posterior model instead: only ``range(d)`` of the K sources enter, and their
squared distances are summed over all observations and coordinates into one scalar shared by
every data point. Faithful NMC also reproduces the row-duplicating shuffle (``faithful_shuffle``).

This module is the style exemplar for the other environments.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
from scipy import integrate, stats

from silicolab.envs.boxinggym import parsing
from silicolab.envs.boxinggym.base import (
    OBSERVE_FORMAT,
    BoxingEnv,
    Goal,
    InvalidDesign,
    Question,
    SquaredErrorGoal,
    Theta,
    communication_prompt,
    naive_message,
    smc_posterior,
)

ERR_NOT_FLOATS = "Error: Input must be a list of floating-point numbers."
ERR_LENGTH = "Error: Input must be a list of length equal to the dimension of the environment."
_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
#: Tempering keeps 80% ESS per stage; each stage makes 8 moves (10 at the end) that alternate
#: a full-covariance random walk with a one-source block move whose step size is drawn from a
#: 1e-4..1 ladder (weighted towards the sizes that moved furthest). Steps are uniform, not
#: Gaussian: equally valid, 5x cheaper to draw. Against long-run references this matches the
#: previous all-Gaussian 8/16-move schedule after 3 observations and is far closer with 10
#: observations near the sources, where a bright reading pins a source to a ring of width ~1e-4
#: that a shared-covariance walk cannot follow (see docs/boxinggym.md). ~25 ms for 4000
#: particles and 3 observations.
SMC_SETTINGS: dict[str, Any] = {
    "ess_fraction": 0.8,
    "moves_per_stage": 8,
    "final_moves": 10,
    "increments": "uniform",
}


def intensity(sources: np.ndarray, x: np.ndarray, b: float, m: float, alpha: float) -> np.ndarray:
    """Noise-free intensity of sources ``(S, K, d)`` at a point ``x`` ``(d,)``, shape ``(S,)``.

    Written as explicit loops over the (few) sources and coordinates on contiguous length-S
    rows: numpy reductions over tiny trailing axes and strided columns cost 3-5x more, and this
    runs once per block of the NMC matrix and once per SMC move.
    """
    return intensity_at_points(sources, np.asarray(x, dtype=float)[None, :], b, m, alpha)[:, 0]


def intensity_at_points(
    sources: np.ndarray, points: np.ndarray, b: float, m: float, alpha: float
) -> np.ndarray:
    """Noise-free intensity of sources ``(S, K, d)`` at each of ``points`` ``(T, d)``, shape
    ``(S, T)`` (see :func:`intensity`)."""
    columns = np.ascontiguousarray(np.moveaxis(np.asarray(sources, dtype=float), 0, -1))
    points = np.asarray(points, dtype=float)
    total = np.full((points.shape[0], columns.shape[-1]), float(b))  # (T, S): contiguous rows
    squared = np.empty_like(total)
    for k in range(columns.shape[0]):
        squared.fill(m)
        for j in range(columns.shape[1]):
            diff = np.subtract.outer(points[:, j], columns[k, j])
            diff *= diff
            squared += diff
        np.divide(alpha, squared, out=squared)
        total += squared
    return total.T


class LocationFinding(BoxingEnv):
    """The location-finding environment (``boxinggym/location_finding``)."""

    name = "location_finding"
    goals = ("direct", "source")
    goal_classes = ("DirectGoal", "SourceGoal")
    param_names = ("num_sources", "dim", "b", "m", "alpha", "sigma")
    faithful_shuffle = "duplicating"

    def __init__(
        self,
        *,
        num_sources: int = 3,
        dim: int = 2,
        b: float = 0.1,
        m: float = 1e-4,
        alpha: float = 1.0,
        sigma: float = 0.5,
        **kwargs: Any,
    ) -> None:
        self.num_sources, self.dim = int(num_sources), int(dim)
        self.b, self.m, self.alpha, self.sigma = float(b), float(m), float(alpha), float(sigma)
        super().__init__(**kwargs)

    # text interface ---------------------------------------------------------------------------
    def validate(self, design_text: str) -> np.ndarray:
        """A point of length ``dim``; fixed mode also refuses nan/inf (same message)."""
        cast = parsing.parse_float if self.fidelity == "fixed" else float
        try:
            values = parsing.parse_number_list(str(design_text), cast=cast)
        except ValueError:
            raise InvalidDesign(ERR_NOT_FLOATS) from None
        if len(values) != self.dim:
            raise InvalidDesign(ERR_LENGTH)
        return np.asarray(values, dtype=float)

    def sample_design(self, rng: np.random.Generator) -> np.ndarray:
        """x ~ U(-2, 2)^d."""
        return rng.uniform(-2.0, 2.0, self.dim)

    def format_design(self, design: Any) -> str:
        """``[0.5, 1.0]``."""
        return parsing.format_list(design, digits=4)

    def outcome_value(self, y: np.ndarray) -> float:
        """The intensity rounded to 2 decimals, as shown to the agent."""
        return round(float(y), 2)

    def format_outcome(self, y: Any) -> str:
        """``12.34``."""
        return parsing.format_number(float(y), 2)

    # model ------------------------------------------------------------------------------------
    def noise_free(self, theta: Theta, x: Any) -> np.ndarray:
        """mu(x) for every sample in ``theta``, shape ``(S,)``."""
        return intensity(theta["sources"], x, self.b, self.m, self.alpha)

    def prior_sample(self, n: int, rng: np.random.Generator) -> Theta:
        """Sources ``(n, K, d)`` iid standard normal."""
        return {"sources": rng.standard_normal((n, self.num_sources, self.dim))}

    def log_prior(self, theta: Theta) -> np.ndarray:
        """Standard-normal log density up to a constant."""
        flat = theta["sources"].reshape(len(theta["sources"]), -1)
        return -0.5 * np.einsum("ij,ij->i", flat, flat)

    def simulate(self, theta: Theta, design: Any, rng: np.random.Generator) -> np.ndarray:
        """y ~ N(mu(x), sigma^2) per sample (unrounded), shape ``(S,)``."""
        mean = self.noise_free(theta, design)
        return mean + self.sigma * rng.standard_normal(mean.shape)

    def log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """Gaussian log density of ``y[s]`` around mu(x; theta[s])."""
        z = (np.asarray(y, dtype=float) - self.noise_free(theta, design)) / self.sigma
        return -0.5 * z**2 - np.log(self.sigma) - _LOG_SQRT_2PI

    def cross_log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """All pairs by broadcasting: mu is computed once per theta sample, then three passes
        over the ``(N, M)`` matrix (difference, square, ``-c - z^2``)."""
        scale = 1.0 / (np.sqrt(2.0) * self.sigma)
        mean = self.noise_free(theta, design) * scale
        z = np.subtract.outer(np.asarray(y, dtype=float).reshape(-1) * scale, mean)
        np.square(z, out=z)
        return np.subtract(-(np.log(self.sigma) + _LOG_SQRT_2PI), z, out=z)

    def data_log_likelihood(
        self, theta: Theta, data: Sequence[tuple[Any, Any]] | None = None
    ) -> np.ndarray:
        """``sum_i log N(y_i; mu(x_i; theta[s]), sigma^2)`` over ``data``, all points at once."""
        data = self.data if data is None else data
        size = len(theta["sources"])
        if not data:
            return np.zeros(size)
        points = np.asarray([np.asarray(d, dtype=float) for d, _ in data])
        ys = np.asarray([float(y) for _, y in data])
        z = intensity_at_points(theta["sources"], points, self.b, self.m, self.alpha)
        np.subtract(ys, z, out=z)
        z *= 1.0 / self.sigma
        np.square(z, out=z)
        return -0.5 * z.sum(axis=1) - len(data) * (np.log(self.sigma) + _LOG_SQRT_2PI)

    def buggy_data_log_likelihood(self, theta: Theta, data: Sequence[tuple[Any, Any]]) -> Any:
        """The published posterior model's log-likelihood (faithful mode only).

        Sources ``k in range(d)`` only; for each, one squared distance summed over every
        observation and coordinate; a single shared mean b + sum_k alpha / (m + D_k) for all y.
        """
        xs = np.asarray([np.asarray(d, dtype=float) for d, _ in data])  # (T, d)
        ys = np.asarray([float(y) for _, y in data])
        used = theta["sources"][:, : self.dim, :]  # (S, d, d): the first d sources
        distance = np.sum((used[:, :, None, :] - xs[None, None, :, :]) ** 2, axis=(2, 3))
        mean = self.b + np.sum(self.alpha / (self.m + distance), axis=1)
        z = (ys[None, :] - mean[:, None]) / self.sigma
        return np.sum(-0.5 * z**2 - np.log(self.sigma) - _LOG_SQRT_2PI, axis=1)

    def sample_posterior(
        self, n: int, rng: np.random.Generator, data: Sequence[tuple[Any, Any]]
    ) -> Theta:
        """Prior draws without data; else tempered SMC on the true (fixed) or published
        (faithful) posterior model."""
        data = list(data)
        log_likelihood = None
        if self.fidelity == "faithful":

            def log_likelihood(theta: Theta) -> np.ndarray:
                return self.buggy_data_log_likelihood(theta, data)

        blocks = [
            list(range(k * self.dim, (k + 1) * self.dim)) for k in range(self.num_sources)
        ]  # one block per source in the flattened (K, d) layout
        return smc_posterior(
            self, n, rng, data, log_likelihood=log_likelihood, blocks=blocks, **SMC_SETTINGS
        )


# --- goals --------------------------------------------------------------------------------------

_EXAMPLE = "<thought>your reasoning</thought><observe>[0.5, 1]</observe>"


def _observe_text(env: LocationFinding, include_prior: bool) -> str:
    d = env.dim
    if include_prior:
        return (
            f"You choose where to measure: give one point as a list of {d} floating-point numbers "
            "and you receive the measured signal intensity there (measurements are noisy)."
        )
    return (
        f"Each point of a {d}-dimensional space carries a floating-point value. You observe it "
        f"by giving one point as a list of {d} floating-point numbers."
    )


class _LocationGoal(Goal):
    """What both goals tell the scientist: the sources' story (with the prior), the goal,
    :attr:`advice`, how to observe a point (with an example in tags), how to answer."""

    observe_format = f"{OBSERVE_FORMAT} For example: {_EXAMPLE}"
    #: the lines between the goal and the observation rules
    advice: ClassVar[tuple[str, ...]] = ()
    env: LocationFinding

    def system_message(self, include_prior: bool) -> str:
        """Scientist prompt: story (with prior) or abstract function, goal, formats."""
        env = self.env
        story = (
            f"Signals from {env.num_sources} sources of identical strength add up at every "
            "point of a plane; where the sources are is unknown to you. "
            if include_prior
            else ""
        )
        return self.scientist_prompt(
            story + self.task_text(include_prior), *self.advice, _observe_text(env, include_prior)
        )


class DirectGoal(_LocationGoal, SquaredErrorGoal):
    """Predict the noise-free intensity at a random point x ~ N(0, I_d)."""

    name = "direct"
    norm_mu = 12.59
    norm_sigma = 38.03
    raw_clip = (0.0, 10000.0)
    advice = ("Run experiments to learn how the value depends on the point, then predict.",)

    def task_text(self, include_prior: bool) -> str:
        """The goal sentence."""
        if include_prior:
            return "Your goal is to predict the signal intensity at any point of the plane."
        d = self.env.dim
        return (
            "Your goal is to predict the scalar floating-point value attached to any "
            f"{d}-dimensional point."
        )

    def naive_system_message(self, include_prior: bool) -> str:
        """Fixed: task + answer format + header. Faithful: the header only (the published
        naive message overwrote the goal and format text)."""
        if self.env.fidelity == "faithful":
            return naive_message("", "")
        return naive_message(self.task_text(include_prior))

    def comm_prompt(self, include_prior: bool, word_limit: int = 200) -> str:
        """With prior, also ask for heuristics usable without knowing the source positions."""
        extra = (
            "Include practical rules of thumb for predicting the intensity at a point without "
            "knowing exactly where the sources are."
            if include_prior
            else ""
        )
        return communication_prompt(word_limit, extra)

    def questions(self, n: int, rng: np.random.Generator) -> list[Question]:
        """Points from N(0, I_d), rounded to the 2 decimals the question shows; truth = the
        noise-free intensity under the true sources *at the point shown*, so an agent exact
        at the point it was asked about scores 0 (scoring at the unrounded point gave such an
        agent errors up to ~44 near a source)."""
        out = []
        for _ in range(n):
            point = np.round(rng.standard_normal(self.env.dim), 2)
            truth = float(self.env.noise_free(self.env.theta, point)[0])
            where = parsing.format_list(point, digits=2)
            if self.env.include_prior:
                text = f"What is the signal intensity at the location {where}?"
            else:
                text = f"What is the scalar value at the coordinates {where}?"
            text += (
                " Reply with one number rounded to two decimals, as "
                "<thought>your reasoning</thought><answer>your number</answer>."
            )
            out.append(Question(text=text, truth=truth, point=point))
        return out

    def bayes_answer(self, question: Question, theta: Theta, rng: np.random.Generator) -> float:
        """The posterior-predictive mean of the noise-free intensity (minimises the MSE)."""
        return float(np.mean(self.env.noise_free(theta, question.point)))

    def prior_mean_answer(self, question: Question) -> float:
        """The prior mean of mu(x), by 1-D quadrature over the noncentral chi-square."""
        env = self.env
        point = np.asarray(question.point, dtype=float)
        per_source = _prior_inverse_mean(float(point @ point), env.dim, env.m)
        return env.b + env.num_sources * env.alpha * per_source


@lru_cache(maxsize=1024)
def _prior_inverse_mean(noncentrality: float, dim: int, m: float) -> float:
    """E[1 / (m + U)] for U = |theta - x|^2 ~ noncentral chi-square(dim, |x|^2)."""
    dist = stats.ncx2(dim, max(noncentrality, 1e-12))
    head = integrate.quad(lambda u: dist.pdf(u) / (m + u), 0.0, 1.0, points=[m, 10 * m])[0]
    tail = integrate.quad(lambda u: dist.pdf(u) / (m + u), 1.0, np.inf)[0]
    return head + tail


class SourceGoal(_LocationGoal):
    """Predict the K source coordinates (one question; permutation-minimised MSE)."""

    name = "source"
    norm_mu = 1.57
    norm_sigma = 1.15385
    num_evals = 1

    def task_text(self, include_prior: bool) -> str:
        """The goal sentence."""
        k = self.env.num_sources
        if include_prior:
            return f"Your goal is to find where the {k} signal sources are."
        return f"Your goal is to find the {k} special points that determine the values."

    def questions(self, n: int, rng: np.random.Generator) -> list[Question]:
        """One question (``num_evals`` = 1); truth = the true sources ``(K, d)``."""
        k, d = self.env.num_sources, self.env.dim
        example = "[" + ", ".join(["[" + ", ".join(["1"] * d) + "]"] * k) + "]"
        text = (
            f"Where are the {k} sources? Answer with a list of {k} lists of {d} numbers, "
            f"for example <answer>{example}</answer>."
        )
        truth = np.asarray(self.env.theta["sources"][0]).tolist()
        return [Question(text=text, truth=truth) for _ in range(n)]

    def parse_answer(self, text: str) -> list[list[float]] | None:
        """A K x d list literal (read with ``ast.literal_eval``, never ``eval``)."""
        return parsing.numeric_matrix(text, self.env.num_sources, self.env.dim)

    def question_value(self, prediction: Any, question: Question) -> float:
        """Minimum over orderings of the predictions of the mean squared coordinate error."""
        return float(_aligned_errors(np.asarray(prediction, float), np.asarray(question.truth))[0])

    def missing_value(self, question: Question) -> float:
        """An unparseable answer scores as the prior-mean answer (all sources at the origin)."""
        return self.question_value(self.prior_mean_answer(question), question)

    def bayes_answer(self, question: Question, theta: Theta, rng: np.random.Generator) -> Any:
        """A permutation-aligned posterior mean: each sample's sources are relabelled to best
        match the current mean, which is then recomputed (a few rounds)."""
        samples = np.asarray(theta["sources"], dtype=float)  # (S, K, d)
        perms = np.asarray(list(itertools.permutations(range(self.env.num_sources))))
        mean = samples[0]
        for _ in range(5):
            costs = ((samples[:, perms, :] - mean) ** 2).sum(axis=(2, 3))  # (S, P)
            best = perms[np.argmin(costs, axis=1)]  # (S, K)
            aligned = np.take_along_axis(samples, best[:, :, None], axis=1)
            mean = aligned.mean(axis=0)
        return mean.tolist()

    def prior_mean_answer(self, question: Question) -> list[list[float]]:
        """All sources at the origin."""
        return [[0.0] * self.env.dim for _ in range(self.env.num_sources)]


def _aligned_errors(prediction: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Permutation-minimised mean squared error; returns ``[min_error]``."""
    k = len(truth)
    errors = [np.mean((prediction[list(p)] - truth) ** 2) for p in itertools.permutations(range(k))]
    return np.asarray([min(errors)])


#: The registry's factory (``prior`` is ``include_prior``; other keywords go to the class).
make_location_finding = LocationFinding.factory
