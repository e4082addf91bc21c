"""The report sections and terminal lines of the demo's tour (discovery, CausaLab,
BoxingGym): rendering only, from the figures :mod:`silicolab.cli.demo._tour` computes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Where the demo keeps each discovery method's seconds in ``run.json``'s ``timings``.
TIMING_PREFIX = "discovery/"


def tour_report(
    discovery: dict[str, Any],
    causalab: dict[str, Any],
    boxinggym: dict[str, Any],
    timings: Mapping[str, Any] | None = None,
) -> list[str]:
    """The report sections of the three parts (Markdown lines); a discovery method's
    seconds come from ``timings`` (the ``timings`` of the run's ``run.json``)."""
    lines = [
        "## Causal discovery on Auto MPG",
        "",
        "| method | SHD | NHD | F1 | seconds | MAC paper (SHD / NHD) |",
        "|---|---:|---:|---:|---:|---|",
    ]
    seconds = tour_seconds(discovery, timings)
    for r in discovery["rows"]:
        paper = (
            "our own row (correct orientation)"
            if r["paper"] is None
            else (f"{r['paper'][0]} / {r['paper'][1]}")
        )
        lines.append(
            f"| {r['method']} | {r['shd']} | {r['nhd']} | {r['f1']} | "
            f"{seconds.get(r['method'], '')} | {paper} |"
        )
    lines += [
        "",
        "More: `silicolab discover --dataset sachs --method pc`, `silicolab bench discovery`.",
        "",
        "## CausaLab crystal lab, reference scientist",
        "",
        f"{causalab['episodes']} episodes of suite `{causalab['suite']}`: task accuracy "
        f"{causalab['accuracy']:.0f}% (paper's best, {causalab['published_model']}: "
        f"{_paper_percent(causalab)}), all-edge F1 {causalab['all_edge_f1']:.2f}, "
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


def tour_seconds(discovery: Mapping[str, Any], timings: Mapping[str, Any] | None) -> dict[str, Any]:
    """Each discovery method's seconds: from ``timings`` (the ``timings`` of a run's
    ``run.json``, where the demo keeps ``"discovery/<method>"``), else from the method's
    row (a record written before the seconds moved to ``run.json``)."""
    timings = timings or {}
    out = {}
    for r in discovery.get("rows") or []:
        value = timings.get(TIMING_PREFIX + r["method"], r.get("runtime_s"))
        if value is not None:
            out[r["method"]] = value
    return out


def print_tour(
    discovery: dict[str, Any], causalab: dict[str, Any], boxinggym: dict[str, Any]
) -> None:
    """The three parts for a person: a table (Markdown in a pipe) and unwrapped lines."""
    from silicolab.report.tables import print_lines, print_table

    rows = [
        {
            **r,
            "paper": "ours" if r["paper"] is None else f"{r['paper'][0]} / {r['paper'][1]}",
        }
        for r in discovery["rows"]
    ]
    columns = [("method", "method"), ("shd", "SHD"), ("nhd", "NHD"), ("f1", "F1"),
               ("paper", "paper")]  # fmt: skip
    print_table(rows, columns, title="causal discovery on Auto MPG vs the MAC paper")
    lines = [
        f"CausaLab 4-node lab, reference scientist: {causalab['accuracy']:.0f}% solved, "
        f"edge F1 {causalab['all_edge_f1']:.2f} over {causalab['episodes']} episodes "
        f"(paper's best {_paper_percent(causalab)})"
    ]
    lines += [
        f"BoxingGym death process, {r['agent']} designer: standardized error "
        f"{r['before']} -> {r['after']} after {boxinggym['steps']} experiments, "
        f"EI regret {r['regret']}"
        for r in boxinggym["rows"]
    ]
    print_lines(lines)


def _paper_percent(causalab: dict[str, Any]) -> str:
    """The paper's accuracy with its provenance marks (older records: the bare number)."""
    return causalab.get("published_accuracy_shown") or f"{causalab['published_accuracy']}%"
