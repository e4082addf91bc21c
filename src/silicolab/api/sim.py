"""``sl.run_sim``: run one worked simulation and keep it in a run directory.

The run directory is the one ``silicolab sim run NAME`` writes: ``run.json``,
``events.jsonl`` (the episode), ``record.json`` (the example's summary, including the
episode log), ``report.md``, ``transcript.html`` (the episode log as a self-contained,
HTML-escaped page) and ``report.html``. Without ``model`` the examples run offline: the
language-model agents use the ``scripted`` test double and the rule-based ones need no
model. The command line is a thin layer over :func:`run_sim`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from silicolab.api._display import Shown, html_table, inline_image
from silicolab.api.run_flow import (
    Resume,
    explicit_of,
    finish_run,
    first_figure,
    health_of,
    open_checked_run,
    open_finished,
    runs_root,
    shown_run_dir,
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
#: Left out of ``to_dict()`` and ``--json`` (kept in record.json): the full log, large
#: and for reading, not parsing.
_NOT_IN_JSON = ("log", "grounded_history")
_DEFAULTS: dict[str, Any] = {"model": None, "base_url": None, "api_key_env": None, "seed": 0}


def headline(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The few scalar facts of an example's summary worth showing: ``(label, value)``."""
    rows = []
    for key, value in summary.items():
        if key in _SKIP or isinstance(value, dict | list):
            continue
        rows.append((key, "-" if value is None else str(value)))
    for key in ("trades", "rejected", "transcript", "log"):
        if isinstance(summary.get(key), list):
            rows.append((f"{key} (count)", str(len(summary[key]))))
    return rows


@dataclass(frozen=True, repr=False)
class SimResult(Shown):
    """A finished simulation run: the example's ``summary`` (its log as ``.steps``, its
    conversation as ``.transcript``), the agents' model ``health``, the run's ``status``
    (``"finished"`` or ``"degraded"``), its ``run_dir`` and ``record`` (record.json)."""

    name: str
    summary: dict[str, Any]
    status: str
    run_dir: Path
    model: str
    seed: int
    health: Any = None
    record: dict[str, Any] = field(default_factory=dict)

    @property
    def steps(self) -> list[dict[str, Any]]:
        """The episode log: one dict per step (actor, action, event, ...)."""
        return list(self.summary.get("log") or [])

    @property
    def transcript(self) -> list[dict[str, Any]]:
        """The conversation's statements (``speaker``, ``text``); ``[]`` for examples
        without a conversation (see :attr:`steps`)."""
        return list(self.summary.get("transcript") or [])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: exactly what ``silicolab sim run NAME --json`` prints."""
        return {
            "run_dir": str(self.run_dir),
            "status": self.status,
            "example": self.name,
            "model": self.model,
            "seed": self.seed,
            "health": None if self.health is None else self.health.to_dict(),
            **{k: v for k, v in self.summary.items() if k not in _NOT_IN_JSON},
        }

    @classmethod
    def from_run(cls, path: str | Path) -> SimResult:
        """Read a finished ``sim`` run directory back (made by the command or Python)."""
        run, record = open_finished(path, "sim")
        done = run.finished_events().get(EPISODE)
        if done is not None:
            summary = done["data"]["summary"]
        else:  # a record without its events: the summary is the record's remainder
            summary = {k: v for k, v in record.items() if k not in ("schema_version", "kind")}
        return cls(
            name=record["example"],
            summary=summary,
            status=run.status,
            run_dir=shown_run_dir(run.path),
            model=record.get("model", ""),
            seed=record.get("seed", run.seed),
            health=health_of(record.get("health")),
            record=record,
        )

    def _headline(self) -> list[tuple[str, Any]]:
        facts = [
            (k, v)
            for k, v in self.summary.items()
            if k not in (*_SKIP, "example", "seed") and not isinstance(v, dict | list)
        ]
        return [("name", self.name), ("status", self.status), *facts[:3], ("run_dir", self.run_dir)]

    def _figure(self) -> Path | None:
        return first_figure(self.run_dir)

    def _repr_html_(self) -> str:
        rows = [("name", self.name), ("status", self.status), *headline(self.summary)]
        if self.health is not None:
            rows.append(("model health", self.health.summary_line()))
        rows.append(("run_dir", str(self.run_dir)))
        return (
            f"<div><strong>SimResult</strong>{html_table(rows)}{inline_image(self._figure())}</div>"
        )


def run_sim(
    simulation: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    seed: int = 0,
    runs_dir: str | Path | None = None,
    config: str | Path | None = None,
    resume: Resume = None,
    retry_failed: bool = False,
    explicit: Iterable[str] | None = None,
) -> SimResult:
    """Run the built-in example simulation ``simulation`` (``"auction"``, ``"bargaining"``
    or ``"market"``) and write its run directory under ``runs_dir``.

    ``model``, ``base_url`` and ``api_key_env`` set the model of the role the example's
    language-model agents play (the simulated people: ``subject``); without them the
    configured subject model is used, else the offline agents. ``resume`` (``True``: the
    newest unfinished sim run; or a run directory) continues a run with its stored
    settings: a finished episode is not run again, the checkpointed examples continue
    from their last completed step, the others start again (a real model's answers come
    from the cache). ``retry_failed`` resumes too and runs a degraded or failed episode
    again from its start with fresh model calls. ``explicit`` names the options the
    caller chose (default: those not at their defaults); on a resume they must agree with
    the stored settings. A degraded run is returned (``status == "degraded"``).
    """
    settings: dict[str, Any] = {
        "name": simulation,
        "model": model,
        "base_url": base_url,
        "api_key_env": api_key_env,
    }
    if explicit is None:
        explicit = explicit_of({**settings, "seed": seed}, _DEFAULTS)
    cfg = None if config is None else Path(config)
    opened = open_checked_run(
        runs_root(runs_dir, config), "sim", settings, seed=seed, resume=resume,
        explicit=explicit, prepare=lambda s, seed: _prepare(s, seed, cfg),
        slug=lambda job: job.name, retry_failed=retry_failed, failed=_episode_failed,
    )  # fmt: skip
    job, run = opened.job, opened.run
    with run:
        summary, health = _episode(run, job.name, job.llm, job.seed)
        record = {
            "kind": "sim",
            "example": job.name,
            "model": job.model_spec,
            "seed": job.seed,
            "health": health.to_dict(),
            **summary,
        }
        _write_transcript(run.path, job.name, summary["log"])
        markdown = _report(job.name, run.path, job.model_spec, summary, health)
        status = finish_run(run, record, markdown, health)
    return SimResult(
        name=job.name,
        summary=summary,
        status=status,
        run_dir=shown_run_dir(run.path),
        model=job.model_spec,
        seed=job.seed,
        health=health,
        record=run.read_record() or {},
    )


@dataclass(frozen=True)
class _Job:
    """A sim run's checked inputs: the example, its seed and its agents' model."""

    name: str
    seed: int
    llm: Any
    model_spec: str


def _prepare(settings: dict[str, Any], seed: Any, config: Path | None) -> _Job:
    """Check the example and seed and load its agents' model (no run directory yet)."""
    from silicolab.sim.examples.registry import EXAMPLES, MODEL_ROLES

    name = settings["name"]
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise InputError(f"seed={seed!r} must be an integer, 0 or more", params=("seed",))
    if name not in EXAMPLES:
        raise InputError(
            f"unknown simulation {name!r} (simulation=); examples: {', '.join(sorted(EXAMPLES))}",
            params=("simulation",),
        )
    role = MODEL_ROLES.get(name)
    if role is None and settings["model"] is not None:
        raise InputError(
            f"model= applies to {', '.join(sorted(MODEL_ROLES))}; {name} needs none",
            params=("model",),
        )
    llm = None if role is None else _role_model(role, settings, config)
    model_spec = getattr(llm, "spec", None) or (
        "none (rule-based agents)" if role is None else "scripted (offline)"
    )
    return _Job(name, seed, llm, model_spec)


