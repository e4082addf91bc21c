"""The shared interface of the ten BoxingGym environments and their goals.

An environment (:class:`BoxingEnv`) is a simulator with latent parameters ``theta`` drawn from a
prior; an agent proposes designs as text, :meth:`BoxingEnv.run` validates one, simulates one
outcome from the true ``theta`` and returns the outcome text. A :class:`Goal` wraps an
environment with prompts, evaluation questions and a standardised score (it lives in
:mod:`silicolab.envs.boxinggym.goal` and is re-exported here, as are its companions).

Every environment also exposes a *vectorised* Bayesian model (``prior_sample``, ``simulate``,
``log_likelihood``, ``posterior_sample``) over parameter samples ``Theta`` -- a dict of arrays
sharing a leading dimension ``S`` -- which :mod:`silicolab.envs.boxinggym.eig` uses for the
nested Monte Carlo EIG and the EI regret, and which goals use for Bayes-optimal answers.

Two fidelities: ``"fixed"`` corrects every upstream bug the spec lists, ``"faithful"``
reproduces them (crashes become :class:`InvalidDesign` with the upstream message). Posterior
helpers (:func:`importance_posterior`, :func:`grid_posterior`, :func:`systematic_resample`)
live in :mod:`silicolab.envs.boxinggym.posterior` and are re-exported here.
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import numpy as np

from silicolab.core import seeding
from silicolab.core.errors import InputError
from silicolab.envs.base import FIDELITIES, EnvSpec, Fidelity, check_fidelity
from silicolab.envs.boxinggym import parsing
from silicolab.envs.boxinggym.goal import Goal, ParameterGoal, Question, Score, SquaredErrorGoal
from silicolab.envs.boxinggym.posterior import (
    grid_posterior,
    importance_posterior,
    smc_posterior,
    systematic_resample,
)
from silicolab.envs.boxinggym.text import (
    ANSWER_FORMAT,
    NAIVE_KNOWLEDGE_HEADER,
    OBSERVE_FORMAT,
    communication_prompt,
    naive_message,
    to_jsonable,
)
from silicolab.envs.errors import InvalidAction

Theta = dict[str, np.ndarray]
#: BoxingGym's name for the refusal error every environment raises (one class).
InvalidDesign = InvalidAction
__all__ = [
    "ANSWER_FORMAT",
    "FIDELITIES",
    "NAIVE_KNOWLEDGE_HEADER",
    "OBSERVE_FORMAT",
    "BoxingEnv",
    "Fidelity",
    "Goal",
    "InvalidDesign",
    "ParameterGoal",
    "Question",
    "Score",
    "SquaredErrorGoal",
    "Theta",
    "TimeDesignEnv",
    "communication_prompt",
    "grid_posterior",
    "importance_posterior",
    "naive_message",
    "smc_posterior",
    "systematic_resample",
    "theta_size",
    "theta_take",
    "to_jsonable",
]


class PosteriorUnavailable(RuntimeError):
    """The environment cannot sample a posterior for these data (e.g. deterministic
    observations that no parameter value reproduces); the message says why."""


# --- environments -------------------------------------------------------------------------------


class BoxingEnv(ABC):
    """A BoxingGym environment: text interface plus a vectorised Bayesian model.

    Subclass contract: set ``name`` and ``goals``; store model constants *before* calling
    ``super().__init__`` (which draws ``theta`` via :meth:`prior_sample` and builds the goal via
    :meth:`make_goal`); implement the abstract methods. ``theta`` arrays have leading dim 1.
    """

    name: ClassVar[str]
    goals: ClassVar[tuple[str, ...]]
    #: the names of the goals' :class:`Goal` classes in the env's module, in the order of
    #: ``goals``, from which the default :meth:`make_goal` builds one.
    goal_classes: ClassVar[tuple[str, ...]] = ()
    #: the attributes :meth:`params` lists (the env's configuration constants).
    param_names: ClassVar[tuple[str, ...]] = ()
    #: the registration record, set by :func:`silicolab.envs.make`.
    spec: EnvSpec | None = None
    #: faithful NMC inner-block layout: "after_outer" = indices N + n*M..., "from_start" = n*M...
    nmc_inner_layout: ClassVar[Literal["after_outer", "from_start"]] = "after_outer"
    #: False for an environment without an EIG (predator-prey); nmc_eig then raises.
    supports_eig: ClassVar[bool] = True
    #: (N, M) of the fixed NMC estimator; lower it only with a measured accuracy check.
    fixed_nmc: ClassVar[tuple[int, int]] = (2000, 2000)
    #: (N, M) of the published estimator (emotion and morals used N = 100).
    faithful_nmc: ClassVar[tuple[int, int]] = (1000, 10)
    #: "duplicating" reproduces the published row-duplicating shuffle in faithful mode.
    faithful_shuffle: ClassVar[Literal["permutation", "duplicating"]] = "permutation"

    def __init__(
        self,
        *,
        goal: str = "direct",
        include_prior: bool = True,
        fidelity: str = "fixed",
        seed: int | None = 0,
    ) -> None:
        check_fidelity(fidelity)
        if goal not in self.goals:
            raise InputError(
                f"{self.name} has goals {list(self.goals)}; got {goal!r} - pick one of those"
            )
        if not include_prior:
            refuse_without_prior(self.name, goal)
        self.include_prior = bool(include_prior)
        self.fidelity: str = fidelity
        self.seed = seed
        self.data: list[tuple[Any, Any]] = []
        self.theta: Theta = {}
        self.posterior_cache: Any = None  # an eig.PosteriorCache, created on first use
        self.reset(seed)
        self.goal: Goal = self.make_goal(goal)

    @classmethod
    def factory(
        cls,
        *,
        goal: str = "direct",
        prior: bool = True,
        fidelity: Fidelity = "fixed",
        seed: int | None = 0,
        **params: Any,
    ) -> BoxingEnv:
        """The environment from the registry's keywords: ``prior`` is ``include_prior``,
        ``params`` are the class's own options (an unknown one is a ``TypeError``)."""
        return cls(goal=goal, include_prior=prior, fidelity=fidelity, seed=seed, **params)

    # lifecycle --------------------------------------------------------------------------------
    def rng_for(self, *role: str | int) -> np.random.Generator:
        """A generator for ``role`` derived from this env's seed and name (no global RNG)."""
        return seeding.rng(self.seed, "boxinggym", self.name, *role)

    def reset(self, seed: int | None = None) -> None:
        """Draw a new true ``theta`` from the prior and clear the data.

        ``seed`` replaces the env's seed when given; ``reset()`` with the same seed reproduces
        the same ``theta`` and outcome stream (``seed=None`` at construction = OS entropy).
        """
        if seed is not None:
            self.seed = seed
        self.theta = self.prior_sample(1, self.rng_for("theta"))
        self.rng = self.rng_for("outcomes")
        self.data = []

    def make_goal(self, name: str) -> Goal:
        """The :class:`Goal` called ``name`` (one of ``goals``) for this env."""
        if not self.goal_classes:
            raise NotImplementedError(f"{type(self).__name__} names no goal classes")
        class_name = self.goal_classes[self.goals.index(name)]
        for klass in type(self).__mro__:  # the module that declared goal_classes
            goal_type = getattr(sys.modules.get(klass.__module__), class_name, None)
            if goal_type is not None:
                goal: Goal = goal_type(self)
                return goal
        raise NotImplementedError(f"no goal class {class_name!r} for {type(self).__name__}")

    def describe(self) -> str:
        """The scientist's system message for this env's goal and prior flag."""
        return self.goal.system_message(self.include_prior)

    # text interface ---------------------------------------------------------------------------
    @abstractmethod
    def validate(self, design_text: str) -> Any:
        """The parsed design, or raise :class:`InvalidDesign` with the agent-facing message."""

    def run(self, design_text: str) -> str:
        """Validate, draw one outcome from the true ``theta``, record it, return its text."""
        design = self.validate(design_text)
        outcome = self.draw_outcome(design)
        self.data.append((design, outcome))
        return self.format_outcome(outcome)

    def draw_outcome(self, design: Any) -> Any:
        """One outcome from the true ``theta`` (override for fixed-table envs like IRT)."""
        y = self.simulate(self.theta, design, self.rng)
        return self.outcome_value(np.asarray(y)[0])

    def outcome_value(self, y: np.ndarray) -> Any:
        """The stored numeric outcome for one simulated row (scalar -> Python number)."""
        y = np.asarray(y)
        if y.ndim == 0:
            return y.item()
        return tuple(to_jsonable(y))

    @abstractmethod
    def sample_design(self, rng: np.random.Generator) -> Any:
        """The spec's random design (for regret and norms)."""

    def format_design(self, design: Any) -> str:
        """The design as an agent would write it."""
        return str(to_jsonable(design))

    def format_outcome(self, y: Any) -> str:
        """The outcome text the agent sees."""
        return str(to_jsonable(y))

    # vectorised Bayesian model ----------------------------------------------------------------
    @abstractmethod
    def prior_sample(self, n: int, rng: np.random.Generator) -> Theta:
        """``n`` parameter samples from the prior."""

    def log_prior(self, theta: Theta) -> np.ndarray:
        """``log p(theta[s])`` up to a constant, ``-inf`` off the support, shape ``(S,)``.

        Needed only by MCMC-based posteriors (:func:`~silicolab.envs.boxinggym.posterior.
        smc_posterior`); envs using such a sampler implement it.
        """
        raise NotImplementedError(f"{type(self).__name__} defines no log_prior")

    @abstractmethod
    def simulate(self, theta: Theta, design: Any, rng: np.random.Generator) -> np.ndarray:
        """One outcome per sample, shape ``(S, *outcome_shape)``."""

    @abstractmethod
    def log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """``log p(y[s] | theta[s], design)``, shape ``(S,)``."""

    def cross_log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """All pairs: ``out[n, m] = log p(y[n] | theta[m], design)``, shape ``(N, M)``.

        The default tiles and calls :meth:`log_likelihood` in memory-bounded chunks; envs with
        a cheap per-theta summary (a mean, a probability) override it to broadcast instead.
        """
        y = np.asarray(y)
        n_y = y.shape[0]
        n_t = len(next(iter(theta.values())))
        out = np.empty((n_y, n_t))
        rows = max(1, 2_000_000 // max(n_t, 1))
        for start in range(0, n_y, rows):
            block = y[start : start + rows]
            b = block.shape[0]
            y_rep = np.repeat(block, n_t, axis=0)
            th_rep = {k: np.tile(v, (b,) + (1,) * (v.ndim - 1)) for k, v in theta.items()}
            out[start : start + b] = self.log_likelihood(y_rep, th_rep, design).reshape(b, n_t)
        return out

    def faithful_log_likelihood(
        self, y: np.ndarray, theta: Theta, design: Any, *, inner: bool
    ) -> np.ndarray:
        """The log-likelihood the *published* NMC used (its +0.001 hacks, per-individual means,
        ...), shape ``(S,)``; the default is the true :meth:`log_likelihood`."""
        return self.log_likelihood(y, theta, design)

    def data_log_likelihood(
        self, theta: Theta, data: Sequence[tuple[Any, Any]] | None = None
    ) -> np.ndarray:
        """``sum_i log p(y_i | theta[s], x_i)`` over ``data`` (default ``self.data``), ``(S,)``."""
        data = self.data if data is None else data
        n = len(next(iter(theta.values())))
        total = np.zeros(n)
        for design, outcome in data:
            y = np.asarray(outcome)
            total += self.log_likelihood(np.broadcast_to(y, (n, *y.shape)), theta, design)
        return total

    def posterior_sample(
        self,
        n: int,
        rng: np.random.Generator,
        data: Sequence[tuple[Any, Any]] | None = None,
    ) -> Theta:
        """``n`` samples from ``p(theta | data)`` (default ``self.data``): exact prior
        samples without data, else :meth:`sample_posterior`."""
        data = self.data if data is None else data
        if not data:
            return self.prior_sample(n, rng)
        return self.sample_posterior(n, rng, data)

    def sample_posterior(
        self, n: int, rng: np.random.Generator, data: Sequence[tuple[Any, Any]]
    ) -> Theta:
        """``n`` samples from ``p(theta | data)`` for non-empty ``data``: self-normalised
        importance sampling from the prior with systematic resampling
        (:func:`importance_posterior`). Override with an exact, grid or MCMC sampler when
        the likelihood is peaked."""
        return importance_posterior(self, n, rng, data)

    def exact_eig(self, design: Any, data: Sequence[tuple[Any, Any]] | None = None) -> float | None:
        """Exact mutual information of ``design`` given ``data`` where feasible, else ``None``."""
        return None

    def eig_estimate(
        self,
        design: Any,
        outer: Theta,
        inner: Theta,
        *,
        estimator: str,
        rng: np.random.Generator,
    ) -> float:
        """The NMC estimate for one design from ``outer`` (N) and ``inner`` samples.

        ``inner`` has leading dim M (fixed: shared by all outer samples) or N*M (faithful: block
        n belongs to outer sample n). Override only for a non-standard published estimator.
        """
        from silicolab.envs.boxinggym import eig

        nmc = eig.nmc_fixed if estimator == "fixed" else eig.nmc_faithful
        return nmc(self, design, outer, inner, rng)

    # records ----------------------------------------------------------------------------------
    def __repr__(self) -> str:
        from silicolab.envs.base import env_repr

        goal = getattr(getattr(self, "goal", None), "name", None)
        return env_repr(
            self, f"boxinggym/{self.name}", goal=goal, prior=self.include_prior,
            fidelity=self.fidelity, seed=self.seed,
        )  # fmt: skip

    def params(self) -> dict[str, Any]:
        """The env's configuration constants (for records): :attr:`param_names`."""
        return {name: getattr(self, name) for name in self.param_names}

    def to_record(self) -> dict[str, Any]:
        """A JSON-ready description: id, goal, prior flag, fidelity, seed, theta, data."""
        return {
            "env": f"boxinggym/{self.name}",
            "goal": self.goal.name,
            "include_prior": self.include_prior,
            "fidelity": self.fidelity,
            "seed": self.seed,
            "params": to_jsonable(self.params()),
            "theta": {k: to_jsonable(np.asarray(v)[0]) for k, v in self.theta.items()},
            "data": [[to_jsonable(d), to_jsonable(y)] for d, y in self.data],
        }


class TimeDesignEnv(BoxingEnv):
    """An environment whose design is one time in ``[t_low, t_high]`` (peregrines,
    predator-prey): its validation with the published messages, its random design
    (uniform) and the design's text (two decimals)."""

    t_low: ClassVar[float]
    t_high: ClassVar[float]

    def validate(self, design_text: str) -> float:
        """The time written, or :class:`InvalidDesign` if it is not a number in range."""
        try:
            t = parsing.parse_float(design_text)
        except (ValueError, TypeError):
            raise InvalidDesign("Input must be a float.") from None
        if not self.t_low <= t <= self.t_high:
            raise InvalidDesign(f"Input must be between {self.t_low:g} and {self.t_high:g}.")
        return t

    def sample_design(self, rng: np.random.Generator) -> float:
        """A time uniform on ``[t_low, t_high]``."""
        return float(rng.uniform(self.t_low, self.t_high))

    def format_design(self, design: Any) -> str:
        """The time with at most two decimals."""
        return parsing.format_number(float(design), 2)


def refuse_without_prior(env: str, goal: str) -> None:
    """Raise :class:`InputError` when ``goal`` of ``env`` is a parameter-estimation goal
    (its registry entry says ``prior_only``): asking for a model parameter makes sense only
    in the model's own terms, which the no-prior prompt hides, so upstream never ran it."""
    from silicolab.envs.registry import spec

    if spec(f"boxinggym/{env}").goal(goal).prior_only:
        raise InputError(
            f"boxinggym/{env} goal {goal!r} asks for a model parameter and runs only with the "
            f"prior (as in the paper); drop --no-prior (prior=False) or pick goal 'direct'"
        )


def theta_size(theta: Theta) -> int:
    """The common leading dimension ``S`` of a :data:`Theta`."""
    return len(next(iter(theta.values())))


def theta_take(theta: Theta, index: np.ndarray | slice) -> Theta:
    """The samples ``index`` of every parameter array (a new Theta; arrays may be views)."""
    return {k: v[index] for k, v in theta.items()}
