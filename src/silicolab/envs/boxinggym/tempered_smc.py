"""Adaptive-tempering sequential Monte Carlo (:func:`smc_posterior`), for peaked likelihoods
(location finding) and higher dimensions than prior importance sampling can serve.

Stages raise the likelihood exponent beta from 0 (the prior) to 1 (the posterior), each by
the largest step that keeps the effective sample size of the incremental weights at a set
fraction of the particles; every stage resamples and then moves the particles by random-walk
Metropolis (the resample-move steps of :mod:`~silicolab.envs.boxinggym.smc`). The random
walk alternates, when asked, with *block moves* (:class:`_Steps`) that perturb one group of
coordinates at a step size adapted per particle.

The environment is duck-typed (``prior_sample``, ``data_log_likelihood``, ``log_prior``) so
this module imports nothing from the environment base.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from silicolab.envs.boxinggym.smc import (
    LogDensity,
    ProposalLikelihood,
    Theta,
    Walkers,
    adapted_scale,
    metropolis_step,
    normalized_weights,
    particle_cholesky,
    resample,
    take,
)

#: Default step sizes of the block moves of :func:`smc_posterior` (one drawn per particle).
BLOCK_SCALES: tuple[float, ...] = tuple(float(v) for v in np.geomspace(1e-4, 1.0, 9))
#: Acceptance rate the full-covariance random walk's scale is steered to.
_TARGET_ACCEPT = 0.3
Layout = list[tuple[str, tuple[int, ...]]]


def _flatten(theta: Theta) -> tuple[np.ndarray, Layout]:
    layout = [(k, v.shape[1:]) for k, v in theta.items()]
    flat = np.concatenate([v.reshape(len(v), -1) for v in theta.values()], axis=1)
    return flat.astype(float), layout


def _unflatten(flat: np.ndarray, layout: Layout) -> Theta:
    out: Theta = {}
    start = 0
    for key, shape in layout:
        size = int(np.prod(shape)) if shape else 1
        out[key] = flat[:, start : start + size].reshape((len(flat), *shape))
        start += size
    return out


def _next_temperature(ll: np.ndarray, beta: float, target: float) -> float:
    """The largest ``beta' <= 1`` whose incremental weights ``exp((beta' - beta) ll)`` keep an
    effective sample size of at least ``target`` (bisection: the ESS decreases as the increment
    grows). Particles with ``ll = -inf`` get weight 0 at every positive increment."""
    values = ll[np.isfinite(ll)]
    if len(values) == 0:
        raise FloatingPointError("every particle has zero likelihood: the data are impossible")

    def ess(delta: float) -> float:
        return normalized_weights(delta * values)[1]

    if len(values) < target:
        return min(beta + 1e-6, 1.0)
    if ess(1.0 - beta) >= target:
        return 1.0
    lo, hi = 0.0, 1.0 - beta
    while hi - lo > 1e-5 * (1.0 - beta):  # 17 halvings
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if ess(mid) >= target else (lo, mid)
    return beta + max(lo, 1e-6)


class _Steps:
    """The random-walk increments of :func:`smc_posterior`.

    :meth:`unit`: symmetric steps of unit variance per coordinate, Gaussian or uniform
    (U(-sqrt 3, sqrt 3): equally valid, about 5x cheaper to draw). :meth:`block`: each particle
    perturbs one uniformly chosen block of coordinates by an isotropic step whose size is drawn
    from ``ladder``, half uniformly and half in proportion to the mean squared jump each size
    achieved in the previous block moves (:meth:`record`; a population-level adaptation, so
    the size is drawn independently of the particle's state and each move stays a symmetric
    Metropolis kernel). Block moves let parameters localised at very different scales -- a
    source pinned to a thin ring next to one still diffuse -- all move, where one shared
    covariance cannot fit them all.
    """

    def __init__(
        self,
        rng: np.random.Generator,
        n: int,
        dim: int,
        increments: str,
        blocks: Sequence[Sequence[int]] | None,
        block_scales: Sequence[float],
    ) -> None:
        self.rng, self.n, self.dim = rng, n, dim
        self.uniform = increments == "uniform"
        self.groups = [np.asarray(b, dtype=int) for b in blocks] if blocks else []
        self.ladder = np.asarray(block_scales, dtype=float)
        equal_blocks = len({len(g) for g in self.groups}) == 1
        self.columns = np.stack(self.groups) if self.groups and equal_blocks else None
        self.jump = np.ones(len(self.ladder))  # per size: squared jump of the last block moves

    def unit(self, shape: tuple[int, int], sizes: np.ndarray | None) -> np.ndarray:
        """Symmetric steps with unit variance per coordinate, row i scaled by ``sizes[i]``."""
        if self.uniform:
            steps = self.rng.random(shape)
            steps -= 0.5
            factor = np.sqrt(12.0) if sizes is None else np.sqrt(12.0) * sizes[:, None]
            steps *= factor
            return steps
        steps = self.rng.standard_normal(shape)
        if sizes is not None:
            steps *= sizes[:, None]
        return steps

    def block(self) -> tuple[np.ndarray, np.ndarray]:
        """One block step per particle, ``(n, dim)``, and the ladder rung of each one's size."""
        rng, n, ladder = self.rng, self.n, self.ladder
        steps = np.zeros((n, self.dim))
        which = rng.integers(len(self.groups), size=n)
        # rung per particle: half uniform, half in proportion to the squared jump each size
        # achieved, via a 1024-entry lookup table (cheaper than a search)
        share = 0.5 / len(ladder) + 0.5 * self.jump / self.jump.sum()
        edges = np.round(np.cumsum(share) * 1024).astype(int)
        table = np.repeat(np.arange(len(ladder)), np.diff(edges, prepend=0))
        rung = table[rng.integers(len(table), size=n)]
        sizes = ladder[rung]
        if self.columns is not None:  # equal-sized blocks: one draw, scattered row by row
            draw = self.unit((n, self.columns.shape[1]), sizes)
            np.put_along_axis(steps, self.columns[which], draw, 1)
            return steps, rung
        for j, cols in enumerate(self.groups):
            rows = np.flatnonzero(which == j)
            steps[rows[:, None], cols[None, :]] = self.unit((len(rows), len(cols)), sizes[rows])
        return steps, rung

    def record(self, rung: np.ndarray, squared: np.ndarray, accept: np.ndarray) -> None:
        """Update the mean squared jump per step size (a running average over block moves)."""
        size = len(self.ladder)
        total = np.bincount(rung[accept], squared[accept], minlength=size)
        tried = np.bincount(rung, minlength=size)
        self.jump[:] = 0.5 * self.jump + 0.5 * total / np.maximum(tried, 1) + 1e-300


