"""Emotions from outcomes, the posterior: per-emotion importance sampling with resample-move
rejuvenation (:func:`emotion_posterior`).

Prior and likelihood factorise over the eight emotions, so the posterior is sampled by
importance sampling from the prior *separately for each emotion* (five parameters each),
resampled per emotion -- exact in the limit, and far better conditioned than one
40-parameter weighting. After ~10 observations a few dozen of the 40 000 proposals can carry
an emotion's weight (ESS 30-400), so the resampled draws would repeat a few dozen values;
every emotion whose ESS is below the number of draws is then rejuvenated by random-walk
Metropolis moves on its exact posterior (:func:`rejuvenate`, on the shared resample-move
kernel of :mod:`~silicolab.envs.boxinggym.smc`). Otherwise the draws are the plain
importance sampler's, bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from silicolab.envs.boxinggym.base import Theta
from silicolab.envs.boxinggym.emotion._model import (
    CHUNK,
    PRIOR,
    from_standard,
    log_likelihood_rows,
    standard_draws,
)
from silicolab.envs.boxinggym.smc import (
    ProposalLikelihood,
    Walkers,
    adapted_scale,
    metropolis_step,
    resample,
)

#: An emotion is rejuvenated when the ESS of its importance weights is below this many times
#: the n draws asked for: from there on the weights' own error exceeds that of the
#: resampling, and the draws repeat few values.
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
_KEYS = tuple(PRIOR)  # the standardised coefficients: move coordinates 0-3 (4 is log sigma)
_EYE = np.eye(5)


def emotion_posterior(
    n: int,
    rng: np.random.Generator,
    data: Sequence[tuple[Any, Any]],
    fidelity: str,
    buffer: np.ndarray,
    diagnostics: dict[int, dict[str, float]] | None = None,
) -> Theta:
    """``n`` posterior samples given non-empty ``data``: per-emotion prior importance sampling,
    with resample-move rejuvenation of the emotions whose weights are degenerate.

    ``buffer`` (``(6, size, 8)``) is scratch for ``size`` prior proposals (the env's
    ``max(20 n, 20000)``) and their log weights; the proposals are the prior draws of
    ``Emotion.prior_sample`` (same draws, same numbers), kept standardised and transformed
    chunk by chunk inside the likelihood loop, in cache. They are weighted per emotion by the
    data likelihood and resampled systematically to ``n`` per emotion. Every emotion whose
    weights have an ESS below ``n`` (:data:`_REJUVENATE_BELOW`) -- common after ~10
    observations -- then gets the moves of :func:`rejuvenate`. ``diagnostics`` receives the
    moves and mean acceptance per rejuvenated emotion.
    """
    size = buffer.shape[1]
    draws = standard_draws(size, rng, out=buffer)
    log_w = buffer[5].reshape(8, size)
    for start in range(0, size, CHUNK):
        chunk = {k: v[start : start + CHUNK].T for k, v in draws.items()}
        rows = from_standard(chunk, emotion_axis=0)
        log_w[:, start : start + CHUNK] = log_likelihood_rows(rows, data, fidelity)
    index, ess = [], np.empty(8)
    for e in range(8):
        picks, ess[e] = resample(log_w[e], n, rng)
        index.append(picks)
    picked = {k: np.stack([v[i, e] for e, i in enumerate(index)], axis=1) for k, v in draws.items()}
    low = np.flatnonzero(ess < _REJUVENATE_BELOW * n)
    if len(low):
        picked["sigma"] = np.abs(picked["sigma"])
        ll = np.stack([log_w[e, index[e]] for e in low])
        copies = [np.square(np.bincount(index[e])).sum() / n - 1.0 for e in low]
        rejuvenate(picked, ll, np.array(copies), low, data, fidelity, rng, diagnostics)
    return from_standard(picked)


def _move_log_likelihood(
    x: np.ndarray, emotions: np.ndarray, data: Sequence[tuple[Any, Any]], fidelity: str
) -> np.ndarray:
    """Data log-likelihood of move-coordinate states ``x`` (``(k, 5, S)``: standardised
    alpha, b_win, b_pe, b_abs and ``log sigma``) of the ``k`` emotions ``emotions``; ``(k, S)``."""
    out = np.empty((x.shape[0], x.shape[2]))
    for start in range(0, x.shape[2], CHUNK):
        part = x[:, :, start : start + CHUNK]
        rows = {
            key: mu[emotions, None] + sd * part[:, j]
            for j, (key, (mu, sd)) in enumerate(PRIOR.items())
        }
        rows["sigma"] = np.exp(part[:, 4])
        out[:, start : start + CHUNK] = log_likelihood_rows(rows, data, fidelity)
    return out


def _move_log_prior(x: np.ndarray) -> np.ndarray:
    """Prior log-density (up to a constant) in move coordinates, ``(k, S)``: standard normal
    for the four standardised coefficients, and for ``t = log sigma`` the HalfNormal(1)
    density of ``sigma = e^t`` times the Jacobian ``e^t``."""
    t = x[:, 4]
    return -0.5 * (np.einsum("kjs,kjs->ks", x[:, :4], x[:, :4]) + np.exp(2.0 * t)) + t


def _likelihood_of(
    proposal: np.ndarray, emotions: np.ndarray, data: Sequence[tuple[Any, Any]], fidelity: str
) -> ProposalLikelihood:
    """:func:`metropolis_step`'s view of the proposals' likelihood. The emotion-major chunks
    evaluate every emotion's proposals together, so a subset is picked from the full array
    (the prior is finite wherever ``log sigma`` does not overflow: in practice always)."""

    def evaluate(mask: np.ndarray | None) -> tuple[np.ndarray, None]:
        ll = _move_log_likelihood(proposal, emotions, data, fidelity)
        return (ll if mask is None else ll[mask]), None

    return evaluate


class _Moves:
    """The state of the emotions still moving in :func:`rejuvenate`: move coordinates ``x``
    (``(k, 5, n)``, emotion-major; the walkers see it as ``(k, n, 5)`` through a view), the
    exact ``sigma`` of each particle (unmoved particles keep theirs bit for bit), the starting
    values for the decorrelation test, duplication, step scales and the report."""

    def __init__(
        self, picked: dict[str, np.ndarray], ll: np.ndarray, copies: np.ndarray, emotions: Any
    ) -> None:
        k, n = ll.shape
        self.live = np.asarray(emotions)
        self.sigma = picked["sigma"][:, self.live].T.copy()
        x = np.empty((k, 5, n))
        for j, key in enumerate(_KEYS):
            x[:, j] = picked[key][:, self.live].T
        x[:, 4] = np.log(self.sigma)
        self.start = x - x.mean(axis=2, keepdims=True)  # starting values, centred
        self.start_norm = np.sqrt(np.einsum("kjs,kjs->kj", self.start, self.start))
        self.x = x
        self.walkers = Walkers(x.transpose(0, 2, 1), _move_log_prior(x), ll.copy())
        self.copies = np.asarray(copies, dtype=float)
        self.scale = np.full(k, 2.38 / np.sqrt(5.0))  # times the particles' Cholesky factor
        self.scale_sigma = np.full(k, 2.4)  # times the particles' sd of log sigma
        self.report = {int(e): {"moves": 0, "acceptance": 0.0} for e in self.live}

    def propose(self, sigma_only: bool, rng: np.random.Generator) -> np.ndarray:
        """Gaussian proposals ``(k, 5, n)``: on ``log sigma`` alone, scaled by its particle
        sd, or joint, shaped by each emotion's particle covariance (regularised by 1e-3 of its
        trace, so a collapsed coordinate still moves)."""
        x, k, n = self.x, len(self.live), self.x.shape[2]
        if sigma_only:
            proposal = x.copy()
            step_sd = self.scale_sigma * (x[:, 4].std(axis=1) + 1e-6)
            proposal[:, 4] += step_sd[:, None] * rng.standard_normal((k, n))
            return proposal
        centred = x - x.mean(axis=2, keepdims=True)
        cov = centred @ centred.transpose(0, 2, 1) / (n - 1)
        cov += 1e-3 * np.trace(cov, axis1=1, axis2=2)[:, None, None] * _EYE + 1e-8 * _EYE
        proposal = np.linalg.cholesky(cov) @ rng.standard_normal((k, 5, n))
        proposal *= self.scale[:, None, None]
        proposal += x
        return proposal

    def move(self, step: int, rng: np.random.Generator, data: list, fidelity: str) -> None:
        """Move ``step``: propose, accept or reject per particle, adapt the step scales."""
        sigma_only = step % _SIGMA_EVERY == _SIGMA_EVERY - 1
        proposal = self.propose(sigma_only, rng)
        lp_new = _move_log_prior(proposal)
        sub = [(d, y[self.live]) for d, y in data]
        evaluate = _likelihood_of(proposal, self.live, sub, fidelity)
        accept = metropolis_step(self.walkers, proposal.transpose(0, 2, 1), lp_new, evaluate, rng)
        self.sigma = np.where(accept, np.exp(self.x[:, 4]), self.sigma)
        rate = accept.mean(axis=1)
        if sigma_only:
            self.scale_sigma = adapted_scale(self.scale_sigma, rate, _TARGET_ACCEPT_SIGMA)
        else:
            self.scale = adapted_scale(self.scale, rate, _TARGET_ACCEPT)
        for e, r in zip(self.live, rate, strict=True):
            self.report[int(e)]["moves"] += 1
            self.report[int(e)]["acceptance"] += float(r)

    def finished(self) -> np.ndarray:
        """Per live emotion: moved enough, and decorrelated from the start (see
        :data:`_MOVED_TARGET`)."""
        centred = self.x - self.x.mean(axis=2, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            rho = np.einsum("kjs,kjs->kj", centred, self.start) / (
                self.start_norm * np.sqrt(np.einsum("kjs,kjs->kj", centred, centred))
            )
        rho = np.where(np.isfinite(rho), rho, 1.0)  # a coordinate without spread: not yet
        moved = self.walkers.moved.mean(axis=1) >= _MOVED_TARGET
        return (self.copies * (rho**2).max(axis=1) <= _DECORRELATED) & moved

    def retire(self, picked: dict[str, np.ndarray], done: np.ndarray) -> None:
        """Write the ``done`` emotions' particles back into ``picked`` and stop moving them."""
        cols = self.live[done]
        for j, key in enumerate(_KEYS):
            picked[key][:, cols] = self.x[done, j].T
        picked["sigma"][:, cols] = self.sigma[done].T
        keep = ~done
        self.live, self.x, self.sigma = self.live[keep], self.x[keep], self.sigma[keep]
        walkers = self.walkers.take(keep)
        walkers.x = self.x.transpose(0, 2, 1)  # a view again: moves write into self.x
        self.walkers = walkers
        self.start, self.start_norm = self.start[keep], self.start_norm[keep]
        self.copies, self.scale = self.copies[keep], self.scale[keep]
        self.scale_sigma = self.scale_sigma[keep]


