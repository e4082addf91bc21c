"""Emotions from outcomes, the model: latent emotion scores, Likert ratings and their likelihood.

Per emotion ``e`` of eight (after Ong, Zaki & Goodman 2015): for a wheel with prizes ``v``,
probabilities ``p`` and the prize actually won ``w``, with ``E = p·v`` and ``PE = w - E``,
``z_e ~ N(α_e + β_win,e·w + β_PE,e·PE + β_|PE|,e·|PE|, σ_e²)`` and the rating is
``clip(trunc(z_e), 1, 9)``. Likelihood of the ratings: ``fixed`` -- the exact ordinal one
(rating 1 is ``z < 2``, ratings 2..8 are ``k ≤ z < k+1`` and 9 is ``z ≥ 9``, truncation toward
zero); ``faithful`` -- the published Normal density of the ratings themselves. Either way prior
and likelihood factorise over the eight emotions.

Speed (exact, bit-identical to the straightforward broadcasts). A rating takes one of nine
values, so the NMC's cross log-likelihood tabulates ``log p(k | θ_m, e)`` for every inner
sample, emotion and level (:func:`rating_log_table`: 8 + 1 normal CDFs per sample and emotion,
once per design) and sums 8 gathered table rows per outcome (:func:`gather_sum`) instead of
evaluating normal CDFs on the ``N × M × 8`` array. The posterior's data likelihood
(:func:`emotion_log_likelihood`) runs emotion-major in cache-sized chunks with one CDF per
rating 1 or 9 and two per other rating (:func:`log_likelihood_rows`, which the posterior also
calls on prior draws transformed chunk by chunk, and the Metropolis moves on the moving
emotions' rows only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats
from scipy.special import ndtr

from silicolab.envs.boxinggym.base import Theta, theta_size

EMOTIONS = (
    "happiness", "sadness", "anger", "surprise", "fear", "disgust", "contentment",
    "disappointment",
)  # fmt: skip
ALPHA = np.array([4.5, 3.5, 1.7, 3.3, 1.4, 1.8, 3.7, 2.0])
B_WIN = np.array([0.04, -0.025, -0.005, 0.02, 0.0, -0.005, 0.03, -0.03])
B_PE = np.array([0.035, -0.02, -0.025, 0.01, 0.0, -0.02, 0.02, -0.045])
B_ABS = np.array([-0.015, 0.025, 0.025, 0.035, 0.005, 0.02, -0.01, 0.02])
#: Prior per coefficient: ``N(mean_e, sd^2)`` with the mean per emotion; ``sigma_e`` is
#: HalfNormal(1).
PRIOR = {
    "alpha": (ALPHA, 0.1),
    "b_win": (B_WIN, 0.01),
    "b_pe": (B_PE, 0.01),
    "b_abs": (B_ABS, 0.01),
}
#: samples per likelihood chunk: (8, 2000) floats (125 KB) stay in cache and below malloc's
#: mmap threshold, so temporaries are not page-faulted in afresh
CHUNK = 2000
_TILE = 8192  # elements per temporary of the table gather (64 KB)
EMOTION_OFFSET = 9 * np.arange(8)  # row of (emotion e, level 1) in a flattened level table
_LOG_SQRT_2PI = np.log(np.sqrt(2 * np.pi))  # as scipy.stats.norm.logpdf


@dataclass(frozen=True)
class WheelDesign:
    """A spin: three prizes, their probabilities, the index landed on and the amount won
    (``value``; equal to ``prizes[win]`` except for faithful random/evaluation designs)."""

    prizes: tuple[float, float, float]
    probs: tuple[float, float, float]
    win: int
    value: float

    def wheel_text(self) -> str:
        """One ``prize: probability`` line per prize, as the participant and questions see it."""
        return "\n".join(f"{v:g}: {p:g}" for v, p in zip(self.prizes, self.probs, strict=True))


def latent_mean(theta: Theta, design: WheelDesign) -> np.ndarray:
    """Mean of the latent ``z`` for every sample and emotion, shape ``(S, 8)``."""
    expected = float(np.dot(design.probs, design.prizes))
    pe = design.value - expected
    return (
        theta["alpha"]
        + theta["b_win"] * design.value
        + theta["b_pe"] * pe
        + (theta["b_abs"] * abs(pe))
    )


def to_likert(z: np.ndarray) -> np.ndarray:
    """``clip(trunc(z), 1, 9)`` as integers."""
    return np.clip(np.trunc(z), 1, 9).astype(np.int64)


def standard_draws(
    n: int, rng: np.random.Generator, out: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """The standard normal draws behind ``n`` prior samples, ``(n, 8)`` per parameter, in the
    order ``Emotion.prior_sample`` has always drawn them; filled into the first 5 slabs
    of ``out`` (shape ``(>= 5, n, 8)``) when given -- the same numbers."""
    keys = (*PRIOR, "sigma")
    if out is None:
        return {k: rng.standard_normal((n, 8)) for k in keys}
    for slab in out[: len(keys)]:
        rng.standard_normal(out=slab)
    return dict(zip(keys, out, strict=False))


def from_standard(draws: dict[str, np.ndarray], emotion_axis: int = 1) -> Theta:
    """Prior samples from their standard draws: ``mu + sd * z`` and ``sigma = |z|``
    (``emotion_axis=0`` for emotion-major arrays)."""
    shape = (-1, 1) if emotion_axis == 0 else (-1,)
    theta = {k: mu.reshape(shape) + sd * draws[k] for k, (mu, sd) in PRIOR.items()}
    theta["sigma"] = np.abs(draws["sigma"])
    return theta


def ordinal_log_prob(y: np.ndarray, mean: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Element-wise ``log P(rating = y)`` under the truncation model (see module doc)."""
    y = np.asarray(y, dtype=float)
    lo = np.where(y <= 1, -np.inf, y)
    hi = np.where(y >= 9, np.inf, y + 1)
    a, b = (lo - mean) / sigma, (hi - mean) / sigma
    # use the upper tail where both bounds are above the mean, for accuracy:
    # ndtr(-a) - ndtr(-b) there, ndtr(b) - ndtr(a) elsewhere (two ndtr calls, not four)
    upper = a > 0
    p = ndtr(np.where(upper, -a, b)) - ndtr(np.where(upper, -b, a))
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(p, 0.0))


