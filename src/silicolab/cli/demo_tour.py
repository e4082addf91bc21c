"""The other stops of ``silicolab demo``: causal discovery, the CausaLab crystal lab and a
BoxingGym experimental-design episode.

Each part runs offline in a few seconds and returns its figures as plain data;
:mod:`silicolab.report.tour` renders them (re-exported here for ``silicolab.cli.demo``).
"""

from __future__ import annotations

from typing import Any

from silicolab.report.tour import print_tour, tour_report

#: Discovery methods the demo runs on Auto MPG (beside the MAC paper's row, if it has one).
DISCOVERY = ("pc", "direct_lingam", "exact")
#: The BoxingGym designers of the demo: (row label, scientist, options).
DESIGNERS = (("reference", "reference", {"n_candidates": 30}), ("random", "random", {}))


def discovery_part() -> dict[str, Any]:
    """PC, DirectLiNGAM and Exact Search on the bundled Auto MPG data, scored against the
    SCP ground truth and set beside the MAC paper's numbers."""
    from silicolab.bench.discovery import find_published
    from silicolab.discovery import discover, load, score

    dataset = load("auto_mpg")
    rows = []
    for method in DISCOVERY:
        published = find_published(method, "auto_mpg")
        result = discover(dataset.data, method)
        scores = score(result, dataset.truth)
        rows.append(
            {
                "method": method,
                "shd": scores["shd"],
                "nhd": scores["nhd_truncated"],
                "f1": round(scores["f1"], 3),
                "runtime_s": round(result.runtime_s, 3),
                "paper": None if published is None else [published.shd, published.nhd],
            }
        )
    return {"dataset": "auto_mpg", "rows": rows}


def causalab_part(run: Any, episodes: int = 10) -> dict[str, Any]:
    """The reference (no-LLM) scientist on the first ``episodes`` graphs of the 4-node
    CausaLab suite; episodes are recorded in the demo's run, so ``--resume`` skips them."""
    import json

    from silicolab.bench.causalab import run_causalab_bench

    table = run_causalab_bench(["4nodes"], "reference", episodes=episodes, jobs=1, run=run)
    row = json.loads(table.to_json(orient="records"))[0]
    keep = (
        "suite",
        "episodes",
        "accuracy",
        "all_edge_f1",
        "shd",
        "weight_f1",
        "budget_used",
        "published_accuracy",
        "published_model",
    )
    return {k: row.get(k) for k in keep}


def boxinggym_part(steps: int = 5) -> dict[str, Any]:
    """The greedy-EIG Bayesian scientist and the random designer, ``steps`` experiments
    each on BoxingGym's death process (seed 1): standardized error before and after, and
    the mean EI regret against the best of 30 random designs."""
    from silicolab.scientists.boxinggym import make_env, make_scientist, play_episode

    rows = []
    for agent, name, options in DESIGNERS:
        record = play_episode(
            make_env("death_process", seed=1),
            make_scientist(name, seed=1, **options),
            steps=steps,
            checkpoints=(0, steps),
            regret=True,
            regret_random=30,
        )
        before, after = record.scores[0], record.scores[-1]
        rows.append(
            {
                "agent": agent,
                "before": round(before.standardized, 3),
                "after": round(after.standardized, 3),
                "regret": round(float(record.regret_mean), 4),
            }
        )
    return {"env": "death_process", "goal": "direct", "steps": steps, "rows": rows}


__all__ = ["boxinggym_part", "causalab_part", "discovery_part", "print_tour", "tour_report"]
