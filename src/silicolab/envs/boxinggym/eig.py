"""Expected information gain by nested Monte Carlo (NMC), vectorised, and the EI regret.

Two estimators (``estimator=``, default the env's fidelity):

``"fixed"`` -- the bounded *prior-contrastive* form (Foster et al. 2020, "PCE"): N outer samples
    theta_n with y_n ~ p(y | theta_n, xi), and one pool of M inner samples shared by every outer
    sample, with the outer sample itself added to the inner set::

        EIG ~= 1/N sum_n [ l(y_n|theta_n) - log( (l(y_n|theta_n) + sum_m l(y_n|theta_m)) / (M+1) ) ]

    (likelihoods in log space via logsumexp). Its expectation is a lower bound on the EIG that
    tightens as M grows, it is never negative and never exceeds log(M+1), so peaked likelihoods
    cannot blow it up. Defaults N = 2000, M = 2000 (``FIXED_NMC``; see ``docs/boxinggym.md`` for
    the measured accuracy). All designs in one call share the outer/inner split and the
    simulation noise (common random numbers), so EIG *differences* between designs -- the
    regret -- are far less noisy than the EIGs themselves. The N x M log-likelihood matrix is
    processed in cache-sized row blocks; discrete outcomes that repeat (choices, counts,
    ratings) get their inner log-sum-exp once per distinct value (the same numbers, a fraction
    of the work).
``"faithful"`` -- the published estimator: N = 1000, M = 10, a pool of N + N*M posterior samples
    reshuffled for every design, outer = the first N, inner block n = indices N + n*M ... (or
    n*M ... for envs whose ``nmc_inner_layout`` is ``"from_start"``), the inner set excludes the
    outer sample, and the env's ``faithful_log_likelihood`` supplies the published hacks. It is
    biased upward and unbounded.

Posterior samples come from ``env.posterior_sample`` and are cached per data state in a
:class:`PosteriorCache`; shuffling is always by index permutation (or, for envs that reproduce
the location-finding bug, by :func:`duplicating_shuffle`, which mimics Python's
``random.shuffle`` on a 2-D numpy array).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy.special import logsumexp

from silicolab.core import seeding
from silicolab.core.errors import InputError
from silicolab.envs.boxinggym.base import InvalidDesign, Theta, theta_size, theta_take, to_jsonable

#: (N outer, M inner) of the fixed estimator unless an env overrides ``fixed_nmc``.
FIXED_NMC: tuple[int, int] = (2000, 2000)
#: (N outer, M inner) of the published estimator unless an env overrides ``faithful_nmc``.
FAITHFUL_NMC: tuple[int, int] = (1000, 10)
ESTIMATORS = ("fixed", "faithful")
#: Elements per row block of the N x M matrix (512 KB of float64). Larger blocks are not
#: faster: fresh multi-megabyte temporaries are returned to the OS and page-faulted back in on
#: every block, which on this VM cost more than the arithmetic.
_BLOCK_ELEMENTS = 1 << 16
_EXP_FLOOR = -700.0  # exp(-700) ~ 1e-304 is still a normal double


def _row_log_sum_exp(block: np.ndarray) -> np.ndarray:
    """Row-wise ``log(sum_m exp(block[:, m]))``, overwriting ``block`` (a fresh array from
    ``cross_log_likelihood``) to save allocations; ``-inf`` for an all ``-inf`` row.

    Shifted terms are floored at ``_EXP_FLOOR`` before ``exp``: the row maximum contributes
    exactly 1 to the sum, so the floor adds at most ``M * exp(-700) ~ 1e-301`` relative -- far
    below double precision -- while keeping ``exp`` off its subnormal/underflow path, which is
    ~8x slower and is hit by most terms of a peaked likelihood (location finding).
    """
    top = block.max(axis=1)
    empty = np.isneginf(top)  # (a NaN row stays NaN)
    top[empty] = 0.0
    np.subtract(block, top[:, None], out=block)
    np.maximum(block, _EXP_FLOOR, out=block)
    np.exp(block, out=block)
    out = top + np.log(block.sum(axis=1))
    out[empty] = -np.inf
    return out


def _distinct_outcomes(y: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(unique_rows, inverse)`` of the simulated outcomes when they repeat enough to be worth
    it (discrete outcomes: counts, choices, Likert ratings), else ``None`` (continuous ones).

    ``cross_log_likelihood`` row n depends on ``y[n]`` only, so the inner log-sum-exp can be
    computed once per distinct outcome and gathered -- the same numbers at a fraction of the
    N x M work (IRT and the choice tasks have 2 distinct outcomes, peregrines ~100 of 2000).
    """
    if y.dtype.kind not in "biuf" or len(y) < 2:
        return None
    if y.ndim == 1:
        unique, inverse = np.unique(y, return_inverse=True)
    else:
        unique, inverse = np.unique(y.reshape(len(y), -1), axis=0, return_inverse=True)
        unique = unique.reshape((len(unique), *y.shape[1:]))
    if len(unique) > 0.9 * len(y):
        return None
    return unique, inverse.reshape(-1)


