"""Predator–prey, the posterior: ABC-SMC to exactness (:func:`constrained_smc`).

The posterior is the prior restricted to the set of θ that reproduce every observation
exactly -- a thin region (10 observations typically shrink it to 1e-6..1e-8 of the prior
mass), out of reach of prior importance sampling after a few observations. ABC-SMC reaches it:
a tolerance on the largest deviation of the unrounded, clipped states from the observed
integers is lowered stage by stage (30% of the particles survive each), each stage
resampling and moving the particles by random-walk Metropolis under ``prior × 1[deviation ≤
ε]`` (the resample-move kernel of :mod:`~silicolab.envs.boxinggym.smc`, with delayed
acceptance: the prior ratio is tested before the costly integration), and the last stage uses
the exact rounding indicator itself, so every sample reproduces the data exactly. About 0.6 s
for 4000 samples after 10 observations (0.3 s for 1000). Data no θ can produce raise
:class:`PosteriorUnavailable` (:func:`check_data` catches the obvious cases up front).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from silicolab.envs.boxinggym.base import PosteriorUnavailable, Theta
from silicolab.envs.boxinggym.lotka_volterra._model import (
    NAMES,
    POSITIVE_U,
    PRED0,
    PREY0,
    data_distance,
    positive_normal,
    theta_of,
)
from silicolab.envs.boxinggym.smc import (
    ProposalLikelihood,
    Walkers,
    adapted_scale,
    metropolis_step,
    particle_cholesky,
    resample,
)

#: ABC distances and exactness flags of standardised points at a tolerance (see
#: :func:`~silicolab.envs.boxinggym.lotka_volterra._model.data_distance`).
Measure = Callable[[np.ndarray, float], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class SMCSettings:
    """Tuning of :func:`constrained_smc`.

    ``keep``: fraction of particles surviving each tolerance stage. ``min_particles``: the
    smallest population (more particles than requested samples are subsampled at the end).
    ``moved`` / ``final_moved``: a stage's Metropolis moves stop once this fraction of the
    particles has moved at least once (``max_moves`` / ``final_max_moves`` caps).
    ``acceptance``: the acceptance rate the proposal scale is steered to. ``coarse``:
    ``(dt, order)`` of the cheap Taylor integrator used for the tolerance stages (errors
    ~1e-7 typical, ~1e-3 worst, irrelevant against tolerances above 0.5); the exact stage uses
    ``integrate``'s defaults, as the likelihood does. ``max_stages`` and ``stall_window``:
    when the tolerance stops shrinking the data are declared impossible.

    Measured with 4000 samples after 10 random observations (59 episodes): 13 stages on
    average (at most 24), 0.64 s mean, 0.81 s at the 90th percentile; posterior means are
    off by 0.02 posterior sd on average against a 20,000-particle run with slower settings
    (``keep = 0.5`` halves that, at 1.6x the time), i.e. an effective sample size of about
    a third of the particles for means; sds agree to ~1.5%.
    """

    keep: float = 0.3
    min_particles: int = 1000
    moved: float = 0.6
    final_moved: float = 0.8
    max_moves: int = 6
    final_max_moves: int = 20
    acceptance: float = 0.25
    coarse: tuple[float, int] = (1.0, 8)
    max_stages: int = 80
    stall_window: int = 8


SMC_SETTINGS = SMCSettings()


def constrained_smc(
    times: np.ndarray,
    observed: np.ndarray,
    n: int,
    rng: np.random.Generator,
    *,
    settings: SMCSettings = SMC_SETTINGS,
    positive: bool = False,
    diagnostics: dict[str, float] | None = None,
) -> Theta:
    """``n`` exact posterior samples of the deterministic model by ABC-SMC to exactness.

    ``positive`` truncates the prior to positive rates (fixed fidelity's prior, see
    :mod:`~silicolab.envs.boxinggym.lotka_volterra._model`): initial draws are redrawn and moves
    leaving the support rejected.

    Target: the prior restricted to parameters whose rounded, clipped states reproduce every
    ``observed`` pair at ``times``. Particles (standardised coordinates) start at the prior
    and pass the tolerance stages of :func:`_tolerance_stages`. Once a ``keep`` fraction lies
    within 0.5 of every observed value the final stage re-checks the particles with
    ``integrate``'s integrator against the exact indicator (``observe(state) == y``, the
    likelihood), resamples the matches and moves them under that indicator. If no tolerance
    stage was needed and ``n`` prior draws already match, they are returned as they are
    (plain rejection sampling). Raises :class:`PosteriorUnavailable` when the tolerance stops
    shrinking (data the model cannot produce). ``diagnostics`` receives ``stages``,
    ``coarse_work`` and ``exact_work`` (integrations in units of the population),
    ``acceptance`` (final stage), ``unique_fraction`` and ``epsilon`` (the last tolerance
    before the exact stage).
    """
    order = np.argsort(times, kind="stable")
    times, observed = np.asarray(times, float)[order], np.asarray(observed, float)[order]
    size = max(int(n), settings.min_particles)
    coarse_dt, coarse_order = settings.coarse

    def coarse(points: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
        return data_distance(theta_of(points), times, observed, eps, coarse_dt, coarse_order)

    def accurate(points: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
        return data_distance(theta_of(points), times, observed, eps)

    lower = POSITIVE_U if positive else None
    u = positive_normal(size, rng, lower)
    info = {"coarse_work": 1.0, "exact_work": 0.0, "epsilon": float("inf")}
    u, stage, scale = _tolerance_stages(u, coarse, len(times), rng, settings, lower, info)
    dist, exact = accurate(u, 0.5)
    info["exact_work"] += 1.0
    if not exact.any():
        raise PosteriorUnavailable(
            f"no parameters reproduce the {len(times)} observation(s) exactly"
        )
    if stage == 1 and exact.sum() >= n:  # still iid prior draws: plain rejection sampling
        return _finish(u[np.flatnonzero(exact)[:n]], stage, 1.0, info, diagnostics)
    u, dist = _resample(u, exact, size, rng, dist)
    u, dist, scale, acceptance, cost = _rejuvenate(
        u, dist, accurate, 0.5, True, scale, rng, settings, lower
    )
    info["exact_work"] += cost
    if size > n:
        u = u[rng.choice(size, n, replace=False)]
    return _finish(u, stage, acceptance, info, diagnostics)


def _tolerance_stages(
    u: np.ndarray,
    coarse: Measure,
    observations: int,
    rng: np.random.Generator,
    settings: SMCSettings,
    lower: np.ndarray | None,
    info: dict[str, float],
) -> tuple[np.ndarray, int, float]:
    """The ABC stages of :func:`constrained_smc`, from the prior draws ``u``: each sets ``ε``
    to the ``keep`` quantile of the current :func:`data_distance` values (cheap integrator),
    resamples the survivors systematically and moves every particle by random-walk
    Metropolis targeting ``prior × 1[distance ≤ ε]`` (:func:`_rejuvenate`) -- until a ``keep``
    fraction lies within 0.5 of every observed value (``observations`` of them: for the
    error message). Returns the particles, the number of the next stage and the adapted
    proposal scale; updates ``info``'s work and ``epsilon``.
    """
    dist, _ = coarse(u, np.inf)
    scale = 2.38 / np.sqrt(len(NAMES))
    history: list[float] = []
    stage = 1
    while np.mean(dist < 0.5) < settings.keep:
        eps = float(np.quantile(dist, settings.keep))
        history.append(eps)
        if stage >= settings.max_stages or _stalled(history, settings.stall_window):
            raise PosteriorUnavailable(
                f"no parameters reproduce the {observations} observation(s): the "
                f"ABC tolerance stalled at a maximum deviation of {eps:.4g} (exactness needs "
                f"0.5) after {stage} stages; the data do not look like output of this model"
            )
        u, dist = _resample(u, dist <= eps, len(u), rng, dist)
        u, dist, scale, _, cost = _rejuvenate(
            u, dist, coarse, eps, False, scale, rng, settings, lower
        )
        info["coarse_work"] += cost
        info["epsilon"] = eps
        stage += 1
    return u, stage, scale


def _resample(
    u: np.ndarray, alive: np.ndarray, size: int, rng: np.random.Generator, dist: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``size`` particles drawn systematically (equal weights) from the ``alive`` ones."""
    survivors = np.flatnonzero(alive)
    index = survivors[resample(np.zeros(survivors.size), size, rng)[0]]
    return u[index], dist[index]