def _likelihood_of(log_likelihood: LogDensity, theta: Theta) -> ProposalLikelihood:
    """:func:`metropolis_step`'s view of ``log_likelihood`` at the proposals ``theta``."""

    def evaluate(mask: np.ndarray | None) -> tuple[np.ndarray, None]:
        part = theta if mask is None else take(theta, np.flatnonzero(mask))
        return np.asarray(log_likelihood(part), dtype=float), None

    return evaluate


def _move(
    walkers: Walkers,
    steps: _Steps,
    layout: Layout,
    densities: tuple[LogDensity, LogDensity],
    beta: float,
    scale: float,
    count: int,
) -> tuple[float, float]:
    """``count`` Metropolis moves of every walker targeting ``prior * likelihood^beta``, in
    place: full-covariance random-walk moves, alternating with block moves when there are
    blocks. Returns the adapted scale and the mean acceptance rate."""
    log_prior, log_likelihood = densities
    n = len(walkers.x)
    chol_t = particle_cholesky(walkers.x, 1e-10).T
    rates = []
    for i in range(count):
        full = not steps.groups or i % 2 == 0
        if full:
            proposal = steps.unit(walkers.x.shape, None) @ chol_t
            proposal *= scale
        else:
            proposal, rung = steps.block()
            squared = np.einsum("ij,ij->i", proposal, proposal)
        proposal += walkers.x
        theta = _unflatten(proposal, layout)
        lp_new = np.asarray(log_prior(theta), dtype=float)
        evaluate = _likelihood_of(log_likelihood, theta)
        accept = metropolis_step(walkers, proposal, lp_new, evaluate, steps.rng, beta=beta)
        rate = np.count_nonzero(accept) / n
        rates.append(rate)
        if full:
            scale = adapted_scale(scale, rate, _TARGET_ACCEPT)
        else:
            steps.record(rung, squared, accept)
    return scale, float(np.mean(rates)) if rates else 1.0