def _role_model(role: str, settings: dict[str, Any], config: Path | None) -> Any:
    """The model of ``role`` with the caller's overrides, or ``None`` (the example's own
    offline agents) when no ``model`` was given and the role is not configured."""
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
    retried = EPISODE in run.retried_units()  # retry_failed: from the start, uncached
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
    """``retry_failed``'s rule for the episode unit: it raised (a model error), or its
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


def _report(name: str, run_dir: Path, model_spec: str, summary: dict[str, Any], health: Any) -> str:
    lines = [f"# silicolab sim: {name}", "", f"Run directory: `{run_dir.name}`", ""]
    lines += [f"Model: `{model_spec}`", "", f"Model health: {health.summary_line()}", ""]
    lines += ["| field | value |", "|---|---|"]
    lines += [f"| {k} | {v.replace('|', '/')} |" for k, v in headline(summary)]
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
    events = _event_lines(summary)
    lines += ["", *events] if events else []
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


def _event_lines(summary: Mapping[str, Any]) -> list[str]:
    """The report's "Events" section (the example's events, else its trades), or none."""
    events = summary.get("events") or trade_lines(summary)
    return ["## Events", "", *[f"- {e}" for e in events]] if events else []


def trade_lines(summary: Mapping[str, Any]) -> list[str]:
    """One line per trade of a market summary: ``B1 buys a mug from S1 for 4.50``."""
    return [
        f"{t['buyer']} buys a {t['item']} from {t['seller']} for {t['price']:.2f}"
        for t in summary.get("trades") or []
    ]


__all__ = ["SimResult", "headline", "run_sim", "trade_lines"]
