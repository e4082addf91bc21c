"""``sl.run_sim``: run one simulation (a built-in world, a simulation file or a
:class:`~silicolab.sim.simulation.Simulation` value) and keep it in a run directory.

The run directory is the one ``silicolab sim run NAME|FILE.yaml`` writes: ``run.json``
(its settings, the whole simulation as data included), ``events.jsonl`` (the episode),
``checkpoint.json`` (the episode after its last completed step, so a killed run
continues), ``record.json`` (the summary, including the episode log and the outcome
tables), ``outcome.csv`` and ``timeline.csv`` (the tables, to plot), ``report.md``,
``transcript.html`` (the episode log as a self-contained, HTML-escaped page) and
``report.html``. Without ``model`` every world runs offline: its language-model people
and game master answer from the file's offline script, rule-based ones need no model.
The command line is a thin layer over :func:`run_sim`.
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
from silicolab.sim.simulation import Simulation

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
    "timeline",
    "per_entity",
    "final_state",
)
#: Left out of ``to_dict()`` and ``--json`` (kept in record.json): the full log, large
#: and for reading, not parsing.
_NOT_IN_JSON = ("log", "grounded_history", "timeline")
_DEFAULTS: dict[str, Any] = {
    "model": None,
    "gm_model": None,
    "base_url": None,
    "api_key_env": None,
    "seed": 0,
}
OUTCOME_CSV = "outcome.csv"
TIMELINE_CSV = "timeline.csv"


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

    @property
    def outcome(self) -> list[dict[str, Any]]:
        """One row per entity with its grounded outcomes (money, votes, answers); ``[]``
        for the worked examples that keep their own summary."""
        return list(self.summary.get("per_entity") or [])

    @property
    def timeline(self) -> list[dict[str, Any]]:
        """The grounded variables over time: ``after_step``, ``variable``, ``key``,
        ``value``, ``cause`` (one row per value; ready for a plot)."""
        return list(self.summary.get("timeline") or [])

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
    simulation: str | Path | Simulation,
    *,
    model: str | None = None,
    gm_model: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    seed: int = 0,
    runs_dir: str | Path | None = None,
    config: str | Path | None = None,
    resume: Resume = None,
    retry_failed: bool = False,
    explicit: Iterable[str] | None = None,
) -> SimResult:
    """Run ``simulation`` and write its run directory under ``runs_dir``: a built-in
    world's name (``silicolab sim list``), a simulation file (``.yaml``) or a
    :class:`~silicolab.sim.simulation.Simulation`.

    ``model``, ``base_url`` and ``api_key_env`` set the model of the simulated people
    (the ``subject`` role) and, unless ``gm_model`` names another, of the game master;
    without them the configured subject model is used, else the world's offline script.
    ``resume`` (``True``: the newest unfinished sim run; or a run directory) continues a
    run with its stored settings (the simulation as it was when the run began): a
    finished episode is not run again, a world continues from its last completed step
    (a real model's answers come from the cache). ``retry_failed`` resumes too and runs
    a degraded or failed episode again from its start with fresh model calls.
    ``explicit`` names the options the caller chose (default: those not at their
    defaults); on a resume they must agree with the stored settings. A degraded run is
    returned (``status == "degraded"``).
    """
    name, data = _simulation_setting(simulation)
    settings: dict[str, Any] = {
        "name": name,
        "model": model,
        "gm_model": gm_model,
        "base_url": base_url,
        "api_key_env": api_key_env,
        "simulation": data,
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
        summary, health = _episode(run, job)
        record = {
            "kind": "sim",
            "example": job.name,
            "model": job.model_spec,
            "seed": job.seed,
            "health": health.to_dict(),
            **summary,
        }
        _write_transcript(run.path, job.name, summary["log"])
        _write_tables(run.path, summary)
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
    """A sim run's checked inputs: the example or world, its seed and its models."""

    name: str
    seed: int
    llm: Any
    model_spec: str
    world: Simulation | None = None
    gm_llm: Any = None


def _simulation_setting(simulation: str | Path | Simulation) -> tuple[str, str | None]:
    """(name, the simulation as YAML text): ``None`` for a worked example kept by its own
    code (``silicolab.sim.examples.registry``); a world is stored whole in run.json so a
    resume plays exactly the simulation the run began with (as one string, which the
    record's credential filter never mistakes for a key such as a scene's ``secret``)."""
    from silicolab.sim.examples.registry import EXAMPLES
    from silicolab.sim.worlds import load_world

    if isinstance(simulation, str) and simulation in EXAMPLES:
        return simulation, None
    if not isinstance(simulation, str | Path | Simulation):
        raise InputError(
            f"simulation= takes a world's name, a .yaml file or a Simulation, not "
            f"{type(simulation).__name__}",
            params=("simulation",),
        )
    world = load_world(simulation)
    return world.name, world.to_yaml()


def _prepare(settings: dict[str, Any], seed: Any, config: Path | None) -> _Job:
    """Check the example and seed and load its agents' model (no run directory yet)."""
    from silicolab.sim.examples.registry import EXAMPLES, MODEL_ROLES

    name = settings["name"]
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise InputError(f"seed={seed!r} must be an integer, 0 or more", params=("seed",))
    if settings.get("simulation") is not None:
        return _world_job(settings, seed, config)
    if settings.get("gm_model") is not None:
        raise InputError(f"gm_model= applies to worlds; {name} has no such game master",
                         params=("gm_model",))  # fmt: skip
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


def _world_job(settings: dict[str, Any], seed: int, config: Path | None) -> _Job:
    """A world's job: the stored simulation, the people's model and the game master's."""
    world = Simulation.from_yaml(settings["simulation"], "run.json (simulation)")
    llm = _role_model("subject", settings, config)
    gm_llm = llm
    if settings.get("gm_model") is not None:
        gm_llm = _role_model("subject", {**settings, "model": settings["gm_model"]}, config)
    spec = getattr(llm, "spec", None) or "scripted (the world's offline script)"
    if gm_llm is not llm:
        spec = f"{spec}; game master: {getattr(gm_llm, 'spec', gm_llm)}"
    return _Job(world.name, seed, llm, spec, world=world, gm_llm=gm_llm)


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


def _episode(run: Any, job: _Job) -> tuple[dict[str, Any], Any]:
    """The example's summary and health: from the run's events when the episode finished
    before (a resume), else by running it; a failed episode keeps its transcript so far."""
    from silicolab.core.errors import SilicolabError
    from silicolab.core.fresh import fresh_calls
    from silicolab.runtime.progress import heartbeat
    from silicolab.sim.examples.registry import CHECKPOINTED, EXAMPLES
    from silicolab.sim.health import episode_health

    name, llm, seed = job.name, job.llm, job.seed
    done = run.finished_events().get(EPISODE)
    retried = EPISODE in run.retried_units()  # retry_failed: from the start, uncached
    if done is not None:
        summary = done["data"]["summary"]
    else:
        options: dict[str, Any] = {}
        if job.world is not None or name in CHECKPOINTED:
            if retried:
                (run.path / CHECKPOINT).unlink(missing_ok=True)
            options = {"checkpoint": run.path / CHECKPOINT, "resume": True}
        try:
            with fresh_calls(retried), heartbeat(f"sim run {name}"):
                if job.world is not None:
                    outcome = job.world.run(model=llm, gm_model=job.gm_llm, seed=seed, **options)
                    summary = {"example": name, **outcome.to_dict()}
                else:
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


def _write_tables(path: Path, summary: Mapping[str, Any]) -> None:
    """A world's outcome tables as CSV files beside the record (to plot or cite)."""
    import csv
    import io

    from silicolab.core.files import atomic_write_text

    for name, rows in (
        (OUTCOME_CSV, summary.get("per_entity")),
        (TIMELINE_CSV, summary.get("timeline")),
    ):
        if not rows:
            continue
        columns = list(dict.fromkeys(k for row in rows for k in row))
        out = io.StringIO()
        writer = csv.DictWriter(out, columns, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _cell(v) for k, v in row.items()})
        atomic_write_text(path / name, out.getvalue())


def _cell(value: Any) -> Any:
    import json

    return json.dumps(value) if isinstance(value, dict | list) else value


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
    lines += _outcome_lines(summary)
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


def outcome_columns(rows: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The columns of a world's per-entity outcome table, in first-seen order."""
    return [(c, c) for c in dict.fromkeys(k for row in rows for k in row)]


def _outcome_lines(summary: Mapping[str, Any]) -> list[str]:
    """A world's outcome per entity and final grounded state (none for the examples)."""
    from silicolab.report.tables import markdown_table

    lines: list[str] = []
    rows = summary.get("per_entity") or []
    if rows:
        lines += ["", "## Outcome per entity", "", markdown_table(rows, outcome_columns(rows))]
    final = summary.get("final_state") or {}
    if final and summary.get("timeline") is not None:
        table = [{"variable": k, "value": v} for k, v in final.items()]
        lines += ["", "## Final state", ""]
        lines += [markdown_table(table, [("variable", "variable"), ("value", "value")])]
        lines += ["", f"Tables to plot: `{OUTCOME_CSV}`, `{TIMELINE_CSV}`."]
    return lines


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


__all__ = ["SimResult", "Simulation", "headline", "outcome_columns", "run_sim", "trade_lines"]