def _freeze(value: Any) -> Any:
    """A hashable, value-equal form of a design or outcome (numbers, lists, arrays, dicts)."""
    value = to_jsonable(value)
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class PosteriorCache:
    """Posterior samples per data state (key = tuple of frozen (design, outcome) pairs).

    Samples for a state are drawn once with a generator derived from the env's seed and the
    key, so a state's samples do not depend on the order of calls. A request for more samples
    than stored redraws. Stored arrays are private copies: callers index them, never mutate
    them -- except the faithful location-finding shuffle, which reproduces an in-place bug.
    """

    def __init__(self, max_entries: int = 64) -> None:
        self._store: OrderedDict[tuple, Theta] = OrderedDict()
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(data: Sequence[tuple[Any, Any]]) -> tuple:
        """The cache key of a data list."""
        return tuple((_freeze(d), _freeze(y)) for d, y in data)

    def get(self, env: Any, data: Sequence[tuple[Any, Any]], n: int) -> Theta:
        """At least ``n`` posterior samples for ``data`` (from the cache when possible)."""
        key = self.key(data)
        entry = self._store.get(key)
        if entry is not None and theta_size(entry) >= n:
            self.hits += 1
            self._store.move_to_end(key)
            return entry
        self.misses += 1
        rng = env.rng_for("posterior", seeding.stable_hash(repr(key)), n)
        theta = env.posterior_sample(n, rng, data=list(data))
        entry = {k: np.array(v, copy=True) for k, v in theta.items()}
        if theta_size(entry) < n:
            raise InputError(f"{env.name}.posterior_sample returned fewer than {n} samples")
        self._store[key] = entry
        while len(self._store) > self.max_entries:
            self._store.popitem(last=False)
        return entry

    def __len__(self) -> int:
        return len(self._store)


def cache_for(env: Any) -> PosteriorCache:
    """The env's own cache (created on first use)."""
    if getattr(env, "posterior_cache", None) is None:
        env.posterior_cache = PosteriorCache()
    return env.posterior_cache


def duplicating_shuffle(theta: Theta, rng: np.random.Generator) -> None:
    """Shuffle ``theta`` in place the way Python's ``random.shuffle`` treats a 2-D numpy array.

    Fisher-Yates swaps ``x[i], x[j] = x[j], x[i]`` through row *views*: row j is copied into row
    i, then row i (now equal to row j) back into row j, so row i's original is lost. Because
    rows below i are untouched when step i runs, the whole pass is ``x[i] = x_old[j_i]`` with
    ``j_i`` uniform on ``0..i`` -- about half the distinct rows survive each call.
    """
    size = theta_size(theta)
    source = np.floor(rng.random(size) * (np.arange(size) + 1)).astype(int)
    for value in theta.values():
        value[...] = value[source]


