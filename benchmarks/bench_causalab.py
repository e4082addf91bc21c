"""CausaLab: the reference interventional scientist on the released suites.

Run: ``.venv/bin/python benchmarks/bench_causalab.py``. Claims checked: the reference
scientist (no LLM) solves at least 98% of the solvable episodes of the linear main suites
3nodes..7nodes (all 250) with all-edge F1 >= 0.95, in a few milliseconds per episode. Also
reported: the random baseline on the same suites, the reference scientist on the
quadratic, hidden-disturbance, Golden and FreqParent variants, the faithful fidelity (whose
10 kHz clamp makes some large targets unsolvable), and what a 10x smaller intervention
step costs on the hidden suites. Episodes run in 2 worker processes (``jobs=2``); wall
times include starting the pool, so they depend on the machine, the tables do not.
"""

from __future__ import annotations

import time

import pandas as pd

from silicolab.bench.causalab import run_causalab_bench
from silicolab.envs import make
from silicolab.scientists.causalab import InterventionalScientist, play_episode

MAIN = ["3nodes", "4nodes", "5nodes", "6nodes", "7nodes"]
VARIANTS = [
    "4nodes_quad_hard",
    "4nodes_quad",
    "4nodes_hidden_n1",
    "4nodes_hidden_n2",
    "4nodes_hidden_n3",
    "4nodes_hidden_vrange_pm0p5",
    "4nodes_hidden_vrange_pm5",
    "4nodes_hidden_vrange_pm50",
    "4nodes_hidden_freqnode_n1",
    "4nodes_hidden_freqnode_n2",
    "4nodes_hidden_freqnode_n3",
    "4nodes_golden",
    "6nodes_golden",
    "4nodes_freqparent",
    "6nodes_freqparent",
]
COLUMNS = [
    "suite",
    "episodes",
    "solvable",
    "accuracy",
    "accuracy_solvable",
    "all_edge_f1",
    "target_parent_f1",
    "shd",
    "weight_f1",
    "root_f1",
    "budget_used",
    "imec_final",
    "runtime_s",
    "published_model",
    "published_accuracy",
    "published_all_edge_f1",
    "published_shd",
]


def timed(suites: list[str], agent: str, **options: object) -> tuple[pd.DataFrame, float]:
    start = time.perf_counter()
    table = run_causalab_bench(suites, agent, episodes=50, jobs=2, **options)  # type: ignore[arg-type]
    return table, time.perf_counter() - start


def show(title: str, table: pd.DataFrame) -> None:
    print(f"\n{title}")
    print(table[COLUMNS].round(3).to_string(index=False))


def main_suites() -> None:
    table, wall = timed(MAIN, "reference")
    episodes = int(table["episodes"].sum())
    show("reference scientist, linear main suites (fidelity fixed, seed 0):", table)
    solved = (table["accuracy_solvable"] * table["solvable"]).sum() / 100
    print(
        f"\n{episodes} episodes in {wall:.2f} s wall with jobs=2 "
        f"({1000 * wall / episodes:.1f} ms per episode wall; "
        f"{1000 * table['runtime_s'].mean():.1f} ms per episode in the worker); "
        f"solved {int(solved)}/{int(table['solvable'].sum())} solvable episodes; "
        f"mean all-edge F1 {table['all_edge_f1'].mean():.3f}"
    )
    assert (table["accuracy_solvable"] >= 98).all() and (table["all_edge_f1"] >= 0.95).all()

    faithful, _ = timed(MAIN, "reference", fidelity="faithful")
    show("reference scientist, faithful fidelity (10 kHz clamp):", faithful)
    random, _ = timed(MAIN, "random")
    show("random baseline, linear main suites:", random)


def variants() -> None:
    table, wall = timed(VARIANTS, "reference")
    show(f"reference scientist, variant suites ({wall:.1f} s wall):", table)
    rows = []
    for suite in [s for s in VARIANTS if "hidden" in s]:
        wins = sum(
            play_episode(
                make("causalab", suite=suite, index=i, seed=0), InterventionalScientist(step=1000.0)
            ).success
            for i in range(50)
        )
        rows.append((suite, 2 * wins))
    print("\nhidden suites with a 10x smaller intervention step (1000): accuracy %")
    print(pd.DataFrame(rows, columns=["suite", "accuracy"]).to_string(index=False))


if __name__ == "__main__":
    main_suites()
    variants()