def _finish(
    u: np.ndarray,
    stages: int,
    acceptance: float,
    info: dict[str, float],
    diagnostics: dict[str, float] | None,
) -> Theta:
    """The samples as parameters, with the run's diagnostics."""
    if diagnostics is not None:
        unique = len(np.unique(u, axis=0)) / max(len(u), 1)
        diagnostics.update(info)
        diagnostics.update(
            stages=float(stages), acceptance=float(acceptance), unique_fraction=float(unique)
        )
    return theta_of(u)


def _stalled(history: list[float], window: int) -> bool:
    """True when the tolerance has shrunk by less than 1% of its excess over 0.5 over the last
    ``window`` stages."""
    if len(history) <= window:
        return False
    before, now = history[-window - 1], history[-1]
    return before - now <= 0.01 * max(before - 0.5, 1e-12)


def _log_prior(u: np.ndarray, lower: np.ndarray | None) -> np.ndarray:
    """Standard normal log-density of standardised points (up to a constant), ``-inf`` where a
    coordinate is not above ``lower`` (the truncated prior's support)."""
    lp = -0.5 * np.sum(u**2, axis=1)
    if lower is not None:
        lp[~np.all(u > lower, axis=1)] = -np.inf
    return lp


def _within(measure: Measure, proposal: np.ndarray, eps: float, final: bool) -> ProposalLikelihood:
    """The indicator likelihood of the proposals -- ``1[exact]`` when ``final``, else
    ``1[distance ≤ eps]`` -- as :func:`metropolis_step` evaluates it, with the distances as
    statistics."""

    def evaluate(mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        new_dist, new_exact = measure(proposal if mask is None else proposal[mask], eps)
        ok = new_exact if final else new_dist <= eps
        return np.where(ok, 0.0, -np.inf), new_dist

    return evaluate


def _rejuvenate(
    u: np.ndarray,
    dist: np.ndarray,
    measure: Measure,
    eps: float,
    final: bool,
    scale: float,
    rng: np.random.Generator,
    settings: SMCSettings,
    lower: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, float, float, float]:
    """Random-walk Metropolis moves of every particle targeting ``N(0, I) × 1[dist ≤ eps]``
    (``× 1[exact]`` when ``final``; ``× 1[u > lower]`` when ``lower`` is given) until enough
    particles have moved. The proposal is Gaussian with the particles' covariance; every
    current particle satisfies the indicator, so delayed acceptance applies.

    Returns the particles, their distances, the adapted scale, the mean acceptance and the
    work (integrations) in population units.
    """
    size, dim = u.shape
    walkers = Walkers(u.copy(), _log_prior(u, None), np.zeros(size), stats=dist.copy())
    chol_t = particle_cholesky(walkers.x, 1e-12).T
    goal = settings.final_moved if final else settings.moved
    rates: list[float] = []
    for _ in range(settings.final_max_moves if final else settings.max_moves):
        proposal = walkers.x + scale * rng.standard_normal((size, dim)) @ chol_t
        evaluate = _within(measure, proposal, eps, final)
        lp_new = _log_prior(proposal, lower)
        accept = metropolis_step(walkers, proposal, lp_new, evaluate, rng, indicator=True)
        rate = np.count_nonzero(accept) / size
        rates.append(rate)
        scale = adapted_scale(scale, rate, settings.acceptance)
        if walkers.moved.mean() >= goal:
            break
    assert walkers.stats is not None
    return walkers.x, walkers.stats, scale, float(np.mean(rates)), walkers.work


def check_data(data: Sequence[tuple[Any, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """Observation times and pairs as arrays; raises :class:`PosteriorUnavailable` for data
    that no parameter value can reproduce."""
    times = np.array([float(d) for d, _ in data])
    observed = np.array([list(y) for _, y in data], dtype=float).reshape(len(data), 2)
    if not np.all(np.isfinite(observed) & (observed >= 0) & (observed == np.round(observed))):
        raise PosteriorUnavailable(
            "the observed populations must be non-negative integers; no parameter value of this "
            f"deterministic model reproduces {observed.tolist()}"
        )
    at_zero = observed[times == 0]
    if np.any(at_zero != [PREY0, PRED0]):
        raise PosteriorUnavailable(
            f"every trajectory starts at ({PREY0:g}, {PRED0:g}); an observation at t = 0 of "
            f"{at_zero.tolist()} is impossible under this model"
        )
    for t in np.unique(times):
        if len(np.unique(observed[times == t], axis=0)) > 1:
            raise PosteriorUnavailable(
                f"two different population pairs observed at t = {t:g}; the model is "
                "deterministic, so no parameter value reproduces both"
            )
    return times, observed
