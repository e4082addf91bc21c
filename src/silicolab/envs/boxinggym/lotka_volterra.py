"""Predator–prey: deterministic Lotka–Volterra populations observed at chosen times (§10).

Hidden model: ``d prey/dt = α·prey − β·prey·pred``, ``d pred/dt = δ·prey·pred − γ·pred`` from
``(prey, pred) = (40, 9)`` at ``t = 0``; priors ``α ~ N(0.1, 0.01²)``, ``β ~ N(0.02, 0.01²)``,
``γ ~ N(0.4, 0.04²)``, ``δ ~ N(0.01, 0.001²)``. Observing time ``t ∈ [0, 50]`` returns the
state at ``t`` rounded to integers and clipped at 0. There is no observation noise. The true
observations are solved with ``scipy.integrate.odeint`` in both fidelities, as upstream.

Likelihood: the outcome is a deterministic function of θ, so ``p(y | θ, t)`` is 1 when the
rounded, clipped state equals ``y`` and 0 otherwise (``log_likelihood`` returns 0 or
``-inf``). States of many samples come from :func:`integrate`, a vectorised fixed-step
Taylor-series solver (order 12, step 0.5) accurate to ~1e-8 for realistic populations, far
below ``odeint``'s own error (~1e-5), so the indicator agrees with the true observations.

Posterior (:meth:`LotkaVolterra.posterior_sample`): the prior restricted to the set of θ
that reproduce every observation exactly -- a thin region (10 observations typically shrink
it to 1e-6..1e-8 of the prior mass), out of reach of prior importance sampling after a few
observations. :func:`constrained_smc` reaches it by ABC-SMC to exactness: a tolerance on
the largest deviation of the unrounded, clipped states from the observed integers is lowered
stage by stage (30% of the particles survive each), each stage resampling and moving the
particles by random-walk Metropolis under ``prior × 1[deviation ≤ ε]``, and the last stage
uses the exact rounding indicator itself, so every sample reproduces the data exactly.
About 0.6 s for 4000 samples after 10 observations (0.3 s for 1000). Data no θ can produce
raise :class:`PosteriorUnavailable`.

Prior support: the published normal priors put 2.3% of their mass on β < 0 (predation that
feeds the prey), where the populations blow up and ``odeint`` returns meaningless numbers
that no parameter reproduces. Fixed fidelity therefore truncates the priors to positive
rates -- for the true θ, the posterior and every prior draw alike (only β's truncation has
noticeable mass); faithful keeps the published priors, diverging seeds included.

EIG (fixed fidelity only): the outcome is deterministic, ``H[y | θ] = 0``, so
``EIG(t) = I(θ; y) = H[p(y | t, data)]``, the entropy of the posterior-predictive
distribution of the observed pair. :meth:`LotkaVolterra.eig_estimate` estimates it from the
N + M posterior samples ``nmc_eig`` supplies, with :func:`outcome_entropy`: per-cell counts
where cells are well populated and a k-nearest-neighbour density of the dequantised outcomes
where they are not, which stays within ~2% where the plug-in (+ Miller–Madow) estimate is up
to 8% low (the broad predictive of the first steps has thousands of occupied cells). States
are cached per sample set on a time grid, so a design costs ~1 ms at 1000 samples. The
published code had no EIG here, so faithful fidelity keeps ``supports_eig`` false and
``nmc_eig`` raises :class:`NotImplementedError`; :meth:`LotkaVolterra.exact_eig` is ``None``.

Fidelity: ``faithful`` tells the novice to answer "a single number" (upstream quirk), has no
EIG and keeps the untruncated priors; ``fixed`` asks for the ``[prey, predator]`` pair the
metric needs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.integrate import odeint
from scipy.spatial import cKDTree
from scipy.special import digamma, gammaln

from silicolab.envs.boxinggym.base import (
    BoxingEnv,
    Goal,
    InvalidDesign,
    PosteriorUnavailable,
    Question,
    Theta,
    naive_message,
)
from silicolab.envs.boxinggym.parsing import format_number, literal_list, parse_float
from silicolab.envs.boxinggym.posterior import systematic_resample

PREY0, PRED0 = 40.0, 9.0
PRIOR_MEAN = {"alpha": 0.1, "beta": 0.02, "gamma": 0.4, "delta": 0.01}
PRIOR_SD = {"alpha": 0.01, "beta": 0.01, "gamma": 0.04, "delta": 0.001}
NAMES = ("alpha", "beta", "gamma", "delta")
T_LOW, T_HIGH = 0.0, 50.0
#: Populations beyond this are treated as having diverged (negative β draws explode).
BLOW_UP = 1e12


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


#: Taylor-series integrator: order and largest step (see :func:`integrate` for the accuracy).
TAYLOR_ORDER = 12
TAYLOR_STEP = 0.5
#: Samples integrated together: larger sets are split so the series stay in cache (~2x faster).
CHUNK = 8192


def _freeze_diverged(z: np.ndarray) -> None:
    """Set both populations of every diverged sample (non-finite or beyond ``BLOW_UP``) of the
    ``(2, S)`` state to ``BLOW_UP``, in place."""
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(z).all(axis=0) | (np.abs(z) > BLOW_UP).any(axis=0)
    if bad.any():
        z[:, bad] = BLOW_UP


def _advance(
    z: np.ndarray, slope: np.ndarray, cross: np.ndarray, span: float, dt: float, order: int
) -> None:
    """Advance the ``(2, S)`` states ``z`` by ``span`` in equal Taylor steps ``≤ dt``, in place.

    The ODE is ``z' = slope * z + cross * (prey * pred)`` with ``slope = (α, −γ)`` and
    ``cross = (−β, δ)``. Step coefficients are kept pre-multiplied by ``h^k`` so the series is
    summed at the step end by one addition; the quadratic term's coefficients are the Cauchy
    product of the prey and predator series.
    """
    if span <= 0:
        return
    steps = int(np.ceil(span / dt))
    h = span / steps
    factor = (h / np.arange(1, order + 1))[:, None, None]
    lin, quad = slope[None] * factor, cross[None] * factor
    series = np.empty((order + 1, *z.shape))
    prey, pred = series[:, 0], series[:, 1]
    term = np.empty_like(z)
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(steps):
            series[0] = z
            for k in range(order):
                product = np.einsum("is,is->s", prey[: k + 1], pred[k::-1])
                np.multiply(lin[k], series[k], out=series[k + 1])
                np.multiply(quad[k], product, out=term)
                series[k + 1] += term
            series.sum(axis=0, out=z)


def _chunk(theta: dict[str, np.ndarray], start: int) -> dict[str, np.ndarray]:
    return {k: np.asarray(theta[k]).reshape(-1)[start : start + CHUNK] for k in NAMES}


def _rates(theta: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    a, b, g, d = (np.asarray(theta[k], dtype=float).reshape(-1) for k in NAMES)
    return np.stack([a, -g]), np.stack([-b, d])


def integrate(
    theta: dict[str, np.ndarray],
    times: Sequence[float] | np.ndarray,
    dt: float = TAYLOR_STEP,
    order: int = TAYLOR_ORDER,
) -> np.ndarray:
    """States of every parameter sample at each of ``times`` (``(S, len(times), 2)``).

    A fixed-step Taylor-series method of order ``order`` with steps ``≤ dt``, on all samples
    at once (in chunks of ``CHUNK``); each output time is hit exactly (the steps up to it are
    shortened equally). The right-hand side is quadratic, so the series coefficients follow
    from a short recursion (a Cauchy product per order). Accuracy at the defaults (order 12,
    ``dt = 0.5``), over 100,000 prior draws at ten times in ``[0, 50]`` against order 24 at
    ``dt = 0.2``: largest error 4e-8 where populations stay below 1e3, 1e-6 below 1e4 and
    4e-3 for near-divergent draws (populations up to 1e6). ``odeint`` at
    ``rtol = atol = 1e-10``, which generates the true observations, is itself off by up to
    ~5e-6, and the rounded outputs agreed at all 11,740 (θ, t) pairs compared. It
    costs ~20 ms for 4000 samples to t = 45, 7x less than classical RK4 at ``dt = 0.02``
    (error ~2e-6). Diverging trajectories are frozen at ``BLOW_UP`` (both populations).
    """
    times = np.asarray(times, dtype=float).reshape(-1)
    size = len(np.asarray(theta[NAMES[0]]).reshape(-1))
    if size > CHUNK:
        parts = [_chunk(theta, start) for start in range(0, size, CHUNK)]
        return np.concatenate([integrate(part, times, dt, order) for part in parts])
    slope, cross = _rates(theta)
    z = np.empty((2, size))
    z[0], z[1] = PREY0, PRED0
    out = np.empty((size, times.size, 2))
    now = 0.0
    for idx in np.argsort(times, kind="stable"):
        target = float(times[idx])
        if target > now:
            _advance(z, slope, cross, target - now, dt, order)
            _freeze_diverged(z)
            now = target
        out[:, idx, :] = z.T
    return out


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
    :func:`integrate`'s defaults, as the likelihood does. ``max_stages`` and ``stall_window``:
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
_MU = np.array([PRIOR_MEAN[k] for k in NAMES])
_SD = np.array([PRIOR_SD[k] for k in NAMES])
#: Positive rates in standardised coordinates: ``θ_i > 0`` ⇔ ``u_i > −μ_i / σ_i``.
_POSITIVE_U = -_MU / _SD


def positive_normal(n: int, rng: np.random.Generator, lower: np.ndarray | None) -> np.ndarray:
    """``n`` standard-normal rows of ``len(NAMES)`` columns, truncated below at ``lower``
    (per column; ``None`` = untruncated), by redrawing the rows that fall outside."""
    u = rng.standard_normal((n, len(NAMES)))
    if lower is None:
        return u
    bad = np.flatnonzero(np.any(u <= lower, axis=1))
    while bad.size:
        u[bad] = rng.standard_normal((bad.size, len(NAMES)))
        bad = bad[np.any(u[bad] <= lower, axis=1)]
    return u


def _theta_of(u: np.ndarray) -> Theta:
    """Parameters from standardised coordinates ``u = (θ − prior mean) / prior sd``."""
    return {k: _MU[i] + _SD[i] * u[:, i] for i, k in enumerate(NAMES)}


def data_distance(
    theta: Theta,
    times: np.ndarray,
    observed: np.ndarray,
    eps: float = np.inf,
    dt: float = TAYLOR_STEP,
    order: int = TAYLOR_ORDER,
) -> tuple[np.ndarray, np.ndarray]:
    """ABC distance of each sample to the data and whether it reproduces them exactly.

    The distance is ``max_i |max(state_i, 0) − y_i|`` over all observed values (unrounded,
    clipped states against the observed integers); ``exact`` is the indicator the likelihood
    uses (``observe(state) == y`` everywhere, round-half-to-even included). A distance below
    0.5 implies an exact match and one above 0.5 rules it out. ``times`` must be sorted.
    Samples whose running distance exceeds ``eps`` are dropped from the integration at the
    next observation time (their distance is then only a lower bound, already ``> eps``).
    """
    size = len(np.asarray(theta[NAMES[0]]).reshape(-1))
    if size > CHUNK:
        parts = [_chunk(theta, start) for start in range(0, size, CHUNK)]
        pieces = [data_distance(part, times, observed, eps, dt, order) for part in parts]
        return np.concatenate([d for d, _ in pieces]), np.concatenate([e for _, e in pieces])
    slope, cross = _rates(theta)
    dist = np.zeros(size)
    exact = np.ones(size, dtype=bool)
    active = np.arange(size)
    z = np.empty((2, size))
    z[0], z[1] = PREY0, PRED0
    now = 0.0
    for t, y in zip(times, observed, strict=True):
        if t > now:
            _advance(z, slope, cross, float(t) - now, dt, order)
            _freeze_diverged(z)
            now = float(t)
        dev = np.abs(np.maximum(z, 0.0) - y[:, None]).max(axis=0)
        dist[active] = np.maximum(dist[active], dev)
        exact[active] &= np.all(observe(z) == y[:, None], axis=0)
        alive = dist[active] <= eps
        if not alive.all():
            active, z = active[alive], z[:, alive]
            slope, cross = slope[:, alive], cross[:, alive]
            if not active.size:
                break
    return dist, exact


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
    :class:`LotkaVolterra`): initial draws are redrawn and moves leaving the support rejected.

    Target: the prior restricted to parameters whose rounded, clipped states reproduce every
    ``observed`` pair at ``times``. Particles (standardised coordinates) start at the prior.
    Each tolerance stage sets ``ε`` to the ``keep`` quantile of the current
    :func:`data_distance` values, resamples the survivors systematically and moves every
    particle by random-walk Metropolis targeting ``prior × 1[distance ≤ ε]`` (Gaussian proposal
    with the particles' covariance, its scale steered to ``acceptance``; the prior ratio is
    tested before the costly integration) until a ``moved`` fraction of them has moved. These
    stages use a cheap integrator. Once a ``keep`` fraction lies within 0.5 of every observed
    value the final stage re-checks the particles with :func:`integrate`'s integrator against
    the exact indicator (``observe(state) == y``, the likelihood), resamples the matches and
    moves them under that indicator. If no tolerance stage was needed and ``n`` prior draws
    already match, they are returned as they are (plain rejection sampling). Raises
    :class:`PosteriorUnavailable` when the tolerance stops shrinking (data the model cannot
    produce). ``diagnostics`` receives ``stages``, ``coarse_work`` and ``exact_work``
    (integrations in units of the population), ``acceptance`` (final stage),
    ``unique_fraction`` and ``epsilon`` (the last tolerance before the exact stage).
    """
    order = np.argsort(times, kind="stable")
    times, observed = np.asarray(times, float)[order], np.asarray(observed, float)[order]
    size = max(int(n), settings.min_particles)
    coarse_dt, coarse_order = settings.coarse

    def coarse(points: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
        return data_distance(_theta_of(points), times, observed, eps, coarse_dt, coarse_order)

    def accurate(points: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
        return data_distance(_theta_of(points), times, observed, eps)

    lower = _POSITIVE_U if positive else None
    u = positive_normal(size, rng, lower)
    dist, _ = coarse(u, np.inf)
    info = {"coarse_work": 1.0, "exact_work": 0.0, "epsilon": float("inf")}
    scale = 2.38 / np.sqrt(len(NAMES))
    history: list[float] = []
    stage = 1
    while np.mean(dist < 0.5) < settings.keep:
        eps = float(np.quantile(dist, settings.keep))
        history.append(eps)
        if stage >= settings.max_stages or _stalled(history, settings.stall_window):
            raise PosteriorUnavailable(
                f"no parameters reproduce the {len(times)} observation(s): the "
                f"ABC tolerance stalled at a maximum deviation of {eps:.4g} (exactness needs "
                f"0.5) after {stage} stages; the data do not look like output of this model"
            )
        u, dist = _resample(u, dist <= eps, size, rng, dist)
        u, dist, _, scale, _, cost = _rejuvenate(
            u, dist, coarse, eps, False, scale, rng, settings, lower
        )
        info["coarse_work"] += cost
        info["epsilon"] = eps
        stage += 1
    dist, exact = accurate(u, 0.5)
    info["exact_work"] += 1.0
    if not exact.any():
        raise PosteriorUnavailable(
            f"no parameters reproduce the {len(times)} observation(s) exactly"
        )
    if stage == 1 and exact.sum() >= n:  # still iid prior draws: plain rejection sampling
        return _finish(u[np.flatnonzero(exact)[:n]], stage, 1.0, info, diagnostics)
    u, dist = _resample(u, exact, size, rng, dist)
    u, dist, _, scale, acceptance, cost = _rejuvenate(
        u, dist, accurate, 0.5, True, scale, rng, settings, lower
    )
    info["exact_work"] += cost
    if size > n:
        u = u[rng.choice(size, n, replace=False)]
    return _finish(u, stage, acceptance, info, diagnostics)


def _resample(
    u: np.ndarray, alive: np.ndarray, size: int, rng: np.random.Generator, dist: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``size`` particles drawn systematically (equal weights) from the ``alive`` ones."""
    survivors = np.flatnonzero(alive)
    equal = np.full(survivors.size, 1.0 / survivors.size)
    index = survivors[systematic_resample(equal, size, rng)]
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
    return _theta_of(u)


def _stalled(history: list[float], window: int) -> bool:
    """True when the tolerance has shrunk by less than 1% of its excess over 0.5 over the last
    ``window`` stages."""
    if len(history) <= window:
        return False
    before, now = history[-window - 1], history[-1]
    return before - now <= 0.01 * max(before - 0.5, 1e-12)


def _rejuvenate(
    u: np.ndarray,
    dist: np.ndarray,
    measure: Callable[[np.ndarray, float], tuple[np.ndarray, np.ndarray]],
    eps: float,
    final: bool,
    scale: float,
    rng: np.random.Generator,
    settings: SMCSettings,
    lower: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float, float]:
    """Random-walk Metropolis moves of every particle targeting ``N(0, I) × 1[dist ≤ eps]``
    (``× 1[exact]`` when ``final``; ``× 1[u > lower]`` when ``lower`` is given) until enough
    particles have moved.

    Returns the particles, their distances and exactness flags (flags only meaningful when
    ``final``), the adapted scale, the mean acceptance and the work in population units.
    """
    size, dim = u.shape
    u, dist = u.copy(), dist.copy()
    exact = np.ones(size, dtype=bool) if final else np.zeros(size, dtype=bool)
    chol = np.linalg.cholesky(np.cov(u, rowvar=False) + 1e-12 * np.eye(dim))
    half_sq = 0.5 * np.sum(u**2, axis=1)
    moved = np.zeros(size, dtype=bool)
    goal = settings.final_moved if final else settings.moved
    rates: list[float] = []
    cost = 0.0
    for _ in range(settings.final_max_moves if final else settings.max_moves):
        proposal = u + scale * rng.standard_normal((size, dim)) @ chol.T
        half_sq_new = 0.5 * np.sum(proposal**2, axis=1)
        passes = np.log(rng.random(size)) < half_sq - half_sq_new
        if lower is not None:
            passes &= np.all(proposal > lower, axis=1)
        candidates = np.flatnonzero(passes)
        new_dist, new_exact = measure(proposal[candidates], eps)
        cost += candidates.size / size
        ok = new_exact if final else new_dist <= eps
        accepted = candidates[ok]
        u[accepted], dist[accepted] = proposal[accepted], new_dist[ok]
        exact[accepted] = new_exact[ok]
        half_sq[accepted] = half_sq_new[accepted]
        moved[accepted] = True
        rate = accepted.size / size
        rates.append(rate)
        scale *= float(np.exp(rate - settings.acceptance))
        if moved.mean() >= goal:
            break
    return u, dist, exact, scale, float(np.mean(rates)), cost


def _check_data(data: Sequence[tuple[Any, Any]]) -> tuple[np.ndarray, np.ndarray]:
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


#: Neighbours of the k-nearest-neighbour part of :func:`outcome_entropy`; outcomes whose cell
#: holds at most this many samples use it, the others their cell count.
ENTROPY_NEIGHBOURS = 3


def outcome_entropy(
    outcomes: np.ndarray, rng: np.random.Generator, k: int = ENTROPY_NEIGHBOURS
) -> float:
    """Entropy in nats of a discrete distribution on integer vectors, from iid ``outcomes``.

    ``H = −E[log P(Y)]`` is averaged over the samples, estimating each ``−log P(Y_i)``
    locally. Where ``Y_i``'s cell holds ``n_i > k`` samples: ``ψ(K) − ψ(n_i)`` (the digamma
    form of the count estimate; summed it equals the plug-in entropy plus about the
    Miller–Madow term ``(cells − 1) / 2K``). Where it holds ``≤ k`` samples the count says
    little, so the density is read off the neighbouring cells instead: with uniform
    dequantisation noise ``U ~ U[−½, ½]^d`` the continuous ``Z = Y + U`` has density
    ``P(round(Z))`` and ``h(Z) = H(Y)`` exactly, so the Kozachenko–Leonenko term
    ``ψ(K) − ψ(k) + log V_d + d·log r_i`` (``r_i`` the distance from ``Z_i`` to its ``k``-th
    neighbour, ``V_d`` the unit-ball volume) applies. It is consistent (every cell is counted
    once ``K`` is large) and exactly 0 when all outcomes agree; the result is clipped at 0.

    Measured on predator–prey predictive distributions at K = 1000 (12 replicates, truth from
    200,000 samples): bias within ±0.015 nats while at most ~100 cells are occupied (every
    case after 3 or more observations), and within −0.07…+0.05 nats (≤ 2%) for broad
    predictives (hundreds to thousands of cells: no data, one observation), where the plug-in
    + Miller–Madow estimate is 0.1–0.5 nats (up to 8%) too low; standard deviation
    0.02–0.05 nats. On a discretised Gaussian with ~2,000 effective cells and K = 1000 it is
    0.5% low (Miller–Madow: 10%).
    """
    y = np.asarray(outcomes, dtype=float)
    y = y.reshape(len(y), -1) + 0.0  # + 0.0 turns -0.0 into 0.0 for the byte-wise cells
    size, dim = y.shape
    if size == 0:
        raise ValueError("outcome_entropy needs at least one outcome")
    rows = np.ascontiguousarray(y).view(np.dtype((np.void, y.itemsize * dim))).ravel()
    _, inverse, counts = np.unique(rows, return_inverse=True, return_counts=True)
    n_cell = counts[inverse.reshape(-1)]
    terms = digamma(size) - digamma(n_cell)
    sparse = np.flatnonzero(n_cell <= k)
    if sparse.size and size > k:
        points = y + rng.uniform(-0.5, 0.5, y.shape)
        radius = cKDTree(points).query(points[sparse], k=k + 1)[0][:, k]
        log_ball = dim / 2 * np.log(np.pi) - gammaln(dim / 2 + 1)
        with np.errstate(divide="ignore"):
            terms[sparse] = digamma(size) - digamma(k) + log_ball + dim * np.log(radius)
    return max(float(np.mean(terms)), 0.0)


class GridStates:
    """States of a fixed set of parameter samples on the grid ``0, dt, 2dt, …`` (extended
    lazily), so the state at any time costs one partial Taylor step from the grid point below.

    Used by :meth:`LotkaVolterra.eig_estimate`, which ``nmc_eig`` calls once per design with
    the same samples. Agrees with :func:`integrate` to its accuracy (not bit for bit).
    """

    def __init__(self, theta: Theta, dt: float = TAYLOR_STEP, order: int = TAYLOR_ORDER):
        self.slope, self.cross = _rates(theta)
        self.dt, self.order = dt, order
        start = np.empty((2, self.slope.shape[1]))
        start[0], start[1] = PREY0, PRED0
        self.grid = [start]

    def states(self, t: float) -> np.ndarray:
        """The ``(S, 2)`` states at time ``t ≥ 0``."""
        index = int(t // self.dt)
        while len(self.grid) <= index:
            z = self.grid[-1].copy()
            _advance(z, self.slope, self.cross, self.dt, self.dt, self.order)
            _freeze_diverged(z)
            self.grid.append(z)
        z = self.grid[index].copy()
        rest = t - index * self.dt
        if rest > 0:
            _advance(z, self.slope, self.cross, rest, self.dt, self.order)
            _freeze_diverged(z)
        return z.T


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
        """Normal priors (published); fixed fidelity truncates them to positive rates."""
        if self.fidelity == "faithful":
            return {k: rng.normal(PRIOR_MEAN[k], PRIOR_SD[k], n) for k in NAMES}
        return _theta_of(positive_normal(n, rng, _POSITIVE_U))

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

    def posterior_sample(
        self, n: int, rng: np.random.Generator, data: Sequence[tuple[Any, Any]] | None = None
    ) -> Theta:
        """``n`` exact posterior samples: the prior restricted to parameters that reproduce
        every observed pair (:func:`constrained_smc`); the prior itself without data.

        Raises :class:`PosteriorUnavailable` for data this model cannot produce (negative or
        non-integer counts, a state other than ``(40, 9)`` at ``t = 0``, two different
        outcomes at one time, or the tolerance stalling above exactness).
        """
        data = self.data if data is None else data
        if not data:
            return self.prior_sample(n, rng)
        times, observed = _check_data(data)
        return constrained_smc(times, observed, n, rng, positive=self.fidelity == "fixed")

    def exact_eig(self, design: Any, data: Sequence[tuple[Any, Any]] | None = None) -> None:
        """Not available in closed form (the predictive distribution of the rounded state has
        no tractable form); :meth:`eig_estimate` estimates it."""
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
        """EIG of observing at time ``design``: the entropy of the predictive distribution of
        the observed pair, from all ``outer`` and ``inner`` samples (:func:`outcome_entropy`).

        The outcome is a deterministic function of θ, so ``H[y | θ] = 0`` and
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
