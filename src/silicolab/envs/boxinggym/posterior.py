"""Cheap, correct posterior samplers for the BoxingGym environments (numpy only).

The published code refits PyMC NUTS (10-45 s) at every data state. The environments here have
1-18 parameters and at most ~10 observations, so cheaper exact-in-the-limit samplers suffice:

* :func:`importance_posterior` - prior proposals weighted by the data likelihood,
  self-normalised, systematically resampled; fine while the effective sample size (ESS) of the
  weights stays in the hundreds (1-3 parameters, mildly informative data).
* :func:`grid_posterior` - exact up to discretisation for 1-2 parameter models on a grid.
* :func:`smc_posterior` - adaptive-tempering sequential Monte Carlo with random-walk Metropolis
  moves (optionally alternating with multi-scale block moves), for peaked likelihoods
  (location finding) and higher dimensions.

Functions take the environment duck-typed (``prior_sample``, ``data_log_likelihood`` and, for
SMC, ``log_prior``) so this module imports nothing from the environment base.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

Theta = dict[str, np.ndarray]
LogDensity = Callable[[Theta], np.ndarray]


def _take(theta: Theta, index: np.ndarray) -> Theta:
    return {k: v[index] for k, v in theta.items()}


def normalized_weights(log_w: np.ndarray) -> tuple[np.ndarray, float]:
    """Self-normalised weights from log weights and their ESS ``1 / sum(w^2)``."""
    log_w = np.asarray(log_w, dtype=float)
    finite = np.isfinite(log_w)
    if not finite.any():
        raise FloatingPointError("every importance weight is zero: the data are impossible")
    w = np.exp(log_w - log_w[finite].max(), where=finite, out=np.zeros_like(log_w))
    w /= w.sum()
    return w, float(1.0 / np.sum(w**2))


def systematic_resample(weights: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` indices drawn by systematic resampling from normalised ``weights``, then randomly
    permuted (so duplicates are not adjacent; the permutation leaves the sample's law intact)."""
    cumulative = np.cumsum(weights)
    cumulative[-1] = 1.0
    positions = (rng.random() + np.arange(n)) / n
    index = np.searchsorted(cumulative, positions, side="left")
    return rng.permutation(np.minimum(index, len(weights) - 1))


def importance_posterior(
    env: Any,
    n: int,
    rng: np.random.Generator,
    data: Sequence[tuple[Any, Any]] | None = None,
    *,
    proposal_n: int | None = None,
    log_likelihood: LogDensity | None = None,
    diagnostics: dict[str, float] | None = None,
) -> Theta:
    """``n`` approximate posterior samples by likelihood-weighted prior proposals.

    ``proposal_n`` prior draws (default ``max(20 n, 20000)``) are weighted by
    ``exp(log_likelihood(theta))`` (default the env's ``data_log_likelihood`` on ``data``),
    self-normalised and resampled systematically. ``diagnostics``, when given, receives
    ``ess`` (effective sample size of the weights), ``proposal_n`` and ``log_evidence``.
    """
    data = env.data if data is None else data
    proposal_n = proposal_n or max(20 * n, 20_000)
    proposals = env.prior_sample(proposal_n, rng)
    if log_likelihood is None:
        log_w = env.data_log_likelihood(proposals, data)
    else:
        log_w = log_likelihood(proposals)
    w, ess = normalized_weights(log_w)
    if diagnostics is not None:
        finite = np.isfinite(log_w)
        top = log_w[finite].max()
        evidence = top + np.log(np.exp(log_w[finite] - top).sum() / proposal_n)
        diagnostics.update(ess=ess, proposal_n=float(proposal_n), log_evidence=float(evidence))
    return _take(proposals, systematic_resample(w, n, rng))