def nmc_fixed(env: Any, design: Any, outer: Theta, inner: Theta, rng: np.random.Generator) -> float:
    """One design's fixed (prior-contrastive) NMC estimate from prepared ``outer`` (N) and
    ``inner`` samples: the M inner samples are shared by every outer sample (module
    docstring)."""
    y = np.asarray(env.simulate(outer, design, rng))
    l_outer = np.asarray(env.log_likelihood(y, outer, design), dtype=float)
    distinct = _distinct_outcomes(y)
    rows_y, inverse = (y, None) if distinct is None else distinct
    m = theta_size(inner)
    log_sum = np.empty(len(rows_y))
    rows = max(4, _BLOCK_ELEMENTS // max(m, 1))  # cache-sized blocks of the N x M matrix
    for start in range(0, len(rows_y), rows):
        stop = min(start + rows, len(rows_y))
        block = env.cross_log_likelihood(rows_y[start:stop], inner, design)
        block = np.asarray(block, dtype=float)
        if not block.flags.writeable or not block.flags.c_contiguous:
            block = np.array(block, dtype=float)
        log_sum[start:stop] = _row_log_sum_exp(block)
    if inverse is not None:
        log_sum = log_sum[inverse]
    with np.errstate(invalid="ignore"):
        log_marginal = np.logaddexp(l_outer, log_sum) - np.log(m + 1)
        return float(np.mean(l_outer - log_marginal))


def nmc_faithful(
    env: Any, design: Any, outer: Theta, inner: Theta, rng: np.random.Generator
) -> float:
    """One design's published NMC estimate from prepared ``outer`` (N) and ``inner`` (N*M)
    samples: block n of M inner samples belongs to outer sample n (module docstring)."""
    y = np.asarray(env.simulate(outer, design, rng))
    n = len(y)
    m = theta_size(inner) // n
    l_outer = np.asarray(env.faithful_log_likelihood(y, outer, design, inner=False), dtype=float)
    y_rep = np.repeat(y, m, axis=0)
    l_inner = env.faithful_log_likelihood(y_rep, inner, design, inner=True)
    l_inner = np.asarray(l_inner, dtype=float).reshape(n, m)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_marginal = logsumexp(l_inner, axis=1) - np.log(m)
        return float(np.mean(l_outer - log_marginal))


def nmc_eig(
    env: Any,
    designs: Sequence[Any],
    *,
    data: Sequence[tuple[Any, Any]] | None = None,
    n_outer: int | None = None,
    n_inner: int | None = None,
    estimator: str | None = None,
    rng: np.random.Generator | None = None,
    theta: Theta | None = None,
    cache: PosteriorCache | None = None,
) -> np.ndarray:
    """EIG of each design (parsed, not text) under the posterior given ``data``.

    ``data`` defaults to ``env.data``; ``estimator`` to ``env.fidelity``; N and M to the env's
    ``fixed_nmc`` / ``faithful_nmc`` (else :data:`FIXED_NMC` / :data:`FAITHFUL_NMC`). ``theta``
    supplies the posterior samples directly (at least N + M, or N + N*M for faithful) instead
    of ``env.posterior_sample`` through ``cache`` (default the env's own). ``rng`` defaults to
    one derived from the env's seed and the number of data points. Returns shape ``(len,)``.
    """
    estimator = estimator or env.fidelity
    if estimator not in ESTIMATORS:
        raise InputError(f"estimator must be one of {list(ESTIMATORS)}; got {estimator!r}")
    if not getattr(env, "supports_eig", True):
        raise NotImplementedError(f"{env.name} has no EIG (the published code defines none)")
    data = env.data if data is None else list(data)
    default = getattr(env, f"{estimator}_nmc", FIXED_NMC if estimator == "fixed" else FAITHFUL_NMC)
    n = int(n_outer or default[0])
    m = int(n_inner or default[1])
    need = n + m if estimator == "fixed" else n + n * m
    rng = rng if rng is not None else env.rng_for("eig", len(data))
    pool = (cache or cache_for(env)).get(env, data, need) if theta is None else theta
    size = theta_size(pool)
    if size < need:
        raise InputError(f"nmc_eig needs {need} posterior samples (N={n}, M={m}); got {size}")
    out = np.empty(len(designs))
    if estimator == "fixed":
        order = rng.permutation(size)
        outer, inner = theta_take(pool, order[:n]), theta_take(pool, order[n:need])
        noise_seed = int(rng.integers(2**63))
        for i, design in enumerate(designs):
            sim_rng = np.random.default_rng(noise_seed)  # common random numbers across designs
            out[i] = env.eig_estimate(design, outer, inner, estimator="fixed", rng=sim_rng)
        return out
    duplicating = getattr(env, "faithful_shuffle", "permutation") == "duplicating"
    from_start = getattr(env, "nmc_inner_layout", "after_outer") == "from_start"
    for i, design in enumerate(designs):
        if duplicating:
            duplicating_shuffle(pool, rng)
            order = np.arange(size)
        else:
            order = rng.permutation(size)
        outer = theta_take(pool, order[:n])
        inner_index = order[: n * m] if from_start else order[n : n + n * m]
        inner = theta_take(pool, inner_index)
        out[i] = env.eig_estimate(design, outer, inner, estimator="faithful", rng=rng)
    return out


#: Fixed-mode (N outer, M inner) of a regret pass: 101 designs x 10 steps at the single-EIG
#: default (2000 x 2000) does 16x the likelihood work; at 500 x 500 a pass takes 0.1-1 s
#: (emotion: about a minute; ``benchmarks/bench_boxinggym_eig.py``) and its mean regret
#: stays within about 10% of the 2000 x 2000 figure (measured on death process, dugongs,
#: peregrines and location finding; noisier where regret is near zero).
REGRET_NMC = (500, 500)


def ei_regret(
    env_factory: Callable[[], Any],
    designs: Sequence[Any],
    outcomes: Sequence[Any] | None,
    *,
    n_random: int = 100,
    seed: int = 0,
    estimator: str | None = None,
    n_outer: int | None = None,
    n_inner: int | None = None,
) -> dict[str, Any]:
    """Per-step EI regret of an agent's designs: max EIG of ``n_random`` random designs minus
    the EIG of the agent's design, both under the posterior given the previous steps.

    ``designs`` are the agent's successful designs (text, validated here, or parsed).
    Fixed: the posterior conditions on the recorded ``outcomes`` (required), so it is the
    posterior the agent actually faced. Faithful: as upstream, a fresh env from
    ``env_factory()`` (a new true theta) re-simulates each outcome with ``env.run``; the agent's
    design is evaluated after the random ones, one NMC call each. Random designs come from
    ``env.sample_design`` with generators derived from ``seed`` and the step.
    Returns the published keys ``eigs_regret``, ``eigs_max``, ``inputs_max``, ``eigs`` plus
    ``regret_mean``, ``estimator``, ``env`` and ``skipped`` (indices of invalid designs).
    """
    env = env_factory()
    estimator = estimator or env.fidelity
    if estimator == "fixed" and n_outer is None and n_inner is None:
        n_outer, n_inner = REGRET_NMC
    if estimator == "fixed" and outcomes is None:
        raise InputError("fixed-mode regret replays the recorded outcomes; pass outcomes")
    if outcomes is not None and len(outcomes) != len(designs):
        raise InputError(f"got {len(designs)} designs but {len(outcomes)} outcomes")
    data: list[tuple[Any, Any]] = []
    result: dict[str, Any] = {"env": env.name, "estimator": estimator, "skipped": []}
    regrets, maxima, argmaxes, agent_eigs = [], [], [], []
    for step, raw in enumerate(designs):
        try:
            design = env.validate(raw) if isinstance(raw, str) else raw
        except InvalidDesign:
            result["skipped"].append(step)
            continue
        design_rng = seeding.rng(seed, "boxinggym", env.name, "regret-designs", step)
        candidates = [env.sample_design(design_rng) for _ in range(n_random)]
        eigs = nmc_eig(
            env,
            [*candidates, design],
            data=data,
            n_outer=n_outer,
            n_inner=n_inner,
            estimator=estimator,
            rng=seeding.rng(seed, "boxinggym", env.name, "regret-eig", step),
        )
        best = int(np.nanargmax(eigs[:-1])) if np.isfinite(eigs[:-1]).any() else 0
        regrets.append(float(eigs[best] - eigs[-1]))
        maxima.append(float(eigs[best]))
        argmaxes.append(to_jsonable(candidates[best]))
        agent_eigs.append(float(eigs[-1]))
        if estimator == "fixed":
            outcome = outcomes[step]  # type: ignore[index]
        else:
            env.run(raw if isinstance(raw, str) else env.format_design(design))
            outcome = env.data[-1][1]
        data.append((design, outcome))
    finite = [r for r in regrets if np.isfinite(r)]
    result.update(
        eigs_regret=regrets,
        eigs_max=maxima,
        inputs_max=argmaxes,
        eigs=agent_eigs,
        regret_mean=float(np.mean(finite)) if finite else float("nan"),
    )
    return result
