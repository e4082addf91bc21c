"""The other stops of ``silicolab demo``: causal discovery, the CausaLab crystal lab and a
BoxingGym experimental-design episode.

Each part runs offline in a few seconds, returns its figures as plain data, and renders
its own section of the demo report.
"""

from __future__ import annotations

from typing import Any

#: Discovery methods the demo runs on Auto MPG, with the paper's (SHD, NHD) for each.
DISCOVERY = (("pc", (8, 0.48)), ("direct_lingam", (8, 0.48)), ("exact", None))


def discovery_part() -> dict[str, Any]:
    """PC, DirectLiNGAM and Exact Search on the bundled Auto MPG data, scored against the
    SCP ground truth and set beside the MAC paper's numbers."""
    from silicolab.discovery import discover, load, score

    dataset = load("auto_mpg")
    rows = []
    for method, published in DISCOVERY:
        result = discover(dataset.data, method)
        scores = score(result, dataset.truth)
        rows.append(
            {
                "method": method,
                "shd": scores["shd"],
                "nhd": scores["nhd_truncated"],
                "f1": round(scores["f1"], 3),
                "runtime_s": round(result.runtime_s, 3),
                "paper": None if published is None else list(published),
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
    from silicolab.scientists.boxinggym import make_scientist, run_boxinggym_episode

    rows = []
    for agent, options in (("boed", {"n_candidates": 30}), ("random", {})):
        record = run_boxinggym_episode(
            "death_process",
            make_scientist(agent, seed=1, **options),
            seed=1,
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


def tour_report(
    discovery: dict[str, Any], causalab: dict[str, Any], boxinggym: dict[str, Any]
) -> list[str]:
    """The report sections of the three parts (Markdown lines)."""
    lines = [
        "## Causal discovery on Auto MPG",
        "",
        "| method | SHD | NHD | F1 | seconds | MAC paper (SHD / NHD) |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for r in discovery["rows"]:
        paper = (
            "our own row (correct orientation)"
            if r["paper"] is None
            else (f"{r['paper'][0]} / {r['paper'][1]}")
        )
        lines.append(
            f"| {r['method']} | {r['shd']} | {r['nhd']} | {r['f1']} | {r['runtime_s']} | {paper} |"
        )
    lines += [
        "",
        "More: `silicolab discover --dataset sachs --method pc`, `silicolab bench discovery`.",
        "",
        "## CausaLab crystal lab, reference scientist",
        "",
        f"{causalab['episodes']} episodes of suite `{causalab['suite']}`: task accuracy "
        f"{causalab['accuracy']:.0f}% (paper's best, {causalab['published_model']}: "
        f"{causalab['published_accuracy']}%), all-edge F1 {causalab['all_edge_f1']:.2f}, "
        f"SHD {causalab['shd']:.2f}, weight F1 {causalab['weight_f1']:.2f}, "
        f"{causalab['budget_used']:.1f} interventions used of 12.",
        "",
        "More: `silicolab bench causalab --agent reference` (all 250 main-suite episodes), "
        "`--agent llm --model ...`.",
        "",
        f"## BoxingGym: {boxinggym['steps']} experiments on the death process",
        "",
        "| designer | standardized error before | after | mean EI regret |",
        "|---|---:|---:|---:|",
        *[
            f"| {r['agent']} | {r['before']} | {r['after']} | {r['regret']} |"
            for r in boxinggym["rows"]
        ],
        "",
        "Negative standardized error beats the prior-mean predictor. More: "
        "`silicolab bench boxinggym --agent boed` (all ten environments, beside the paper).",
        "",
    ]
    return lines


def print_tour(
    discovery: dict[str, Any], causalab: dict[str, Any], boxinggym: dict[str, Any]
) -> None:
    """The three parts on the terminal."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title="causal discovery on Auto MPG vs the MAC paper")
    for col in ("method", "SHD", "NHD", "F1", "paper"):
        table.add_column(col)
    for r in discovery["rows"]:
        paper = "ours" if r["paper"] is None else f"{r['paper'][0]} / {r['paper'][1]}"
        table.add_row(r["method"], str(r["shd"]), str(r["nhd"]), str(r["f1"]), paper)
    console = Console()
    console.print(table)
    console.print(
        f"CausaLab 4-node lab, reference scientist: {causalab['accuracy']:.0f}% solved, "
        f"edge F1 {causalab['all_edge_f1']:.2f} over {causalab['episodes']} episodes "
        f"(paper's best {causalab['published_accuracy']}%)"
    )
    for r in boxinggym["rows"]:
        console.print(
            f"BoxingGym death process, {r['agent']} designer: standardized error "
            f"{r['before']} -> {r['after']} after {boxinggym['steps']} experiments, "
            f"EI regret {r['regret']}"
        )
