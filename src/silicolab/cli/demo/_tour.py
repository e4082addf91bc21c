"""The other stops of ``silicolab demo``: causal discovery, the CausaLab crystal lab and a
BoxingGym experimental-design episode.

Each part runs offline in a few seconds and returns its figures as plain data;
:mod:`silicolab.report.tour` renders them (re-exported here for ``silicolab.cli.demo``).
"""

from __future__ import annotations

from typing import Any

from silicolab.report.tour import TIMING_PREFIX, print_tour, tour_report

#: Discovery methods the demo runs on Auto MPG (beside the MAC paper's row, if it has one).
DISCOVERY = ("pc", "direct_lingam", "exact")
#: The BoxingGym designers of the demo: (row label, scientist, options).
DESIGNERS = (("reference", "reference", {"n_candidates": 30}), ("random", "random", {}))


def discovery_part(run: Any = None) -> dict[str, Any]:
    """PC, DirectLiNGAM and Exact Search on the bundled Auto MPG data, scored against the
    SCP ground truth and set beside the MAC paper's numbers. Each method's wall-clock
    time is process accounting, not a result: it goes to ``run``'s ``run.json``
    (``timings["discovery/<method>"]``), so the record stays the same on every run."""
    from silicolab.bench.discovery import find_published
    from silicolab.discovery import discover, load, score

    dataset = load("auto_mpg")
    rows = []
    for method in DISCOVERY:
        published = find_published(method, "auto_mpg")
        result = discover(dataset.data, method)
        scores = score(result, dataset.truth)
        if run is not None:
            run.note_timing(f"{TIMING_PREFIX}{method}", result.runtime_s)
        rows.append(
            {
                "method": method,
                "shd": scores["shd"],
                "nhd": scores["nhd_truncated"],
                "f1": round(scores["f1"], 3),
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
    part = {k: row.get(k) for k in keep}
    part["published_accuracy_shown"] = _shown_percent(row)
    return part


def _shown_percent(row: dict[str, Any]) -> str:
    """The paper's accuracy as the tour prints it, with its provenance marks and where it
    comes from (``≈94%† (read off a figure; source: the authors' blog)``), so the demo
    never shows an estimate as if it were a published table cell."""
    from silicolab.bench.anchors import ROW_KEY, Provenance, value_text

    info = (row.get(ROW_KEY) or {}).get("published_accuracy")
    value = row.get("published_accuracy")
    if not info:
        return f"{value}%"
    provenance = Provenance(kind=info["kind"], where=info["where"], source=info["source"])
    prefix, suffix = provenance.marks()
    shown = f"{prefix}{value_text(info['low'], info['high'])}%{suffix}"
    how = {"approximate": "read off a figure", "text": "stated in the paper's text"}
    notes = [how[str(provenance.kind)]] if str(provenance.kind) in how else []
    if provenance.source != "paper":
        notes.append(f"source: {provenance.source.split(' (')[0]}")
    return f"{shown} ({'; '.join(notes)})" if notes else shown


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
