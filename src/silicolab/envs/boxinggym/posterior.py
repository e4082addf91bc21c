"""Cheap, correct posterior samplers for the BoxingGym environments (numpy only).

The published code refits PyMC NUTS (10-45 s) at every data state. The environments here have
1-18 parameters and at most ~10 observations, so cheaper exact-in-the-limit samplers suffice:

* :func:`importance_posterior` - prior proposals weighted by the data likelihood,
  self-normalised, systematically resampled; fine while the effective sample size (ESS) of the
  weights stays in the hundreds (1-3 parameters, mildly informative data).
* :func:`grid_posterior` - exact up to discretisation for 1-2 parameter models on a grid.
* :func:`smc_posterior` - adaptive-tempering sequential Monte Carlo with random-walk Metropolis
  moves (optionally alternating with multi-scale block moves), for peaked likelihoods
  (location finding) and higher dimensions; it lives in
  :mod:`~silicolab.envs.boxinggym.tempered_smc` and is re-exported here, as are the weighting
  and resampling helpers of :mod:`~silicolab.envs.boxinggym.smc` that every sampler shares.

Functions take the environment duck-typed (``prior_sample``, ``data_log_likelihood`` and, for
SMC, ``log_prior``) so this module imports nothing from the environment base.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from silicolab.envs.boxinggym.smc import (
    LogDensity,
    Theta,
    normalized_weights,
    resample,
    systematic_resample,
    take,
)
from silicolab.envs.boxinggym.tempered_smc import BLOCK_SCALES, smc_posterior

__all__ = [
    "BLOCK_SCALES",
    "LogDensity",
    "Theta",
    "grid_posterior",
    "importance_posterior",
    "normalized_weights",
    "smc_posterior",
    "systematic_resample",
]


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
    index, ess = resample(log_w, n, rng)
    if diagnostics is not None:
        finite = np.isfinite(log_w)
        top = log_w[finite].max()
        evidence = top + np.log(np.exp(log_w[finite] - top).sum() / proposal_n)
        diagnostics.update(ess=ess, proposal_n=float(proposal_n), log_evidence=float(evidence))
    return take(proposals, index)


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
