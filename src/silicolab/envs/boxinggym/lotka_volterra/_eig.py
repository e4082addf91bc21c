"""Predator–prey, the EIG: the entropy of the posterior-predictive distribution of the
observed pair (:func:`outcome_entropy`).

The outcome is a deterministic function of θ, so ``H[y | θ] = 0`` and
``EIG(t) = I(θ; y) = H[p(y | t, data)]``. :func:`outcome_entropy` estimates it from the N + M
posterior samples ``nmc_eig`` supplies: per-cell counts where cells are well populated and a
k-nearest-neighbour density of the dequantised outcomes where they are not, which stays
within ~2% where the plug-in (+ Miller–Madow) estimate is up to 8% low (the broad predictive
of the first steps has thousands of occupied cells).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree
from scipy.special import digamma, gammaln

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
