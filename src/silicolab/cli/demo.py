"""``silicolab demo``: the main job, offline.

A small survey experiment: a café randomizes its greeting (warm or neutral) and customers'
wait, asks each simulated customer how satisfied they are and what they would tip, and
fits the path model greeting, wait -> satisfaction -> tip. The customers are the
``scripted`` test double, whose answers follow a hidden structural causal model, so the
demo can show the estimates beside the truth. It exercises the run store (resumable),
the executor (bounded concurrency, progress bar), structured LLM answers, the
exact-prompt cache and the ledger.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from pydantic import BaseModel, Field

from silicolab.core.config import load_settings
from silicolab.core.errors import InputError
from silicolab.core.seeding import rng, stable_hash

SCENARIO = (
    "A café tests whether a warm greeting and a shorter wait change how satisfied "
    "customers are and how much they tip."
)
#: The hidden SCM the scripted customers follow (what the estimates should recover).
TRUTH = {
    ("satisfaction", "greeting_warm"): 1.2,
    ("satisfaction", "wait_minutes"): -0.25,
    ("tip_percent", "satisfaction"): 1.5,
    ("tip_percent", "greeting_warm"): 1.0,
}
EDGES = [(cause, effect) for (effect, cause) in TRUTH]


class SurveyAnswer(BaseModel):
    """What each customer is asked after the visit."""

    satisfaction: int = Field(ge=1, le=7, description="1 = very unhappy ... 7 = delighted")
    tip_percent: float = Field(ge=0, le=40, description="tip as a percent of the bill")
    explanation: str = Field(description="one sentence on why")


@dataclass(frozen=True)
class Customer:
    """One simulated customer and the treatment they received."""

    id: str
    greeting_warm: int
    wait_minutes: int


def customers(n: int, seed: int) -> list[Customer]:
    """The randomized design: each customer's treatment drawn from their own seed."""
    out = []
    for i in range(n):
        r = rng(seed, "customer", i)
        out.append(Customer(f"customer-{i:04d}", int(r.integers(2)), int(r.integers(2, 13))))
    return out


def interview_prompt(c: Customer) -> list[dict[str, str]]:
    greeting = "warm, smiling" if c.greeting_warm else "neutral"
    return [
        {"role": "system", "content": f"You are {c.id}, a customer at a café. {SCENARIO}"},
        {
            "role": "user",
            "content": (
                f"Customer: {c.id}. Greeting you received: {greeting}. "
                f"Wait: {c.wait_minutes} minutes. How satisfied are you (1-7), what percent "
                "would you tip, and why?"
            ),
        },
    ]


_PROMPT = re.compile(r"Customer: (\S+)\. Greeting you received: (warm|neutral).*Wait: (\d+)")


def scripted_customer(seed: int) -> Callable[[Any], str]:
    """The scripted customers' reply function: answers follow :data:`TRUTH` plus noise
    seeded by the customer's identity (so answers do not depend on call order)."""

    def reply(request: Any) -> str:
        match = _PROMPT.search(request.messages[-1]["content"])
        if match is None:
            return "I'd rather not say."
        cid, greeting, wait = match.group(1), match.group(2), int(match.group(3))
        warm = 1 if greeting == "warm" else 0
        r = rng(seed, "answer", stable_hash(cid))
        latent = 4.0 + TRUTH[("satisfaction", "greeting_warm")] * warm
        latent += TRUTH[("satisfaction", "wait_minutes")] * wait + r.normal(0, 0.4)
        satisfaction = int(min(7, max(1, round(latent))))
        tip = 8.0 + TRUTH[("tip_percent", "satisfaction")] * satisfaction
        tip += TRUTH[("tip_percent", "greeting_warm")] * warm + r.normal(0, 1.5)
        mood = "friendly" if warm else "ordinary"
        why = f"The {mood} welcome and a {wait}-minute wait shaped my visit."
        return json.dumps(
            {
                "satisfaction": satisfaction,
                "tip_percent": round(max(0.0, tip), 1),
                "explanation": why,
            }
        )

    return reply