def grid_posterior(
    env: Any,
    n: int,
    rng: np.random.Generator,
    data: Sequence[tuple[Any, Any]] | None,
    axes: Mapping[str, np.ndarray],
    log_prior: LogDensity,
    *,
    log_likelihood: LogDensity | None = None,
    jitter: bool = True,
) -> Theta:
    """``n`` samples from a 1-2 parameter posterior evaluated on a tensor grid.

    ``axes`` maps each scalar parameter to evenly spaced grid points; ``log_prior`` and
    ``log_likelihood`` (default the env's ``data_log_likelihood``) are evaluated on every grid
    cell. Cells are drawn with probability proportional to the posterior mass, then jittered
    uniformly within the cell (clipped to the axis range) so samples are distinct.
    """
    data = env.data if data is None else data
    names = list(axes)
    grids = np.meshgrid(*[np.asarray(axes[k], dtype=float) for k in names], indexing="ij")
    cells: Theta = {k: g.ravel() for k, g in zip(names, grids, strict=True)}
    log_p = log_prior(cells)
    if log_likelihood is not None:
        log_p = log_p + log_likelihood(cells)
    elif data:
        log_p = log_p + env.data_log_likelihood(cells, data)
    w, _ = normalized_weights(log_p)
    index = rng.choice(len(w), size=n, p=w)
    out = {k: v[index].copy() for k, v in cells.items()}
    if jitter:
        for k in names:
            axis = np.asarray(axes[k], dtype=float)
            if len(axis) > 1:
                half = 0.5 * (axis[1] - axis[0])
                out[k] = np.clip(out[k] + rng.uniform(-half, half, n), axis[0], axis[-1])
    return out


def _flatten(theta: Theta) -> tuple[np.ndarray, list[tuple[str, tuple[int, ...]]]]:
    layout = [(k, v.shape[1:]) for k, v in theta.items()]
    flat = np.concatenate([v.reshape(len(v), -1) for v in theta.values()], axis=1)
    return flat.astype(float), layout


def _unflatten(flat: np.ndarray, layout: list[tuple[str, tuple[int, ...]]]) -> Theta:
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