def rating_log_prob(
    y: np.ndarray, mean: np.ndarray, sigma: np.ndarray, fidelity: str
) -> np.ndarray:
    """Element-wise log-likelihood of ratings: ordinal (fixed) or Normal density (faithful)."""
    if fidelity == "faithful":
        return stats.norm.logpdf(np.asarray(y, dtype=float), mean, sigma)
    return ordinal_log_prob(y, mean, sigma)


def rating_log_table(mean: np.ndarray, sigma: np.ndarray, fidelity: str = "fixed") -> np.ndarray:
    """``table[e, k - 1, s] = log p(rating k | mean[s, e], sigma[s, e])`` for the nine Likert
    levels, shape ``(E, 9, S)``: the ordinal probabilities (fixed; from the 8 cut points
    ``2..9``, with the upper-tail rule of :func:`ordinal_log_prob` and the same normal CDF
    values, so the entries are bit-identical) or the Normal log-density at ``k``
    (faithful)."""
    mean_t = np.asarray(mean, dtype=float).T[:, None, :]
    sigma_t = np.asarray(sigma, dtype=float).T[:, None, :]
    n_e, n_s = mean_t.shape[0], mean_t.shape[2]
    if fidelity == "faithful":
        z = (np.arange(1.0, 10.0)[None, :, None] - mean_t) / sigma_t
        np.square(z, out=z)
        z /= -2.0
        z -= _LOG_SQRT_2PI
        z -= np.log(sigma_t)
        return z
    z = np.empty((n_e, 10, n_s))  # cut points 2..9, padded with -inf / +inf at the ends
    z[:, 0], z[:, 9] = -np.inf, np.inf
    np.subtract(np.arange(2.0, 10.0)[None, :, None], mean_t, out=z[:, 1:9])
    z[:, 1:9] /= sigma_t
    # Level k has bounds a = z[:, k - 1], b = z[:, k]. ordinal_log_prob takes
    # ndtr(-a) - ndtr(-b) when a > 0, else ndtr(b) - ndtr(a): every term is the smaller tail
    # ndtr(-|x|) of its cut point, except ndtr(b) at the one level per (e, s) that straddles
    # the mean (a <= 0 < b). So 8 + 1 normal CDFs per (e, s) instead of 36.
    tail = np.abs(z)
    np.negative(tail, out=tail)
    ndtr(tail, out=tail)  # ndtr(-inf) = 0 at both pads
    lower, upper_b = z[:, :9], z[:, 1:]
    phi_b = tail[:, 1:].copy()
    straddle = upper_b > 0
    straddle &= lower <= 0
    phi_b[straddle] = ndtr(upper_b[straddle])  # ndtr(+inf) = 1 at level 9
    above = lower > 0
    p = np.subtract(tail[:, :9], tail[:, 1:], where=above, out=phi_b)
    np.subtract(phi_b, tail[:, :9], where=~above, out=p)
    np.maximum(p, 0.0, out=p)
    with np.errstate(divide="ignore"):
        return np.log(p, out=p)


