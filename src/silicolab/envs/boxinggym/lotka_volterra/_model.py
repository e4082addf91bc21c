"""Predator–prey, the model: Lotka–Volterra dynamics, priors, observations and the
vectorised Taylor-series integrator.

Hidden model: ``d prey/dt = α·prey − β·prey·pred``, ``d pred/dt = δ·prey·pred − γ·pred`` from
``(prey, pred) = (40, 9)`` at ``t = 0``; priors ``α ~ N(0.1, 0.01²)``, ``β ~ N(0.02, 0.01²)``,
``γ ~ N(0.4, 0.04²)``, ``δ ~ N(0.01, 0.001²)``. Observing time ``t ∈ [0, 50]`` returns the
state at ``t`` rounded to integers and clipped at 0 (:func:`observe`); there is no
observation noise. The true observations are solved with ``scipy.integrate.odeint``
(:func:`true_state`), as upstream. States of many samples come from :func:`integrate`, a
fixed-step Taylor-series solver (order 12, step 0.5) accurate to ~1e-8 for realistic
populations, far below ``odeint``'s own error (~1e-5), so the rounded states agree with the
true observations; :func:`data_distance` runs it against observed data (the ABC distance) and
:class:`GridStates` caches it on a time grid (the EIG).

Prior support: the published normal priors put 2.3% of their mass on β < 0 (predation that
feeds the prey), where the populations blow up and ``odeint`` returns meaningless numbers
that no parameter reproduces. Fixed fidelity therefore truncates the priors to positive
rates (:func:`positive_normal` in the standardised coordinates of :func:`theta_of`) -- for
the true θ, the posterior and every prior draw alike (only β's truncation has noticeable
mass); faithful keeps the published priors, diverging seeds included.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.integrate import odeint

from silicolab.envs.boxinggym.base import Theta

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


_MU = np.array([PRIOR_MEAN[k] for k in NAMES])
_SD = np.array([PRIOR_SD[k] for k in NAMES])
#: Positive rates in standardised coordinates: ``θ_i > 0`` ⇔ ``u_i > −μ_i / σ_i``.
POSITIVE_U = -_MU / _SD


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


def theta_of(u: np.ndarray) -> Theta:
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
