"""Timings of the BoxingGym EIG machinery against the published PyMC-based code (spec section 18).

Run: ``.venv/bin/python benchmarks/bench_boxinggym_eig.py [--quick] [--json] [--env NAME ...]``.
For every registered BoxingGym environment that imports (environments still being written are
skipped) it times

* one EIG for one design at a *new* data state (posterior sampling + the NMC estimate), fixed
  and faithful estimators, after 3 observations -- published: 10-45 s (NUTS refit + NMC). The
  figure is the best of ``--repeats`` (default 3) cold-cache runs, each with a fresh
  :class:`PosteriorCache` on the same data and design, so a busy machine inflates it less;
* a full EI-regret pass, 10 steps x (100 random + 1 agent design), fixed estimator with replayed
  outcomes -- published: about 10 minutes per env and seed.

The speed-up columns divide both ends of the published 10-45 s range by the new-state time; the
requirement is at least 100x against the 10 s end (<= 0.10 s). ``--json`` also writes
``benchmarks/results/bench_boxinggym_eig.json``. It asserts nothing; timings depend on the
machine. ``--quick`` does 3 regret steps (the pass time is scaled to 10 steps).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from silicolab.envs import make
from silicolab.envs.boxinggym import ENV_IDS
from silicolab.envs.boxinggym.eig import PosteriorCache, ei_regret, nmc_eig

PUBLISHED_NEW_STATE_S = (10.0, 45.0)
PUBLISHED_REGRET_PASS_S = 600.0
#: The requirement: a new-state EIG at least this many times faster than the published 10 s.
REQUIRED_SPEEDUP = 100.0
RESULTS_PATH = Path(__file__).resolve().parent / "results" / "bench_boxinggym_eig.json"


def _build(env_id: str, fidelity: str, seed: int = 1) -> Any | None:
    try:
        return make(env_id, fidelity=fidelity, seed=seed)
    except Exception as err:  # an env still under construction, or one needing an LLM
        print(f"{env_id:44s} skipped ({type(err).__name__}: {str(err)[:60]})")
        return None


def time_new_state(env_id: str, fidelity: str, repeats: int = 3) -> list[float] | None:
    """Seconds for one design's EIG right after the data changed, for each of ``repeats``
    cold-cache runs on the same 3 observations and design (``None`` without an EIG)."""
    env = _build(env_id, fidelity)
    if env is None:
        return None
    if not env.supports_eig:  # faithful predator-prey: the published code has no EIG
        return None
    rng = np.random.default_rng(0)
    for _ in range(3):
        env.run(env.format_design(env.sample_design(rng)))
    design = env.sample_design(rng)
    times = []
    for _ in range(max(1, repeats)):
        env.posterior_cache = PosteriorCache()  # cold: the posterior is sampled again
        start = time.perf_counter()
        nmc_eig(env, [design])
        times.append(time.perf_counter() - start)
    return times


def time_regret_pass(env_id: str, steps: int) -> float | None:
    """Seconds for a fixed-mode regret pass over ``steps`` random 'agent' designs, scaled to
    the published 10 steps."""
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


def _row(env_id: str, steps: int, repeats: int) -> dict[str, Any] | None:
    """One environment's measurements (``None`` when it has no EIG or does not build)."""
    fixed = time_new_state(env_id, "fixed", repeats)
    if fixed is None:
        return None
    faithful = time_new_state(env_id, "faithful", repeats)
    regret = time_regret_pass(env_id, steps)
    best = min(fixed)
    lo, hi = PUBLISHED_NEW_STATE_S
    published = faithful is not None  # no faithful EIG: the published code had none to beat
    return {
        "env": env_id,
        "new_state_fixed_s": best,
        "new_state_fixed_runs_s": fixed,
        "new_state_faithful_s": min(faithful) if faithful else None,
        "regret_pass_s": regret,
        "speedup_vs_published_low": lo / best,
        "speedup_vs_published_high": hi / best,
        "published_eig": published,
        "meets_requirement": lo / best >= REQUIRED_SPEEDUP if published else None,
        "regret_speedup": PUBLISHED_REGRET_PASS_S / regret if regret and published else None,
    }


def _print_row(row: dict[str, Any]) -> None:
    faithful = row["new_state_faithful_s"]
    faithful_text = f"{faithful:9.3f}s" if faithful is not None else f"{'-':>10s}"
    regret = row["regret_pass_s"]
    regret_text = f"{regret:11.1f}s" if regret is not None else f"{'-':>12s}"
    speed = f"x{row['speedup_vs_published_low']:,.0f} / x{row['speedup_vs_published_high']:,.0f}"
    if row["meets_requirement"] is None:
        speed = "no published EIG to compare"
    elif not row["meets_requirement"]:
        speed += " (below x100)"
    if row["regret_speedup"]:
        speed += f"  regret x{row['regret_speedup']:,.0f}"
    new_state = row["new_state_fixed_s"]
    print(f"{row['env']:44s} {new_state:15.3f}s {faithful_text} {regret_text}  {speed}")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Time every environment, print the table and (``--json``) write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 regret steps instead of 10")
    parser.add_argument("--json", action="store_true", help=f"also write {RESULTS_PATH.name}")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="JSON results path")
    parser.add_argument("--repeats", type=int, default=3, help="cold-cache new-state runs")
    parser.add_argument("--env", action="append", help="only these env ids (repeatable)")
    args = parser.parse_args(argv)
    steps = 3 if args.quick else 10
    env_ids = [e if "/" in e else f"boxinggym/{e}" for e in args.env] if args.env else ENV_IDS
    lo, hi = PUBLISHED_NEW_STATE_S
    print(f"published: {lo:.0f}-{hi:.0f} s per design at a new data state; ")
    print(f"           ~{PUBLISHED_REGRET_PASS_S:.0f} s per regret pass (10 steps x 101 designs)")
    print(f"new state: best of {args.repeats} cold-cache runs; required >= x{REQUIRED_SPEEDUP:.0f}")
    print(f"           against {lo:.0f} s (<= {lo / REQUIRED_SPEEDUP:.2f} s)\n")
    header = f"{'env':44s} {'new-state fixed':>16s} {'faithful':>10s} {'regret pass':>12s}"
    print(header + f"  speed-up vs {lo:.0f} s / {hi:.0f} s")
    rows, failures = [], {}
    for env_id in env_ids:
        try:
            row = _row(env_id, steps, args.repeats)
        except Exception as err:  # report and go on with the other environments
            print(f"{env_id:44s} failed ({type(err).__name__}: {str(err)[:60]})")
            failures[env_id] = f"{type(err).__name__}: {err}"
            continue
        if row is not None:
            rows.append(row)
            _print_row(row)
    results = {
        "mode": "quick" if args.quick else "full",
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "repeats": args.repeats,
        "regret_steps": steps,
        "published_new_state_s": list(PUBLISHED_NEW_STATE_S),
        "published_regret_pass_s": PUBLISHED_REGRET_PASS_S,
        "required_speedup": REQUIRED_SPEEDUP,
        "envs": rows,
        "failures": failures,
    }
    if args.json:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nwrote {args.output}")
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
