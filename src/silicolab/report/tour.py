"""The report sections and terminal lines of the demo's tour (discovery, CausaLab,
BoxingGym): rendering only, from the figures :mod:`silicolab.cli.demo_tour` computes."""

from __future__ import annotations

from typing import Any


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
        "`silicolab bench boxinggym --agent reference` (all ten environments, beside the paper).",
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