def smc_posterior(
    env: Any,
    n: int,
    rng: np.random.Generator,
    data: Sequence[tuple[Any, Any]] | None = None,
    *,
    log_likelihood: LogDensity | None = None,
    log_prior: LogDensity | None = None,
    ess_fraction: float = 0.7,
    moves_per_stage: int = 6,
    final_moves: int = 12,
    blocks: Sequence[Sequence[int]] | None = None,
    block_scales: Sequence[float] = BLOCK_SCALES,
    increments: str = "gaussian",
    diagnostics: dict[str, float] | None = None,
) -> Theta:
    """``n`` posterior samples by adaptive-tempering SMC (prior -> posterior).

    Stages raise the likelihood exponent beta from 0 to 1, each time by the largest step that
    keeps the ESS of the incremental weights at ``ess_fraction * n``; after systematic
    resampling every particle makes ``moves_per_stage`` random-walk Metropolis moves targeting
    ``prior * likelihood^beta`` with a proposal shaped by the particle covariance and scaled
    to keep acceptance near 0.3. ``final_moves`` extra moves at beta = 1 decorrelate the
    duplicates. Parameters may have any shape; the prior density (default ``env.log_prior``)
    must return ``-inf`` outside the support; ``log_likelihood`` defaults to the env's
    ``data_log_likelihood`` on ``data`` (default ``env.data``).

    ``blocks`` (groups of columns of the flattened parameter vector, e.g. one group per
    source) turns every second move into a block move with step sizes from ``block_scales``
    (see :class:`_Steps`). ``increments``: the law of the unit steps, ``"gaussian"`` or
    ``"uniform"``. ``diagnostics`` receives ``stages``, ``acceptance`` (mean over the final
    moves) and ``unique_fraction``.
    """
    if increments not in ("gaussian", "uniform"):
        raise ValueError(f"increments must be 'gaussian' or 'uniform'; got {increments!r}")
    data = env.data if data is None else data
    if log_likelihood is None:

        def log_likelihood(theta: Theta) -> np.ndarray:
            return env.data_log_likelihood(theta, data)

    log_prior = log_prior or env.log_prior
    theta = env.prior_sample(n, rng)
    flat, layout = _flatten(theta)
    ll = np.asarray(log_likelihood(theta), dtype=float)
    walkers = Walkers(flat, np.asarray(log_prior(theta), dtype=float), ll)
    steps = _Steps(rng, n, flat.shape[1], increments, blocks, block_scales)
    beta, stages, scale = 0.0, 0, 2.38 / np.sqrt(flat.shape[1])
    acceptance = 1.0
    while beta < 1.0:
        stages += 1
        ll = walkers.log_likelihood
        finite_ll = np.where(np.isfinite(ll), ll, -np.inf)
        new_beta = _next_temperature(finite_ll, beta, ess_fraction * n)
        walkers = walkers.take(resample((new_beta - beta) * finite_ll, n, rng)[0])
        beta = new_beta
        count = final_moves if beta >= 1.0 else moves_per_stage
        densities = (log_prior, log_likelihood)
        scale, acceptance = _move(walkers, steps, layout, densities, beta, scale, count)
    if diagnostics is not None:
        unique = len(np.unique(walkers.x.round(12), axis=0)) / n
        diagnostics.update(stages=float(stages), acceptance=acceptance, unique_fraction=unique)
    return _unflatten(rng.permutation(walkers.x), layout)
