"""Box's Apprentice: fit time against the published procedure, and the reference
statistician's standardized errors beside the paper's Table 2.

Run: ``.venv/bin/python benchmarks/bench_apprentice.py [--seeds N] [--skip-timing]
[--skip-table] [--env NAME ...] [--json]``.

* **Fit time.** For each of Table 2's eight environments, ten random experiments, then the
  environment's true model family (the reference statistician's program) fitted in the
  sandbox: with our settings (2 chains x 500 draws after 500 tuning steps, PyTensor's numba
  backend, one compile cache shared by the programs of the run, starting empty), the same
  program once more (as each later checkpoint refits it), and with the published procedure
  (3 chains x 1000 draws after 500 tuning steps, the C backend, a fresh compile directory
  per program). It prints each fit's time (compile and sampling; and the sandbox wall time
  with PyMC's import), the median ratios, and how far the answers of the two settings
  differ (elpd_loo and predictive means at ten questions).
* **Table.** The reference statistician (greedy-EIG designs, answers from the true model
  family fitted as above) through the BoxingGym bench, standardized error before and after
  10 experiments beside Box's Apprentice in the paper's Table 2 (no EI regret).

It asserts nothing; timings depend on the machine. ``--json`` also writes
``benchmarks/results/bench_apprentice.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from silicolab.scientists.boxinggym import make_env
from silicolab.scientists.boxinggym.apprentice.execute import FitSettings, run_program
from silicolab.scientists.boxinggym.apprentice.reference_statistician import ENVS, true_program
from silicolab.scientists.boxinggym.apprentice.statistician import fit_job

RESULTS = Path(__file__).parent / "results" / "bench_apprentice.json"


def gathered(name: str, seed: int = 1, n: int = 10) -> Any:
    """An environment after ``n`` random experiments."""
    env = make_env(name, seed=seed)
    rng = np.random.default_rng(seed)
    while len(env.data) < n:
        env.run(env.format_design(env.sample_design(rng)))
    return env


def time_fits(names: list[str]) -> list[dict[str, Any]]:
    """One fit per environment with our settings and one with the published procedure."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-apprentice-") as cache:
        ours = FitSettings(compiledir=cache, timeout_s=900)
        published = FitSettings.published(timeout_s=900)
        for name in names:
            env = gathered(name)
            questions = env.goal.questions(10, np.random.default_rng(0))
            program = true_program(env)
            a = run_program(program, fit_job(env, questions, ours), ours)
            warm = run_program(program, fit_job(env, questions, ours), ours)
            b = run_program(program, fit_job(env, questions, published), published)
            row = {"env": name, "ok": a.ok and b.ok and warm.ok}
            if row["ok"]:
                spread = np.abs(np.array(a.predictions) - np.array(b.predictions))
                row.update(
                    ours_fit_s=a.fit_s, warm_fit_s=warm.fit_s, published_fit_s=b.fit_s,
                    ours_wall_s=a.elapsed_s, published_wall_s=b.elapsed_s,
                    ratio=b.fit_s / a.fit_s, warm_ratio=b.fit_s / warm.fit_s,
                    wall_ratio=b.elapsed_s / a.elapsed_s,
                    elpd_ours=a.elpd_loo, elpd_published=b.elpd_loo,
                    elpd_diff=a.elpd_loo - b.elpd_loo, loo_se=b.loo_se,
                    max_prediction_diff=float(spread.max()),
                )  # fmt: skip
            else:
                row["error"] = (a.message if not a.ok else b.message)[:300]
            print(_fit_line(row), flush=True)
            rows.append(row)
    return rows


def _fit_line(row: dict[str, Any]) -> str:
    if not row["ok"]:
        return f"{row['env']:<30} failed: {row['error']}"
    return (
        f"{row['env']:<30} fit {row['ours_fit_s']:5.1f} s (again {row['warm_fit_s']:4.1f} s) vs "
        f"{row['published_fit_s']:5.1f} s (x{row['ratio']:4.1f}, x{row['warm_ratio']:4.1f}); "
        f"wall {row['ours_wall_s']:5.1f} vs {row['published_wall_s']:5.1f}"
        f"; elpd {row['elpd_ours']:8.2f} vs {row['elpd_published']:8.2f} (se {row['loo_se']:.2f})"
        f"; max |prediction diff| {row['max_prediction_diff']:.3g}"
    )


def reference_table(names: list[str], seeds: int) -> list[dict[str, Any]]:
    """The reference statistician through the bench, beside Table 2."""
    from silicolab.bench.boxinggym import run_boxinggym_bench

    table = run_boxinggym_bench(
        [(n, "direct") for n in names], "statistician", seeds=seeds, regret=False, jobs=1
    )
    keep = ["env", "seeds", "errors", "before", "box_before", "after", "after_ci", "box_after"]
    return [{k: row[k] for k in keep} for row in table.to_dict("records")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", nargs="*", default=list(ENVS))
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--skip-timing", action="store_true")
    parser.add_argument("--skip-table", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out: dict[str, Any] = {}
    if not args.skip_timing:
        print("== fit time: ours (2 x 500 + 500 tuning, numba, shared cache) vs published "
              "(3 x 1000 + 500 tuning, C backend, fresh compile)")  # fmt: skip
        fits = time_fits(args.env)
        ok = [r for r in fits if r["ok"]]
        if ok:
            med = {
                k: statistics.median(r[k] for r in ok) for k in ok[0] if k.endswith(("_s", "ratio"))
            }
            print(f"median fit: {med['ours_fit_s']:.1f} s (again: {med['warm_fit_s']:.1f} s) vs "
                  f"{med['published_fit_s']:.1f} s published; median ratio x{med['ratio']:.1f} "
                  f"(again: x{med['warm_ratio']:.1f}; sandbox wall time with PyMC's import: "
                  f"x{med['wall_ratio']:.1f})")  # fmt: skip
            out["median"] = med
        out["fits"] = fits
    if not args.skip_table:
        print(f"\n== reference statistician, {args.seeds} seed(s), prior, fixed fidelity "
              "(accuracy goals -- choice, survival, moral -- report 1 - z(accuracy) in the "
              "paper, 1 more than fixed mode's standardized error: shown shifted)")  # fmt: skip
        rows = reference_table(args.env, args.seeds)
        print("| environment | before | Box's Apprentice | after 10 | Box's Apprentice |")
        print("|---|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['env']} | {r['before']:.2f} | {r['box_before']:.2f} | "
                  f"{r['after']:.2f} | {r['box_after']:.2f} |")  # fmt: skip
        out["table"] = rows
    if args.json:
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps(out, indent=2, default=float))


if __name__ == "__main__":
    main()