def gather_sum(table: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``out[n, s] = sum_e table[index[n, e], s]`` for 8 emotions, shape ``(N, S)``.

    Summed in numpy's pairwise order for 8 terms, ``((0+1)+(2+3)) + ((4+5)+(6+7))``, so the
    result is bit-identical to ``.sum(axis=-1)`` over the gathered values. Column tiles keep
    the temporaries small (cache-resident and below malloc's mmap threshold, so they are not
    page-faulted in afresh for every block).
    """
    out = np.empty((len(index), table.shape[1]))
    step = max(64, _TILE // max(len(index), 1))
    for start in range(0, table.shape[1], step):
        part, acc = table[:, start : start + step], out[:, start : start + step]
        np.add(part[index[:, 0]], part[index[:, 1]], out=acc)
        right = part[index[:, 2]]
        right += part[index[:, 3]]
        acc += right
        left = part[index[:, 4]]
        left += part[index[:, 5]]
        right = part[index[:, 6]]
        right += part[index[:, 7]]
        left += right
        acc += left
    return out


def emotion_log_likelihood(
    theta: Theta, data: Sequence[tuple[Any, Any]], fidelity: str = "fixed"
) -> np.ndarray:
    """``sum_i log p(ratings_i[e] | theta[s], design_i)`` per sample and emotion, ``(S, 8)``.

    The same numbers as summing :func:`rating_log_prob` over ``data`` (bit-identical), computed
    emotion-major in cache-sized chunks of samples, with one normal CDF per rating 1 or 9 and
    two per other rating.
    """
    theta = {k: np.asarray(v, dtype=float) for k, v in theta.items()}
    size = theta_size(theta)
    out = np.empty((size, 8))
    for start in range(0, size, CHUNK):
        rows = {k: np.ascontiguousarray(v[start : start + CHUNK].T) for k, v in theta.items()}
        out[start : start + CHUNK] = log_likelihood_rows(rows, data, fidelity).T
    return out


def log_likelihood_rows(rows: Theta, data: Sequence[tuple[Any, Any]], fidelity: str) -> np.ndarray:
    """:func:`emotion_log_likelihood` of one chunk of emotion-major parameters (each
    ``(8, S)``); ``(8, S)``."""
    sigma = rows["sigma"]
    total = np.zeros_like(sigma)
    mean, work = np.empty_like(sigma), np.empty_like(sigma)
    faithful = fidelity == "faithful"
    log_sigma = np.log(sigma) if faithful else None
    for design, ratings in data:
        y = np.asarray(ratings, dtype=float).reshape(-1)
        pe = design.value - float(np.dot(design.probs, design.prizes))
        # latent_mean's operations in its order, in place: alpha + b_win*w + b_pe*PE + b_abs*|PE|
        np.multiply(rows["b_win"], design.value, out=mean)
        mean += rows["alpha"]
        mean += np.multiply(rows["b_pe"], pe, out=work)
        mean += np.multiply(rows["b_abs"], abs(pe), out=work)
        if faithful:
            np.subtract(y[:, None], mean, out=work)
            work /= sigma
            np.square(work, out=work)
            work /= -2.0
            work -= _LOG_SQRT_2PI
            work -= log_sigma
            total += work
            continue
        low, high = y <= 1, y >= 9
        p = work
        if low.any():  # a = -inf: p = ndtr(b)
            p[low] = ndtr((y[low, None] + 1 - mean[low]) / sigma[low])
        if high.any():  # b = +inf: ndtr(-a) above the mean, else 1 - ndtr(a)
            a = (y[high, None] - mean[high]) / sigma[high]
            tail = ndtr(-np.abs(a))
            p[high] = np.where(a > 0, tail, 1.0 - tail)
        mid = ~(low | high)
        if mid.any():
            if mid.all():
                m, s, ym = mean, sigma, y[:, None]
            else:
                m, s, ym = mean[mid], sigma[mid], y[mid, None]
            a = ym - m
            a /= s
            b = ym + 1
            b = np.subtract(b, m, out=np.empty_like(m))
            b /= s
            upper = a > 0
            hi = ndtr(np.where(upper, -a, b))
            hi -= ndtr(np.where(upper, -b, a))
            if mid.all():
                p = hi
            else:
                p[mid] = hi
        np.maximum(p, 0.0, out=p)
        with np.errstate(divide="ignore"):
            total += np.log(p, out=p)
    return total