def run_demo(
    *,
    runs_dir: Path | None,
    subjects: int,
    seed: int,
    jobs: int,
    resume: bool,
    config: Path | None,
    json_out: bool,
) -> dict[str, Any]:
    """Run (or resume) the demo experiment and print its summary."""
    from silicolab.cli.demo_tour import (
        boxinggym_part,
        causalab_part,
        discovery_part,
        print_tour,
        tour_report,
    )
    from silicolab.llm import ScriptedModel, astructured, load_model
    from silicolab.runs import Run
    from silicolab.runtime import AsyncExecutor

    settings = load_settings(config)
    root = runs_dir or Path(settings.runs_dir)
    if resume:
        run = Run.latest(root, kind="demo")
        if run is None:
            raise InputError(f"no demo run under {root} to resume; run 'silicolab demo' first")
        seed, subjects = int(run.seed or 0), int(run.config["subjects"])
    else:
        run = Run.create(
            root,
            kind="demo",
            slug="cafe-survey",
            seed=seed,
            config={
                "subjects": subjects,
                "jobs": jobs,
                "scenario": SCENARIO,
                "model": "scripted:cafe-customers",
            },
        )
    model = load_model(
        ScriptedModel(fn=scripted_customer(seed), name="scripted:cafe-customers"),
        cache_path=settings.resolved_cache_path,
        max_concurrency=jobs,
    )
    design = customers(subjects, seed)

    async def interview(c: Customer) -> dict[str, Any]:
        answer = await astructured(model, interview_prompt(c), SurveyAnswer, tag="subject")
        return {**c.__dict__, **answer.model_dump()}

    with run:
        results = AsyncExecutor(jobs, description="interviewing customers").map(
            interview, design, key=lambda c: c.id, run=run
        )
        rows = [r.value for r in results]
        summary = _analyse(rows)
        discovery = discovery_part()
        causalab = causalab_part(run)
        boxinggym = boxinggym_part()
        record = {
            "kind": "demo",
            "scenario": SCENARIO,
            "design": {"subjects": subjects, "seed": seed},
            "answers": rows,
            "estimates": summary["estimates"],
            "truth": [{"lhs": e, "rhs": c, "value": v} for (e, c), v in TRUTH.items()],
            "ledger": model.ledger.summary(),
            "resumed_units": sum(r.cached for r in results),
            "discovery": discovery,
            "causalab": causalab,
            "boxinggym": boxinggym,
        }
        run.write_record(record)
        run.write_report(
            _report(run.path, record, summary)
            + "\n".join(tour_report(discovery, causalab, boxinggym))
        )
    out = {
        "run_dir": str(run.path),
        "subjects": subjects,
        "resumed_units": record["resumed_units"],
        "estimates": summary["estimates"],
        "ledger": {k: v for k, v in record["ledger"].items() if k != "by_tag"},
        "discovery": discovery,
        "causalab": causalab,
        "boxinggym": boxinggym,
    }
    if json_out:
        typer.echo(json.dumps(out))
    else:
        _print_summary(run.path, record)
        print_tour(discovery, causalab, boxinggym)
        typer.echo(f"run directory: {run.path}  (report: {run.path / 'report.md'})")
    return out


def _analyse(rows: list[dict[str, Any]]) -> dict[str, Any]:
    import pandas as pd

    from silicolab.scm import CausalGraph, estimate_paths

    data = pd.DataFrame(rows)[["greeting_warm", "wait_minutes", "satisfaction", "tip_percent"]]
    fit = estimate_paths(data, CausalGraph.from_edges(EDGES), standardize=True)
    table = fit.table[fit.table["op"] == "~"]
    estimates = []
    for row in table.itertuples():
        estimates.append(
            {
                "lhs": row.lhs,
                "rhs": row.rhs,
                "est": float(row.est),
                "se": float(row.se),
                "ci_low": float(row.ci_low),
                "ci_high": float(row.ci_high),
                "truth": TRUTH.get((row.lhs, row.rhs)),
            }
        )
    return {"estimates": estimates, "r2": dict(fit.r2), "lavaan": fit.lavaan}


def _report(path: Path, record: dict[str, Any], summary: dict[str, Any]) -> str:
    ledger = record["ledger"]
    lines = [
        "# silicolab demo: café survey experiment",
        "",
        f"Run directory: `{path.name}`",
        "",
        f"**Scenario.** {SCENARIO}",
        "",
        f"**Design.** {record['design']['subjects']} simulated customers, greeting (warm or "
        "neutral) and wait (2-12 minutes) randomized per customer; each answers a structured "
        "survey (satisfaction 1-7, tip percent, a one-sentence explanation). The customers "
        "are silicolab's `scripted` test double following a hidden SCM, so the estimates "
        "can be checked against the truth.",
        "",
        "## Fitted path model",
        "",
        "```",
        summary["lavaan"],
        "```",
        "",
        "| effect | estimate | SE | 95% CI | truth |",
        "|---|---:|---:|---|---:|",
    ]
    for e in record["estimates"]:
        truth = "" if e["truth"] is None else f"{e['truth']:.2f}"
        lines.append(
            f"| {e['rhs']} → {e['lhs']} | {e['est']:.3f} | {e['se']:.3f} | "
            f"[{e['ci_low']:.3f}, {e['ci_high']:.3f}] | {truth} |"
        )
    lines += ["", "R²: " + ", ".join(f"{k} {v:.3f}" for k, v in summary["r2"].items()), ""]
    lines += [
        "## Language-model usage",
        "",
        f"- calls: {ledger['calls']} (cache hits: {ledger['cache_hits']}, retries: "
        f"{ledger['retries']})",
        f"- tokens: {ledger['input_tokens']} in, {ledger['output_tokens']} out; cost "
        f"${ledger['cost']:.4f}",
        f"- units restored from a previous attempt (resume): {record['resumed_units']}",
        "",
        "Files: `run.json` (configuration), `events.jsonl` (one line per finished unit: survey "
        "answers and lab episodes), "
        "`record.json` (everything above as data).",
        "",
    ]
    return "\n".join(lines)


def _print_summary(path: Path, record: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title="café survey: estimated effects vs the hidden truth")
    for col in ("effect", "estimate", "95% CI", "truth"):
        table.add_column(col, justify="right" if col != "effect" else "left")
    for e in record["estimates"]:
        table.add_row(
            f"{e['rhs']} → {e['lhs']}",
            f"{e['est']:.3f}",
            f"[{e['ci_low']:.2f}, {e['ci_high']:.2f}]",
            "" if e["truth"] is None else f"{e['truth']:.2f}",
        )
    console.print(table)
    ledger = record["ledger"]
    console.print(
        f"LLM calls {ledger['calls']} (cache hits {ledger['cache_hits']}), tokens "
        f"{ledger['input_tokens']} in / {ledger['output_tokens']} out, resumed units "
        f"{record['resumed_units']}"
    )
