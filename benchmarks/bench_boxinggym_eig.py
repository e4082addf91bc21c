"""Timings of the BoxingGym EIG machinery against the published PyMC-based code (spec section 18).

Run: ``.venv/bin/python benchmarks/bench_boxinggym_eig.py [--quick]``. For every registered
BoxingGym environment that imports (environments still being written are skipped) it times

* one EIG for one design at a *new* data state (posterior sampling + the NMC estimate), fixed
  and faithful estimators, after 3 observations -- published: 10-45 s (NUTS refit + NMC);
* a full EI-regret pass, 10 steps x (100 random + 1 agent design), fixed estimator with replayed
  outcomes -- published: about 10 minutes per env and seed.

It asserts nothing; timings depend on the machine. ``--quick`` does 3 regret steps.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

from silicolab.envs import make
from silicolab.envs.boxinggym import ENV_IDS
from silicolab.envs.boxinggym.eig import PosteriorCache, ei_regret, nmc_eig

PUBLISHED_NEW_STATE_S = (10.0, 45.0)
PUBLISHED_REGRET_PASS_S = 600.0


def _build(env_id: str, fidelity: str, seed: int = 1) -> Any | None:
    try:
        return make(env_id, fidelity=fidelity, seed=seed)
    except Exception as err:  # an env still under construction, or one needing an LLM
        print(f"{env_id:44s} skipped ({type(err).__name__}: {str(err)[:60]})")
        return None


def time_new_state(env_id: str, fidelity: str) -> float | None:
    """Seconds for one design's EIG right after the data changed (cache cold)."""
    env = _build(env_id, fidelity)
    if env is None:
        return None
    if not env.supports_eig:
        print(f"{env_id:44s} no EIG (as published)")
        return None
    rng = np.random.default_rng(0)
    for _ in range(3):
        env.run(env.format_design(env.sample_design(rng)))
    design = env.sample_design(rng)
    env.posterior_cache = PosteriorCache()
    start = time.perf_counter()
    nmc_eig(env, [design])
    return time.perf_counter() - start


def time_regret_pass(env_id: str, steps: int) -> float | None:
    """Seconds for a fixed-mode regret pass over ``steps`` random 'agent' designs."""
    env = _build(env_id, "fixed")
    if env is None or not env.supports_eig:
        return None
    rng = np.random.default_rng(1)
    designs = []
    for _ in range(steps):
        text = env.format_design(env.sample_design(rng))
        env.run(text)
        designs.append(text)
    outcomes = [y for _, y in env.data]
    start = time.perf_counter()
    ei_regret(lambda: make(env_id, fidelity="fixed", seed=1), designs, outcomes, n_random=100)
    return (time.perf_counter() - start) * 10 / steps


def main() -> None:
    steps = 3 if "--quick" in sys.argv else 10
    lo, hi = PUBLISHED_NEW_STATE_S
    print(f"published: {lo:.0f}-{hi:.0f} s per design at a new data state; ")
    print(f"           ~{PUBLISHED_REGRET_PASS_S:.0f} s per regret pass (10 steps x 101 designs)\n")
    header = f"{'env':44s} {'new-state fixed':>16s} {'faithful':>10s} {'regret pass':>12s}"
    print(header + "  speed-up (new state / regret)")
    for env_id in ENV_IDS:
        try:
            fixed = time_new_state(env_id, "fixed")
            if fixed is None:
                continue
            faithful = time_new_state(env_id, "faithful")
            regret = time_regret_pass(env_id, steps)
        except Exception as err:  # report and go on with the other environments
            print(f"{env_id:44s} failed ({type(err).__name__}: {str(err)[:60]})")
            continue
        faithful_text = f"{faithful:9.3f}s" if faithful is not None else f"{'-':>10s}"
        regret_text = f"{regret:11.1f}s" if regret is not None else f"{'-':>12s}"
        speed = f"x{lo / fixed:,.0f}-{hi / fixed:,.0f}"
        if regret:
            speed += f" / x{PUBLISHED_REGRET_PASS_S / regret:,.0f}"
        print(f"{env_id:44s} {fixed:15.3f}s {faithful_text} {regret_text}  {speed}")


if __name__ == "__main__":
    main()