#: Default step sizes of the block moves of :func:`smc_posterior` (one drawn per particle).
BLOCK_SCALES: tuple[float, ...] = tuple(float(v) for v in np.geomspace(1e-4, 1.0, 9))


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
    must return ``-inf`` outside the support.

    ``blocks`` (groups of columns of the flattened parameter vector, e.g. one group per
    source) turns every second move into a *block move*: each particle perturbs one uniformly
    chosen block by an isotropic step whose size is drawn per particle from ``block_scales``,
    half uniformly and half in proportion to the mean squared jump each size achieved in the
    previous block moves (a population-level adaptation, as for the covariance and scale).
    The size is drawn independently of the particle's state, so each move is a symmetric
    Metropolis kernel for the current target. Block moves let parameters localised at very
    different scales -- a source pinned to a thin ring by a bright reading next to one still
    diffuse -- all move, where one shared covariance cannot fit them all.

    ``increments`` is the law of the unit steps (before the covariance/size scaling):
    ``"gaussian"`` or ``"uniform"`` (U(-sqrt 3, sqrt 3) per coordinate: also symmetric with unit
    variance, hence an equally valid random walk, and about 5x cheaper to draw than normals).

    ``diagnostics`` receives ``stages``, ``acceptance`` (mean over the final moves) and
    ``unique_fraction``.
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
    dim = flat.shape[1]
    ll = np.asarray(log_likelihood(theta), dtype=float)
    lp = np.asarray(log_prior(theta), dtype=float)
    beta, stages, scale = 0.0, 0, 2.38 / np.sqrt(dim)
    acceptance = 1.0
    groups = [np.asarray(b, dtype=int) for b in blocks] if blocks else []
    ladder = np.asarray(block_scales, dtype=float)
    equal_blocks = len({len(g) for g in groups}) == 1
    columns = np.stack(groups) if groups and equal_blocks else None
    uniform = increments == "uniform"

    def unit_steps(shape: tuple[int, int], sizes: np.ndarray | None) -> np.ndarray:
        """Symmetric steps with unit variance per coordinate, row i scaled by ``sizes[i]``."""
        if uniform:
            steps = rng.random(shape)
            steps -= 0.5
            factor = np.sqrt(12.0) if sizes is None else np.sqrt(12.0) * sizes[:, None]
            steps *= factor
            return steps
        steps = rng.standard_normal(shape)
        if sizes is not None:
            steps *= sizes[:, None]
        return steps

    jump = np.ones(len(ladder))  # per step size: squared jump distance of the last block moves

    def block_steps() -> tuple[np.ndarray, np.ndarray]:
        steps = np.zeros((n, dim))
        which = rng.integers(len(groups), size=n)
        # step-size rung per particle: half uniform, half in proportion to the squared jump
        # distance each size achieved, via a 1024-entry lookup table (cheaper than a search)
        share = 0.5 / len(ladder) + 0.5 * jump / jump.sum()
        edges = np.round(np.cumsum(share) * 1024).astype(int)
        table = np.repeat(np.arange(len(ladder)), np.diff(edges, prepend=0))
        rung = table[rng.integers(len(table), size=n)]
        sizes = ladder[rung]
        if columns is not None:  # equal-sized blocks: one draw, scattered row by row
            np.put_along_axis(steps, columns[which], unit_steps((n, columns.shape[1]), sizes), 1)
            return steps, rung
        for j, cols in enumerate(groups):
            rows = np.flatnonzero(which == j)
            steps[rows[:, None], cols[None, :]] = unit_steps((len(rows), len(cols)), sizes[rows])
        return steps, rung

    def move(flat, ll, lp, beta, scale, count):
        cov = np.atleast_2d(np.cov(flat, rowvar=False)) + 1e-10 * np.eye(dim)
        chol_t = np.linalg.cholesky(cov).T
        rates = []
        for i in range(count):
            full = not groups or i % 2 == 0
            if full:
                proposal = unit_steps(flat.shape, None) @ chol_t
                proposal *= scale
            else:
                proposal, rung = block_steps()
                squared = np.einsum("ij,ij->i", proposal, proposal)
            proposal += flat
            prop_theta = _unflatten(proposal, layout)
            lp_new = np.asarray(log_prior(prop_theta), dtype=float)
            ok = np.isfinite(lp_new)
            if ok.all():
                ll_new = np.asarray(log_likelihood(prop_theta), dtype=float)
            else:
                ll_new = np.full(n, -np.inf)
                if ok.any():
                    ll_new[ok] = log_likelihood(_take(prop_theta, np.flatnonzero(ok)))
            with np.errstate(invalid="ignore"):
                log_ratio = (lp_new - lp) + beta * (ll_new - ll)
            log_ratio[np.isnan(log_ratio)] = -np.inf
            accept = np.log(rng.random(n)) < log_ratio
            moved = np.flatnonzero(accept)
            flat[moved] = proposal[moved]
            ll[moved] = ll_new[moved]
            lp[moved] = lp_new[moved]
            rate = len(moved) / n
            rates.append(rate)
            if full:
                scale *= np.exp(rate - 0.3)
            else:  # mean squared jump per step size, a running average over the block moves
                total = np.bincount(rung[moved], squared[moved], minlength=len(ladder))
                tried = np.bincount(rung, minlength=len(ladder))
                jump[:] = 0.5 * jump + 0.5 * total / np.maximum(tried, 1) + 1e-300
        return flat, ll, lp, scale, float(np.mean(rates)) if rates else 1.0

    while beta < 1.0:
        stages += 1
        finite_ll = np.where(np.isfinite(ll), ll, -np.inf)
        new_beta = _next_temperature(finite_ll, beta, ess_fraction * n)
        w, _ = normalized_weights((new_beta - beta) * finite_ll)
        index = systematic_resample(w, n, rng)
        flat, ll, lp = flat[index], ll[index], lp[index]
        beta = new_beta
        count = final_moves if beta >= 1.0 else moves_per_stage
        flat, ll, lp, scale, acceptance = move(flat, ll, lp, beta, scale, count)
    if diagnostics is not None:
        unique = len(np.unique(flat.round(12), axis=0)) / n
        diagnostics.update(stages=float(stages), acceptance=acceptance, unique_fraction=unique)
    return _unflatten(rng.permutation(flat), layout)
