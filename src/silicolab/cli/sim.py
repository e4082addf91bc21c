"""``silicolab sim run NAME``: run one worked simulation and keep it in a run directory.

The run directory holds ``record.json`` (the example's summary, including the episode log),
``report.md`` (a readable summary) and ``transcript.html`` (the episode log as a
self-contained, HTML-escaped page). Without ``--model`` the examples run offline: the
language-model agents use the ``scripted`` test double and the rule-based ones need no model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from silicolab.cli.flow import (
    emit,
    open_checked_run,
    runs_root,
    shown_run_dir,
    write_html_report,
)
from silicolab.core.config import load_settings
from silicolab.core.errors import InputError

TRANSCRIPT_HTML = "transcript.html"
CHECKPOINT = "checkpoint.json"
#: The unit key of the episode in the run's events.jsonl.
EPISODE = "episode"
_SKIP = (
    "log",
    "transcript",
    "events",
    "survey",
    "final_state",
    "trades",
    "rejected",
    "grounded_history",
)
#: Left out of --json (kept in record.json): the full log, large and for reading, not parsing.
_NOT_IN_JSON = ("log", "grounded_history")


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


def _report(name: str, run_dir: Path, model_spec: str, summary: dict[str, Any], health: Any) -> str:
    lines = [f"# silicolab sim: {name}", "", f"Run directory: `{run_dir.name}`", ""]
    lines += [f"Model: `{model_spec}`", "", f"Model health: {health.summary_line()}", ""]
    lines += ["| field | value |", "|---|---|"]
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
    resume: bool = False,
    explicit: set[str] | frozenset[str] = frozenset(),
    runs_dir: Path | None,
    config: Path | None,
    json_out: bool,
    retry_failed: bool = False,
) -> dict[str, Any]:
    """Run the example ``name``, write its run directory and print a summary.

    ``model``, ``base_url`` and ``api_key_env`` override the model of the role the
    example's language-model agents play (the simulated people: ``subject``). ``resume``
    continues the latest unfinished sim run with its stored settings: a finished episode
    is not run again, the checkpointed examples continue from their last completed step,
    the others start their episode again (a real model's answers already received come
    from the cache). Options in ``explicit`` that contradict the stored settings are
    refused. ``retry_failed`` resumes too, and runs a degraded or failed episode again
    from its start with fresh model calls.
    """
    settings: dict[str, Any] = {
        "name": name,
        "model": model,
        "base_url": base_url,
        "api_key_env": api_key_env,
    }
    opened = open_checked_run(
        runs_root(runs_dir, config),
        "sim",
        settings,
        seed=seed,
        resume=resume,
        explicit=explicit,
        prepare=lambda s, seed: _prepare(s, int(seed), config),
        slug=lambda job: job.name,
        retry_failed=retry_failed,
        failed=_episode_failed,
    )
    job, run = opened.job, opened.run
    name, seed = job.name, job.seed
    with run:
        summary, health = _episode(run, name, job.llm, seed)
        record = {
            "kind": "sim",
            "example": name,
            "model": job.model_spec,
            "seed": seed,
            "health": health.to_dict(),
            **summary,
        }
        run.write_record(record)
        run.write_report(_report(name, run.path, job.model_spec, summary, health))
        _write_transcript(run.path, name, summary["log"])
        status = run.finish(health)
        write_html_report(run)
    out = {
        "run_dir": str(shown_run_dir(run.path)),
        "status": status,
        "example": name,
        "model": job.model_spec,
        "seed": seed,
        "health": health.to_dict(),
        **{k: v for k, v in summary.items() if k not in _NOT_IN_JSON},
    }
    emit(
        out,
        json_out=json_out,
        show=lambda: _print_summary(name, summary, shown_run_dir(run.path), health),
        status=status,
        health=health,
    )
    return out


@dataclass(frozen=True)
class _Job:
    """A sim run's checked inputs: the example, its seed and its agents' model."""

    name: str
    seed: int
    llm: Any
    model_spec: str


def _prepare(settings: dict[str, Any], seed: int, config: Path | None) -> _Job:
    """Check the example and seed and load its agents' model (no run directory yet)."""
    from silicolab.sim.examples.registry import EXAMPLES, MODEL_ROLES

    name = settings["name"]
    if seed < 0:
        raise InputError(f"--seed {seed} must be 0 or more")
    if name not in EXAMPLES:
        raise InputError(f"unknown simulation {name!r}; examples: {', '.join(sorted(EXAMPLES))}")
    role = MODEL_ROLES.get(name)
    if role is None and settings["model"] is not None:
        raise InputError(f"--model applies to {', '.join(sorted(MODEL_ROLES))}; {name} needs none")
    llm = None if role is None else _role_model(role, settings, config)
    model_spec = getattr(llm, "spec", None) or (
        "none (rule-based agents)" if role is None else "scripted (offline)"
    )
    return _Job(name, seed, llm, model_spec)