def rejuvenate(
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
    (``sum(m^2) / n - 1`` over the copies ``m`` of each resampled proposal; ``(k,)``).

    The target is each emotion's exact posterior; all emotions and particles move at once,
    each accepting or rejecting on its own (the posterior factorises over emotions). The walk
    is in standardised coordinates (``(x - mu) / sd`` for the coefficients, ``log sigma``
    with the HalfNormal density times its Jacobian): Gaussian proposals shaped by each
    emotion's particle covariance and scaled towards 0.3 acceptance, every third move one on
    ``log sigma`` alone (towards 0.44), until the copies of each resampled proposal have
    forgotten their common ancestor (see :data:`_MOVED_TARGET`; typically 10-40 moves).
    ``diagnostics`` receives, per emotion, its moves and mean acceptance.
    """
    ratings = np.array([np.asarray(y, dtype=float).reshape(-1) for _, y in data])
    pairs = list(zip([d for d, _ in data], ratings, strict=True))
    moves = _Moves(picked, ll, copies, emotions)
    for step in range(_MAX_MOVES):
        moves.move(step, rng, pairs, fidelity)
        done = moves.finished()
        if done.any():
            moves.retire(picked, done)
            if not len(moves.live):
                break
    else:
        moves.retire(picked, np.ones(len(moves.live), dtype=bool))
    if diagnostics is not None:
        for info in moves.report.values():
            info["acceptance"] /= max(info["moves"], 1)
        diagnostics.clear()
        diagnostics.update(moves.report)
