"""``silicolab sim run NAME``: run one worked simulation and keep it in a run directory.

The run directory holds ``record.json`` (the example's summary, including the episode log),
``report.md`` (a readable summary) and ``transcript.html`` (the episode log as a
self-contained, HTML-escaped page). Without ``--model`` the examples run offline: the
language-model agents use the ``scripted`` test double and the rule-based ones need no model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from silicolab.core.config import load_settings
from silicolab.core.errors import InputError

TRANSCRIPT_HTML = "transcript.html"
_SKIP = ("log", "transcript", "events", "survey", "final_state", "trades", "rejected")


def _headline(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """The few scalar facts worth printing: ``(label, value)`` pairs."""
    rows = []
    for key, value in summary.items():
        if key in _SKIP or isinstance(value, dict | list):
            continue
        rows.append((key, "-" if value is None else str(value)))
    for key in ("trades", "rejected", "transcript", "log"):
        if isinstance(summary.get(key), list):
            rows.append((f"{key} (count)", str(len(summary[key]))))
    return rows


def _report(name: str, run_dir: Path, model_spec: str, summary: dict[str, Any]) -> str:
    lines = [f"# silicolab sim: {name}", "", f"Run directory: `{run_dir.name}`", ""]
    lines += [f"Model: `{model_spec}`", "", "| field | value |", "|---|---|"]
    lines += [f"| {k} | {v.replace('|', '/')} |" for k, v in _headline(summary)]
    statements = summary.get("transcript") or []
    if statements:
        lines += ["", "## Transcript", ""]
        lines += [f"{i + 1}. **{s['speaker']}**: {s['text']}" for i, s in enumerate(statements)]
    answers = summary.get("survey") or []
    if answers:
        lines += ["", "## Survey", "", "| who | question | value | raw |", "|---|---|---|---|"]
        lines += [
            f"| {a['addressee']} | {a['question']} | {a['value']} | {a['raw']} |" for a in answers
        ]
    events = summary.get("events") or [
        f"{t['buyer']} buys a {t['item']} from {t['seller']} for {t['price']:.2f}"
        for t in summary.get("trades") or []
    ]
    if events:
        lines += ["", "## Events", ""] + [f"- {e}" for e in events]
    rejected = summary.get("rejected") or []
    if rejected:
        lines += ["", "## Rejected attempts", ""]
        lines += [f"- {r['actor']}: `{r['action']}` ({r['reason']})" for r in rejected]
    lines += [
        "",
        f"Files: `record.json` (everything as data), `{TRANSCRIPT_HTML}` (the episode log).",
        "",
    ]
    return "\n".join(lines)


def run_sim(
    name: str,
    *,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    seed: int,
    runs_dir: Path | None,
    config: Path | None,
    json_out: bool,
) -> dict[str, Any]:
    """Run the example ``name``, write its run directory and print a summary."""
    from silicolab.core.files import atomic_write_text
    from silicolab.core.secrets import scrub_text
    from silicolab.runs import Run
    from silicolab.sim.examples.registry import EXAMPLES, USES_MODEL
    from silicolab.sim.log import EpisodeLog

    if name not in EXAMPLES:
        raise InputError(f"unknown simulation {name!r}; examples: {', '.join(sorted(EXAMPLES))}")
    llm = None
    if model is not None and name in USES_MODEL:
        from silicolab.cli.discover import llm_model

        llm = llm_model(model, base_url, api_key_env, config)
    model_spec = getattr(llm, "spec", None) or (
        "scripted (offline)" if name in USES_MODEL else "none (rule-based agents)"
    )
    root = runs_dir or Path(load_settings(config).runs_dir)
    run = Run.create(root, kind="sim", slug=name, seed=seed, config={"example": name})
    with run:
        summary = EXAMPLES[name](llm, seed)
        record = {"kind": "sim", "example": name, "model": model_spec, "seed": seed, **summary}
        run.write_record(record)
        run.write_report(_report(name, run.path, model_spec, summary))
        page = EpisodeLog.from_list(summary["log"]).to_html(f"silicolab sim: {name}")
        atomic_write_text(run.path / TRANSCRIPT_HTML, scrub_text(page))
    out = {
        "run_dir": str(run.path),
        "example": name,
        "model": model_spec,
        "seed": seed,
        **{k: v for k, v in summary.items() if k not in _SKIP},
    }
    if json_out:
        typer.echo(json.dumps(out))
    else:
        _print_summary(name, summary, run.path)
    return out


def _print_summary(name: str, summary: dict[str, Any], run_dir: Path) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    table = Table(title=f"simulation: {name}")
    table.add_column("field")
    table.add_column("value")
    for key, value in _headline(summary):
        table.add_row(key, value)
    console.print(table)
    for s in (summary.get("transcript") or [])[:12]:
        console.print(f"[bold]{escape(s['speaker'])}[/bold]: {escape(s['text'])}", highlight=False)
    console.print(f"run directory: {run_dir}  (transcript: {run_dir / TRANSCRIPT_HTML})")