def _role_model(role: str, settings: dict[str, Any], config: Path | None) -> Any:
    """The model of ``role`` with the command-line overrides, or ``None`` (the example's
    own offline agents) when no ``--model`` was given and the role is not configured."""
    from silicolab.llm.roles import role_model

    configured = load_settings(config)
    if settings["model"] is None and configured.role_source(role) == "built-in":
        return None
    return role_model(
        role,
        configured,
        spec=settings["model"],
        base_url=settings["base_url"],
        api_key_env=settings["api_key_env"],
    )


def _episode(run: Any, name: str, llm: Any, seed: int) -> tuple[dict[str, Any], Any]:
    """The example's summary and health: from the run's events when the episode finished
    before (a resume), else by running it; a failed episode keeps its transcript so far."""
    from silicolab.core.errors import SilicolabError
    from silicolab.core.fresh import fresh_calls
    from silicolab.runtime.progress import heartbeat
    from silicolab.sim.examples.registry import CHECKPOINTED, EXAMPLES
    from silicolab.sim.health import episode_health

    done = run.finished_events().get(EPISODE)
    retried = EPISODE in run.retried_units()  # --retry-failed: from the start, uncached
    if done is not None:
        summary = done["data"]["summary"]
    else:
        options: dict[str, Any] = {}
        if name in CHECKPOINTED:
            if retried:
                (run.path / CHECKPOINT).unlink(missing_ok=True)
            options = {"checkpoint": run.path / CHECKPOINT, "resume": True}
        try:
            with fresh_calls(retried), heartbeat(f"sim run {name}"):
                summary = EXAMPLES[name](llm, seed, **options)
        except SilicolabError as err:
            log = getattr(err, "episode_log", None)
            if log is not None:
                steps = log.to_list()
                _write_transcript(run.path, name, steps)
                run.append_event(EPISODE, {"error": str(err), "log": steps}, status="error")
                err.args = (
                    f"{err} (the transcript so far: {shown_run_dir(run.path) / TRANSCRIPT_HTML})",
                )
            raise
        run.append_event(EPISODE, {"summary": summary})
    return summary, episode_health(summary.get("log") or (), summary.get("survey") or ())


def _episode_failed(event: Mapping[str, Any]) -> bool:
    """``--retry-failed``'s rule for the episode unit: it raised (a model error), or its
    agents' health, computed from the stored log and survey, says the run is degraded."""
    from silicolab.sim.health import episode_health

    if event.get("status") == "error":
        return True
    summary = (event.get("data") or {}).get("summary") or {}
    return episode_health(summary.get("log") or (), summary.get("survey") or ()).degraded


def _write_transcript(path: Path, name: str, steps: list[dict[str, Any]]) -> None:
    from silicolab.core.files import atomic_write_text
    from silicolab.core.secrets import scrub_text
    from silicolab.sim.log import EpisodeLog

    page = EpisodeLog.from_list(steps).to_html(f"silicolab sim: {name}")
    atomic_write_text(path / TRANSCRIPT_HTML, scrub_text(page))


def _print_summary(name: str, summary: dict[str, Any], run_dir: Path, health: Any) -> None:
    from silicolab.report import print_lines, print_table

    rows = [{"field": key, "value": value} for key, value in _headline(summary)]
    print_table(rows, [("field", "field"), ("value", "value")], title=f"simulation: {name}")
    lines = [f"{s['speaker']}: {s['text']}" for s in (summary.get("transcript") or [])[:12]]
    lines += [
        f"{t['buyer']} buys a {t['item']} from {t['seller']} for {t['price']:.2f}"
        for t in summary.get("trades") or []
    ]
    lines += [
        f"model health: {health.summary_line()}",
        f"run directory: {run_dir}  (transcript: {run_dir / TRANSCRIPT_HTML})",
    ]
    print_lines(lines)
