"""Resample-move machinery shared by the BoxingGym posterior samplers (numpy only).

Every sequential Monte Carlo sampler of the environments alternates two steps: *resample* the
particles by their importance weights (duplicating the good ones), then *move* every particle
by random-walk Metropolis steps that leave the current target invariant, so the duplicates
spread out again (resample-move). This module is the one implementation of both steps:

* :func:`normalized_weights`, :func:`systematic_resample` and :func:`resample` (the two
  together, with the weights' effective sample size);
* :class:`Walkers` (positions with their log prior and log likelihood) and
  :func:`metropolis_step`, one accept/reject of every walker against its proposal, with
  delayed acceptance for indicator likelihoods;
* :func:`adapted_scale` (steering a step size towards a target acceptance rate) and
  :func:`particle_cholesky` (proposals shaped like the particle cloud).

Users: :func:`~silicolab.envs.boxinggym.tempered_smc.smc_posterior` (adaptive tempering),
:mod:`~silicolab.envs.boxinggym.emotion._posterior` (per-emotion importance sampling with
rejuvenation) and :mod:`~silicolab.envs.boxinggym.lotka_volterra._posterior` (ABC-SMC to
exactness). Each keeps only what is its own: the proposal, the target ladder, when to stop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar, cast

import numpy as np

Theta = dict[str, np.ndarray]
LogDensity = Callable[[Theta], np.ndarray]
#: A step scale: one number, or one per independent population (an array).
Scale = TypeVar("Scale", float, np.ndarray)
#: The log-likelihood of the proposals of one Metropolis step: of all of them (argument
#: ``None``) or of those a boolean mask selects (a 1-d array in the mask's order). The second
#: value is ``None`` or per-proposal statistics (same selection) that accepted proposals carry
#: into :attr:`Walkers.stats` -- e.g. the ABC distance that set the likelihood.
ProposalLikelihood = Callable[[np.ndarray | None], tuple[np.ndarray, np.ndarray | None]]


def take(theta: Theta, index: np.ndarray) -> Theta:
    """The samples ``index`` of every parameter of ``theta``."""
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


def resample(log_w: np.ndarray, n: int, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """``n`` indices resampled systematically in proportion to ``exp(log_w)``, and the ESS of
    those weights (how many of the indices can be told apart, roughly)."""
    weights, ess = normalized_weights(log_w)
    return systematic_resample(weights, n, rng), ess


@dataclass
class Walkers:
    """A particle population under random-walk Metropolis, updated in place by
    :func:`metropolis_step`.

    ``x`` holds the positions with the particle axes first and the coordinates last (a
    transposed view works: updates write through it); ``log_prior`` and ``log_likelihood`` have
    the particle axes' shape. ``stats`` (optional, same shape) travels with the positions.
    ``moved`` marks the particles that accepted at least one move; ``work`` counts likelihood
    evaluations in units of the population, the cost that delayed acceptance saves.
    """

    x: np.ndarray
    log_prior: np.ndarray
    log_likelihood: np.ndarray
    stats: np.ndarray | None = None
    moved: np.ndarray = field(init=False)
    work: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        self.moved = np.zeros(self.log_prior.shape, dtype=bool)

    def take(self, index: np.ndarray) -> Walkers:
        """The walkers ``index`` (e.g. after resampling or retiring), with their flags and
        statistics; the work count starts afresh."""
        stats = None if self.stats is None else self.stats[index]
        part = Walkers(self.x[index], self.log_prior[index], self.log_likelihood[index], stats)
        part.moved = self.moved[index]
        return part


def metropolis_step(
    walkers: Walkers,
    proposal: np.ndarray,
    proposal_log_prior: np.ndarray,
    proposal_log_likelihood: ProposalLikelihood,
    rng: np.random.Generator,
    *,
    beta: float = 1.0,
    indicator: bool = False,
) -> np.ndarray:
    """Accept or reject every walker's proposal, in place; returns the acceptance mask.

    The target is ``prior * likelihood^beta``: a walker moves when ``log U`` is below
    ``(lp' - lp) + beta (ll' - ll)``, one uniform ``U`` per walker (a NaN ratio, e.g. from
    ``-inf - -inf``, rejects). The likelihood -- usually the costly part -- is evaluated only
    where it can matter: where the proposal's prior is finite, or with ``indicator`` (a
    likelihood that is 1 or 0 and is 1 at every walker) only where the prior ratio alone
    accepts. That is delayed acceptance, exact for such likelihoods, and it skips most
    rejected proposals. The uniforms are drawn before the likelihood, which draws none, so
    the random stream is the same as drawing them after it.
    """
    log_u = np.log(rng.random(proposal_log_prior.shape))
    with np.errstate(invalid="ignore"):
        if indicator:
            wanted = log_u < proposal_log_prior - walkers.log_prior
        else:
            wanted = np.isfinite(proposal_log_prior)
    ll_new, stats_new = _evaluate(proposal_log_likelihood, wanted)
    walkers.work += np.count_nonzero(wanted) / wanted.size
    with np.errstate(invalid="ignore"):
        log_ratio = (proposal_log_prior - walkers.log_prior) + beta * (
            ll_new - walkers.log_likelihood
        )
    log_ratio[np.isnan(log_ratio)] = -np.inf
    accept = log_u < log_ratio
    walkers.x[accept] = proposal[accept]
    walkers.log_prior[accept] = proposal_log_prior[accept]
    walkers.log_likelihood[accept] = ll_new[accept]
    if walkers.stats is not None and stats_new is not None:
        walkers.stats[accept] = stats_new[accept]
    walkers.moved |= accept
    return accept


def _evaluate(
    likelihood: ProposalLikelihood, wanted: np.ndarray
) -> tuple[np.ndarray, np.ndarray | None]:
    """The proposals' log-likelihoods where ``wanted`` (``-inf`` elsewhere, a rejection) and
    their statistics (NaN elsewhere). All at once when all are wanted: a subset would copy."""
    if wanted.all():
        ll, stats = likelihood(None)
        return np.asarray(ll, dtype=float), stats
    ll = np.full(wanted.shape, -np.inf)
    stats = None
    if wanted.any():
        ll_part, stats_part = likelihood(wanted)
        ll[wanted] = ll_part
        if stats_part is not None:
            stats = np.full(wanted.shape, np.nan)
            stats[wanted] = stats_part
    return ll, stats


def adapted_scale(scale: Scale, rate: float | np.ndarray, target: float) -> Scale:
    """The step scale times ``exp(rate - target)``: larger while the acceptance ``rate`` is above
    ``target``, smaller below. Adapted between moves from the population's rate, never within
    one, so every move stays a valid Metropolis kernel."""
    return cast(Scale, scale * np.exp(rate - target))


def particle_cholesky(x: np.ndarray, jitter: float) -> np.ndarray:
    """Lower Cholesky factor of the covariance of the particles ``x`` (rows) plus
    ``jitter * I``: random-walk steps shaped like the cloud move along its long axes."""
    cov = np.atleast_2d(np.cov(x, rowvar=False))
    return np.linalg.cholesky(cov + jitter * np.eye(x.shape[1]))
