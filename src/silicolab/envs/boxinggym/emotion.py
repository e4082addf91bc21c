"""Emotions from outcomes: predict how a player feels after a wheel-of-fortune spin (§11).

Latent model (after Ong, Zaki & Goodman 2015), per emotion ``e`` of eight: for a wheel with
prizes ``v``, probabilities ``p`` and the prize actually won ``w``, with ``E = p·v`` and
``PE = w - E``, ``z_e ~ N(α_e + β_win,e·w + β_PE,e·PE + β_|PE|,e·|PE|, σ_e²)`` and the rating is
``clip(trunc(z_e), 1, 9)``. The agent sees only the participant's *sentence* about the
ratings (from a language model when ``llm=`` is given, else a template; see
:mod:`~silicolab.envs.boxinggym.participant_text`); EIG, posterior and scoring use the
numeric ratings.

Likelihood and posterior. ``fixed``: the exact ordinal likelihood of the ratings -- rating 1
is ``z < 2``, ratings 2..8 are ``k ≤ z < k+1`` and 9 is ``z ≥ 9`` (truncation toward zero).
``faithful``: the published Normal density of the ratings themselves. Either way the prior
and likelihood factorise over the eight emotions, so the posterior is sampled by importance
sampling from the prior *separately for each emotion* (five parameters each), resampled per
emotion -- exact in the limit, and far better conditioned than one 40-parameter weighting.
After ~10 observations a few dozen of the 40 000 proposals can carry an emotion's weight (ESS
30-400), so the resampled draws would repeat a few dozen values; every emotion whose ESS is
below the number of draws is then rejuvenated by random-walk Metropolis moves on its exact
posterior (resample-move; :meth:`Emotion.posterior_sample`). Otherwise the draws are the plain
importance sampler's.

Speed (exact, bit-identical to the straightforward broadcasts). A rating takes one of nine
values, so the NMC's cross log-likelihood tabulates ``log p(k | θ_m, e)`` for every inner
sample, emotion and level (:func:`rating_log_table`: 8 + 1 normal CDFs per sample and emotion,
once per design) and sums 8 gathered table rows per outcome (:func:`_gather_sum`) instead of
evaluating normal CDFs on the ``N × M × 8`` array. The posterior's data likelihood
(:func:`emotion_log_likelihood`) runs emotion-major in cache-sized chunks with one CDF per
rating 1 or 9 and two per other rating, and transforms the prior draws chunk by chunk; the
Metropolis moves reuse it on the moving emotions' rows only.

Fidelity: ``fixed`` uses the prize won (``prizes[win]``) everywhere and accepts probabilities
summing to 1 within 1e-6; ``faithful`` reproduces the upstream bug that random designs and
evaluation questions use the win *index* (0, 1, 2) as the amount won, tests the sum with
exact float equality, and estimates EIG with the published element-wise ``log(pdf + 0.001)``
that mixes the 8-vector with a scalar marginal, on un-truncated Normal draws.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats
from scipy.special import logsumexp, ndtr

from silicolab.envs.boxinggym.base import (
    BoxingEnv,
    Goal,
    InvalidDesign,
    Question,
    Theta,
    naive_message,
    theta_size,
)
from silicolab.envs.boxinggym.participant_text import (
    participant_record,
    participant_sentence,
    sample_index_for,
)
from silicolab.envs.boxinggym.posterior import normalized_weights, systematic_resample
from silicolab.llm.base import LanguageModel

EMOTIONS = (
    "happiness", "sadness", "anger", "surprise", "fear", "disgust", "contentment",
    "disappointment",
)  # fmt: skip
ALPHA = np.array([4.5, 3.5, 1.7, 3.3, 1.4, 1.8, 3.7, 2.0])
B_WIN = np.array([0.04, -0.025, -0.005, 0.02, 0.0, -0.005, 0.03, -0.03])
B_PE = np.array([0.035, -0.02, -0.025, 0.01, 0.0, -0.02, 0.02, -0.045])
B_ABS = np.array([-0.015, 0.025, 0.025, 0.035, 0.005, 0.02, -0.01, 0.02])
PRIOR = {
    "alpha": (ALPHA, 0.1),
    "b_win": (B_WIN, 0.01),
    "b_pe": (B_PE, 0.01),
    "b_abs": (B_ABS, 0.01),
}
FORMAT_ERROR = (
    "Invalid input format. Please provide values for 'prizes', 'probs', and 'win' in the "
    "correct format."
)
_LIST = r"\[([^\]]*)\]"
#: samples per likelihood chunk: (8, 2000) floats (125 KB) stay in cache and below malloc's
#: mmap threshold, so temporaries are not page-faulted in afresh
_CHUNK = 2000
#: proposals whose scratch an env keeps between posteriors (40 000 for N + M = 2000: 15 MB)
_SCRATCH_MAX = 50_000
#: Resample-move (see Emotion.posterior_sample). An emotion is rejuvenated when the ESS of its
#: importance weights is below this many times the n draws asked for: from there on the
#: weights' own error exceeds that of the resampling, and the draws repeat few values.
_REJUVENATE_BELOW = 1.0
#: acceptance rates the step sizes are adapted towards: joint 5-d moves and log-sigma-only moves
_TARGET_ACCEPT, _TARGET_ACCEPT_SIGMA = 0.3, 0.44
#: every third move changes log sigma only: sigma's posterior can reach down to 1e-3 (ratings
#: then all but fixed), a tail that joint moves cross slowly while the coefficients hold still
_SIGMA_EVERY = 3
#: An emotion stops moving once this fraction of its particles has moved at least once and the
#: copies of a particle have forgotten their common ancestor: with ``r_j`` the correlation of
#: coordinate j between the particles' starting and current values and ``c = sum(m^2)/n - 1``
#: (m: copies per ancestor), the variance of a mean is ``(1 + c r_j^2) / n``; stop at
#: ``c max_j r_j^2 <= _DECORRELATED`` (effective size >= n / 1.5). At most _MAX_MOVES moves.
_MOVED_TARGET = 0.9
_DECORRELATED = 0.5
_MAX_MOVES = 50
_TILE = 8192  # elements per temporary of the table gather (64 KB)
_EMOTION_OFFSET = 9 * np.arange(8)  # row of (emotion e, level 1) in a flattened level table
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


def _standard_draws(
    n: int, rng: np.random.Generator, out: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """The standard normal draws behind ``n`` prior samples, ``(n, 8)`` per parameter, in the
    order :meth:`Emotion.prior_sample` has always drawn them; filled into the first 5 slabs
    of ``out`` (shape ``(>= 5, n, 8)``) when given -- the same numbers."""
    keys = (*PRIOR, "sigma")
    if out is None:
        return {k: rng.standard_normal((n, 8)) for k in keys}
    for slab in out[: len(keys)]:
        rng.standard_normal(out=slab)
    return dict(zip(keys, out, strict=False))


def _from_standard(draws: dict[str, np.ndarray], emotion_axis: int = 1) -> Theta:
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


def _gather_sum(table: np.ndarray, index: np.ndarray) -> np.ndarray:
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
    for start in range(0, size, _CHUNK):
        rows = {k: np.ascontiguousarray(v[start : start + _CHUNK].T) for k, v in theta.items()}
        out[start : start + _CHUNK] = _log_likelihood_rows(rows, data, fidelity).T
    return out


def _log_likelihood_rows(rows: Theta, data: Sequence[tuple[Any, Any]], fidelity: str) -> np.ndarray:
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


def _move_log_likelihood(
    x: np.ndarray, emotions: np.ndarray, data: Sequence[tuple[Any, Any]], fidelity: str
) -> np.ndarray:
    """Data log-likelihood of move-coordinate states ``x`` (``(k, 5, S)``: standardised
    alpha, b_win, b_pe, b_abs and ``log sigma``) of the ``k`` emotions ``emotions``; ``(k, S)``."""
    out = np.empty((x.shape[0], x.shape[2]))
    for start in range(0, x.shape[2], _CHUNK):
        part = x[:, :, start : start + _CHUNK]
        rows = {
            key: mu[emotions, None] + sd * part[:, j]
            for j, (key, (mu, sd)) in enumerate(PRIOR.items())
        }
        rows["sigma"] = np.exp(part[:, 4])
        out[:, start : start + _CHUNK] = _log_likelihood_rows(rows, data, fidelity)
    return out


def _move_log_prior(x: np.ndarray) -> np.ndarray:
    """Prior log-density (up to a constant) in move coordinates, ``(k, S)``: standard normal
    for the four standardised coefficients, and for ``t = log sigma`` the HalfNormal(1)
    density of ``sigma = e^t`` times the Jacobian ``e^t``."""
    t = x[:, 4]
    return -0.5 * (np.einsum("kjs,kjs->ks", x[:, :4], x[:, :4]) + np.exp(2.0 * t)) + t


def _rejuvenate(
    picked: dict[str, np.ndarray],
    ll: np.ndarray,
    copies: np.ndarray,
    emotions: np.ndarray,
    data: Sequence[tuple[Any, Any]],
    fidelity: str,
    rng: np.random.Generator,
    diagnostics: dict[int, dict[str, float]] | None = None,
) -> None:
    """Random-walk Metropolis moves, in place, on the columns ``emotions`` (``k``) of
    ``picked`` (standardised draws ``(n, 8)`` per parameter, ``sigma`` holding ``|z| > 0``),
    whose data log-likelihoods are ``ll`` (``(k, n)``) and duplication ``copies``
    (``sum(m^2) / n - 1`` over the copies ``m`` of each resampled proposal; ``(k,)``). The
    target is each emotion's exact posterior; see :meth:`Emotion.posterior_sample`.
    ``diagnostics`` receives, per emotion, its moves and mean acceptance."""
    keys = tuple(PRIOR)
    k, n = ll.shape
    ratings = np.array([np.asarray(y, dtype=float).reshape(-1) for _, y in data])
    designs = [d for d, _ in data]
    live = np.asarray(emotions)
    sigma = picked["sigma"][:, live].T.copy()  # (k, n); unmoved particles keep it exactly
    x = np.empty((k, 5, n))
    for j, key in enumerate(keys):
        x[:, j] = picked[key][:, live].T
    x[:, 4] = np.log(sigma)
    start = x - x.mean(axis=2, keepdims=True)  # the starting values, centred, and their norms
    start_norm = np.sqrt(np.einsum("kjs,kjs->kj", start, start))
    lp, ll = _move_log_prior(x), ll.copy()
    copies = np.asarray(copies, dtype=float)
    scale = np.full(k, 2.38 / np.sqrt(5.0))  # times the particles' Cholesky factor
    scale_sigma = np.full(k, 2.4)  # times the particles' sd of log sigma
    moved = np.zeros((k, n), dtype=bool)
    report = {int(e): {"moves": 0, "acceptance": 0.0} for e in live}
    eye = np.eye(5)

    def retire(done: np.ndarray) -> None:
        cols = live[done]
        for j, key in enumerate(keys):
            picked[key][:, cols] = x[done, j].T
        picked["sigma"][:, cols] = sigma[done].T

    for step in range(_MAX_MOVES):
        sigma_only = step % _SIGMA_EVERY == _SIGMA_EVERY - 1
        if sigma_only:
            proposal = x.copy()
            step_sd = scale_sigma * (x[:, 4].std(axis=1) + 1e-6)
            proposal[:, 4] += step_sd[:, None] * rng.standard_normal((len(live), n))
        else:
            centred = x - x.mean(axis=2, keepdims=True)
            cov = centred @ centred.transpose(0, 2, 1) / (n - 1)
            cov += 1e-3 * np.trace(cov, axis1=1, axis2=2)[:, None, None] * eye + 1e-8 * eye
            proposal = np.linalg.cholesky(cov) @ rng.standard_normal((len(live), 5, n))
            proposal *= scale[:, None, None]
            proposal += x
        lp_new = _move_log_prior(proposal)
        sub = [(d, y[live]) for d, y in zip(designs, ratings, strict=True)]
        ll_new = _move_log_likelihood(proposal, live, sub, fidelity)
        with np.errstate(invalid="ignore"):
            log_ratio = (lp_new - lp) + (ll_new - ll)
        log_ratio[np.isnan(log_ratio)] = -np.inf
        accept = np.log(rng.random((len(live), n))) < log_ratio
        x = np.where(accept[:, None], proposal, x)
        lp = np.where(accept, lp_new, lp)
        ll = np.where(accept, ll_new, ll)
        sigma = np.where(accept, np.exp(x[:, 4]), sigma)
        moved |= accept
        rate = accept.mean(axis=1)
        if sigma_only:
            scale_sigma *= np.exp(rate - _TARGET_ACCEPT_SIGMA)
        else:
            scale *= np.exp(rate - _TARGET_ACCEPT)
        for e, r in zip(live, rate, strict=True):
            report[int(e)]["moves"] += 1
            report[int(e)]["acceptance"] += float(r)
        centred = x - x.mean(axis=2, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            rho = np.einsum("kjs,kjs->kj", centred, start) / (
                start_norm * np.sqrt(np.einsum("kjs,kjs->kj", centred, centred))
            )
        rho = np.where(np.isfinite(rho), rho, 1.0)  # a coordinate without spread: not yet
        done = (copies * (rho**2).max(axis=1) <= _DECORRELATED) & (
            moved.mean(axis=1) >= _MOVED_TARGET
        )
        if done.any():
            retire(done)
            keep = ~done
            live, x, lp, ll, sigma = live[keep], x[keep], lp[keep], ll[keep], sigma[keep]
            start, start_norm, copies = start[keep], start_norm[keep], copies[keep]
            scale, scale_sigma, moved = scale[keep], scale_sigma[keep], moved[keep]
            if not len(live):
                break
    else:
        retire(np.ones(len(live), dtype=bool))
    if diagnostics is not None:
        for info in report.values():
            info["acceptance"] /= max(info["moves"], 1)
        diagnostics.clear()
        diagnostics.update(report)


def template_sentence(ratings: Sequence[int]) -> str:
    """A plain sentence naming the strongest feelings without numbers."""
    order = np.argsort(-np.asarray(ratings), kind="stable")
    strong = [EMOTIONS[i] for i in order[:2]]
    weak = EMOTIONS[int(order[-1])]
    level = "a lot of" if ratings[int(order[0])] >= 7 else "some"
    return (
        f"The player might be feeling {level} {strong[0]} and some {strong[1]}, with hardly "
        f"any {weak}, because of how the spin turned out compared with what they expected."
    )


PARTICIPANT_SYSTEM = (
    "You are watching someone play a game in which a wheel with three possible prizes is spun. "
    "You will be told how likely each prize was, which prize the wheel landed on, and how "
    "strongly you believe the player feels each of eight emotions. Put those feelings into "
    "words. Feelings depend on the prize itself, on how it compares with what the player "
    "expected, and on how big that surprise was."
)


def participant_prompt(design: WheelDesign, ratings: Sequence[int]) -> str:
    """The user prompt asking the participant model to voice ``ratings``."""
    lines = "\n".join(f"{e.capitalize()}: {r}/9" for e, r in zip(EMOTIONS, ratings, strict=True))
    return (
        f"Prize: probability\n{design.wheel_text()}\n"
        f"The wheel landed on {design.prizes[design.win]:g}.\n"
        f"How you think the player feels (1 = not at all, 9 = very much):\n{lines}\n"
        "Write one short sentence without any numbers, mentioning only the strongest "
        "feelings, starting with 'The player might be feeling' and giving a reason."
    )


class EmotionGoal(Goal):
    """Predict the eight ratings after a spin; metric: mean absolute error per question."""

    name = "direct"
    norm_mu = 1.58508525
    norm_sigma = 0.7237143937677741
    kind = "error"

    def task_text(self, include_prior: bool) -> str:
        return (
            "Your goal is to predict how a participant would rate a player's emotions after a "
            "spin of a prize wheel."
        )

    def system_message(self, include_prior: bool) -> str:
        how = (
            "A participant watches a player spin a wheel with three prizes. You may ask the "
            "participant how the player feels by giving the prize values (integers from 0 to "
            "100), their probabilities (summing to 1) and the index (0, 1 or 2) of the prize "
            "won, exactly in this format:\n<observe>prizes: [10, 20, 30],\nprobs: [0.2, 0.3, "
            "0.5],\nwin: 2</observe>\nThe participant answers in words."
        )
        return "\n".join([self.task_text(include_prior), how, OBSERVE, ANSWER])

    def naive_system_message(self, include_prior: bool) -> str:
        return naive_message(self.task_text(include_prior), ANSWER)

    def questions(self, n: int, rng: np.random.Generator) -> list[Question]:
        env: Emotion = self.env  # type: ignore[assignment]
        out = []
        for _ in range(n):
            design = env.sample_design(rng)
            ratings = env.simulate(env.theta, design, rng)[0]
            template = "\n".join(f"{e.capitalize()}: <rating>/9" for e in EMOTIONS)
            text = (
                f"The wheel's prizes and probabilities were:\n{design.wheel_text()}\n"
                f"The player spun the wheel and landed on {design.prizes[design.win]:g}. How "
                "would the participant rate the player's emotions after this spin? Answer "
                f"with every line of this template, each rating an integer from 1 to 9:\n"
                f"{template}"
            )
            out.append(Question(text, [int(r) for r in ratings], design))
        return out

    def parse_answer(self, text: str) -> list[int] | None:
        values = []
        for emotion in EMOTIONS:
            match = re.search(rf"{emotion}\s*:\s*(\d+)", str(text), flags=re.IGNORECASE)
            if not match:
                return None
            values.append(int(match.group(1)))
        return values

    def question_value(self, prediction: Any, question: Question) -> float:
        diff = np.asarray(prediction, dtype=float) - np.asarray(question.truth, dtype=float)
        return float(np.abs(diff).mean())

    def bayes_answer(self, question: Question, theta: Theta, rng: np.random.Generator) -> list:
        """Per-emotion posterior-predictive median rating (minimises expected abs. error)."""
        y = self.env.simulate(theta, question.point, rng)
        return [int(v) for v in np.median(y, axis=0).round()]

    def prior_mean_answer(self, question: Question) -> list:
        """The prior-predictive mean rating of each emotion (Monte Carlo, fixed seed)."""
        rng = np.random.default_rng(0)
        y = self.env.simulate(self.env.prior_sample(20_000, rng), question.point, rng)
        return [float(v) for v in y.mean(axis=0)]


OBSERVE = (
    "Write your reasoning inside <thought></thought> tags and the spin you choose inside "
    "<observe></observe> tags."
)
ANSWER = (
    "When asked a question, reply inside <answer></answer> tags with the eight lines of the "
    "template given, one integer rating from 1 to 9 per emotion."
)


def _two_decimal_probs(rng: np.random.Generator) -> list[float]:
    """Dirichlet(1, 1, 1) probabilities rounded to 2 decimals whose float sum is exactly 1.

    Rounded decimals such as 0.83 + 0.09 + 0.08 sum to 0.9999999999999999 in floating point,
    which the published validator's exact ``sum(p) != 1`` test rejects; redrawing until the
    sum is exact keeps random designs valid in both fidelities (a few draws at most).
    """
    while True:
        raw = rng.dirichlet(np.ones(3))
        probs = [round(float(raw[0]), 2), round(float(raw[1]), 2)]
        probs.append(round(1.0 - sum(probs), 2))
        if sum(probs) == 1 and min(probs) >= 0:
            return probs


class Emotion(BoxingEnv):
    """Emotions from outcomes: design = a wheel spin, outcome = eight Likert ratings."""

    name = "emotion"
    goals = ("direct",)
    faithful_nmc = (100, 10)
    #: fixed NMC size: M = 1000 keeps the log(M + 1) ≈ 6.9 ceiling above the EIGs seen under
    #: the prior (≲ 4 nats). At a new data state the posterior's 20 (N + M) proposals cost
    #: ~8x the tabulated NMC itself, so doubling N and M would roughly double the time.
    fixed_nmc = (1000, 1000)

    def __init__(self, *, llm: LanguageModel | None = None, **kwargs: Any) -> None:
        if not kwargs.get("include_prior", True):
            raise ValueError("the emotion environment supports only the prior condition")
        self.llm = llm
        self._table_scope: list[Any] | None = None
        self._scratch: np.ndarray | None = None  # see posterior_sample
        #: per rejuvenated emotion (index), the moves and mean acceptance of the last posterior
        self.rejuvenation: dict[int, dict[str, float]] = {}
        self.utterances: list[dict[str, Any]] = []
        super().__init__(**kwargs)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.utterances = []

    def make_goal(self, name: str) -> Goal:
        return EmotionGoal(self)

    def validate(self, design_text: str) -> WheelDesign:
        text = str(design_text)
        prizes = re.search(r"prizes\s*:\s*" + _LIST, text)
        probs = re.search(r"probs\s*:\s*" + _LIST, text)
        win = re.search(r"win\s*:\s*(-?\d+)", text)
        try:
            v = [float(x) for x in prizes.group(1).split(",")]  # type: ignore[union-attr]
            p = [float(x) for x in probs.group(1).split(",")]  # type: ignore[union-attr]
            idx = int(win.group(1))  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            raise InvalidDesign(FORMAT_ERROR) from None
        if len(v) != 3 or len(p) != 3:
            raise InvalidDesign(FORMAT_ERROR)
        if self.fidelity == "faithful":
            bad_sum = sum(p) != 1
        else:
            bad_sum = abs(sum(p) - 1) > 1e-6
            if min(p) < 0:
                raise InvalidDesign("Probabilities must be non-negative.")
        if bad_sum:
            raise InvalidDesign("Probabilities should sum to 1.")
        if idx not in (0, 1, 2):
            raise InvalidDesign("Invalid value for 'win'. Please provide 0, 1, or 2.")
        return WheelDesign(tuple(v), tuple(p), idx, v[idx])  # type: ignore[arg-type]

    def run(self, design_text: str) -> str:
        """Validate, draw the ratings, voice them, record both; return the sentence."""
        design = self.validate(design_text)
        ratings = self.draw_outcome(design)
        step = len(self.data)
        self.data.append((design, ratings))
        said = participant_sentence(
            self.llm,
            system=PARTICIPANT_SYSTEM,
            user=participant_prompt(design, ratings),
            template=template_sentence(ratings),
            sample_index=sample_index_for(self.name, self.seed, step, self.format_design(design)),
            tag="participant",
        )
        self.utterances.append({"step": step, "text": said.text, "source": said.source})
        return f"The participant responded with: {said.text}\n"

    def sample_design(self, rng: np.random.Generator) -> WheelDesign:
        prizes = tuple(float(round(v, 1)) for v in rng.uniform(0, 100, 3))
        probs = _two_decimal_probs(rng)
        idx = int(rng.integers(0, 3))
        value = float(idx) if self.fidelity == "faithful" else prizes[idx]
        return WheelDesign(prizes, tuple(probs), idx, value)  # type: ignore[arg-type]

    def format_design(self, design: Any) -> str:
        prizes = ", ".join(f"{v:g}" for v in design.prizes)
        probs = ", ".join(f"{p:g}" for p in design.probs)
        return f"prizes: [{prizes}],\nprobs: [{probs}],\nwin: {design.win}"

    def format_outcome(self, y: Any) -> str:
        return f"The participant responded with: {template_sentence(list(y))}\n"

    def prior_sample(self, n: int, rng: np.random.Generator) -> Theta:
        return _from_standard(_standard_draws(n, rng))

    def simulate(self, theta: Theta, design: Any, rng: np.random.Generator) -> np.ndarray:
        mean = latent_mean(theta, design)
        return to_likert(mean + theta["sigma"] * rng.standard_normal(mean.shape))

    def log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        y = np.asarray(y).reshape(-1, 8)
        lp = rating_log_prob(y, latent_mean(theta, design), theta["sigma"], self.fidelity)
        return lp.sum(axis=1)

    def cross_log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """``out[n, m] = log p(y[n] | theta[m])``, shape ``(N, M)``.

        Ratings are integers 1..9, so each ``theta[m]`` has a 9-level table per emotion
        (:func:`rating_log_table`, reused across the row blocks of one :meth:`eig_estimate`)
        and the output is a sum over the 8 emotions of gathered table rows -- bit-identical to
        broadcasting :func:`rating_log_prob` over ``(N, M, 8)`` at a fraction of the cost.
        Other ``y`` (non-integer or out of range) fall back to that broadcast.
        """
        y = np.asarray(y).reshape(-1, 8)
        levels = y.astype(np.intp) if y.dtype.kind in "iub" else None
        if levels is None and y.dtype.kind == "f" and np.all(np.isfinite(y)):
            levels = y.astype(np.intp)
            if not np.array_equal(levels, y):
                levels = None
        if levels is None or levels.min(initial=1) < 1 or levels.max(initial=9) > 9:
            mean, sigma = latent_mean(theta, design)[None], theta["sigma"][None]
            return rating_log_prob(y[:, None, :], mean, sigma, self.fidelity).sum(axis=2)
        table = self._level_table(theta, design)
        return _gather_sum(table, levels - 1 + _EMOTION_OFFSET)

    def _level_table(self, theta: Theta, design: Any) -> np.ndarray:
        """:func:`rating_log_table` of ``theta`` flattened to ``(8 * 9, S)`` (row ``9 e + k - 1``);
        the one computed for the inner samples of the running fixed NMC is reused."""
        scope = self._table_scope
        if scope is not None and scope[0] is theta and scope[1] is design:
            if scope[2] is None:
                scope[2] = self._level_table_now(theta, design)
            return scope[2]
        return self._level_table_now(theta, design)

    def _level_table_now(self, theta: Theta, design: Any) -> np.ndarray:
        table = rating_log_table(latent_mean(theta, design), theta["sigma"], self.fidelity)
        return table.reshape(-1, table.shape[-1])

    def eig_estimate(
        self, design: Any, outer: Theta, inner: Theta, *, estimator: str,
        rng: np.random.Generator,
    ) -> float:  # fmt: skip
        """Fixed: the shared NMC. Faithful: the published estimator -- Normal draws (no
        truncation), element-wise ``log(pdf + 0.001)``, a scalar log-mean-exp over the whole
        M×8 inner array, and the mean over outer samples *and* emotions."""
        if estimator == "fixed":
            self._table_scope = [inner, design, None]  # see _level_table
            try:
                return super().eig_estimate(design, outer, inner, estimator=estimator, rng=rng)
            finally:
                self._table_scope = None
        n = theta_size(outer)
        m = theta_size(inner) // n
        mean_o, sig_o = latent_mean(outer, design), outer["sigma"]
        y = mean_o + sig_o * rng.standard_normal(mean_o.shape)  # (N, 8)
        l_outer = np.log(stats.norm.pdf(y, mean_o, sig_o) + 0.001)
        mean_i = latent_mean(inner, design).reshape(n, m, 8)
        sig_i = inner["sigma"].reshape(n, m, 8)
        l_inner = np.log(stats.norm.pdf(y[:, None, :], mean_i, sig_i) + 0.001)
        log_marginal = logsumexp(l_inner.reshape(n, m * 8), axis=1) - np.log(m * 8)
        return float(np.mean(l_outer - log_marginal[:, None]))

    def data_log_likelihood(
        self, theta: Theta, data: Sequence[tuple[Any, Any]] | None = None
    ) -> np.ndarray:
        """``sum_i log p(y_i | theta[s], x_i)`` over ``data`` (default ``self.data``), ``(S,)``."""
        data = self.data if data is None else data
        return emotion_log_likelihood(theta, data, self.fidelity).sum(axis=1)

    def posterior_sample(
        self, n: int, rng: np.random.Generator, data: Sequence[tuple[Any, Any]] | None = None
    ) -> Theta:
        """Per-emotion prior importance sampling, with resample-move rejuvenation of the
        emotions whose weights are degenerate; exact prior without data.

        ``max(20 n, 20000)`` prior proposals are weighted per emotion by the data likelihood
        and resampled systematically to ``n`` per emotion. Every emotion whose weights have an
        ESS below ``n`` (:data:`_REJUVENATE_BELOW`) -- common after ~10 observations, when a
        few dozen proposals carry the weight -- then gets random-walk Metropolis moves
        targeting its exact posterior, all such emotions and particles at once, each
        accepting or rejecting on its own (the posterior factorises over emotions). The walk
        is in standardised coordinates (``(x - mu) / sd`` for the coefficients, ``log sigma``
        with the HalfNormal density times its Jacobian): Gaussian proposals shaped by each
        emotion's particle covariance and scaled towards 0.3 acceptance, every third move
        one on ``log sigma`` alone (towards 0.44), until the copies of each resampled
        proposal have forgotten their common ancestor (see :data:`_MOVED_TARGET`; typically
        10-40 moves). With every ESS at least ``n`` nothing moves: the draws are the plain
        importance sampler's, bit for bit. :attr:`rejuvenation` reports the moves.
        """
        data = self.data if data is None else data
        self.rejuvenation = {}
        if not data:
            return self.prior_sample(n, rng)
        # the prior proposals of prior_sample (same draws, same numbers), kept standardised
        # and transformed chunk by chunk inside the likelihood loop, in cache
        size = max(20 * n, 20_000)
        buffer = self._buffer(size)
        draws = _standard_draws(size, rng, out=buffer)
        log_w = buffer[5].reshape(8, size)
        for start in range(0, size, _CHUNK):
            chunk = {k: v[start : start + _CHUNK].T for k, v in draws.items()}
            rows = _from_standard(chunk, emotion_axis=0)
            log_w[:, start : start + _CHUNK] = _log_likelihood_rows(rows, data, self.fidelity)
        index, ess = [], np.empty(8)
        for e in range(8):
            weights, ess[e] = normalized_weights(log_w[e])
            index.append(systematic_resample(weights, n, rng))
        picked = {
            k: np.stack([v[i, e] for e, i in enumerate(index)], axis=1) for k, v in draws.items()
        }
        low = np.flatnonzero(ess < _REJUVENATE_BELOW * n)
        if len(low):
            picked["sigma"] = np.abs(picked["sigma"])
            ll = np.stack([log_w[e, index[e]] for e in low])
            copies = [np.square(np.bincount(index[e])).sum() / n - 1.0 for e in low]
            _rejuvenate(
                picked, ll, np.array(copies), low, data, self.fidelity, rng, self.rejuvenation
            )
        return _from_standard(picked)

    def _buffer(self, size: int) -> np.ndarray:
        """``(6, size, 8)`` scratch for the proposal draws and their log weights. Up to
        :data:`_SCRATCH_MAX` proposals it is kept between posteriors: fresh arrays this large
        are returned to the OS when freed and page-faulted back in at every data state, which
        on a VM costs ~10% of the posterior."""
        buffer = self._scratch
        if buffer is not None and buffer.shape[1] == size:
            return buffer
        buffer = np.empty((6, size, 8))
        if size <= _SCRATCH_MAX:
            self._scratch = buffer
        return buffer

    def to_record(self) -> dict[str, Any]:
        return {**super().to_record(), **participant_record(self.utterances, self.llm)}


def make_emotion(
    *,
    goal: str = "direct",
    prior: bool = True,
    fidelity: str = "fixed",
    seed: int | None = 0,
    llm: LanguageModel | None = None,
    **env_params: Any,
) -> Emotion:
    """The emotions-from-outcomes environment (BoxingGym §11); prior condition only."""
    if env_params:
        raise TypeError(f"emotion takes no parameters besides llm; got {sorted(env_params)}")
    return Emotion(llm=llm, goal=goal, include_prior=prior, fidelity=fidelity, seed=seed)
