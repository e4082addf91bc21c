"""The stages of a study run, how each ended, and why a run is degraded.

A study has up to three stages: ``main`` (the conditions, the data, the fit),
``predictions`` (``--predict``) and ``follow_on`` (``--follow-on``). The main study's
``data.csv``, ``columns.json`` and ``record.json`` are written as soon as ``main`` is done,
so a later stage can never take them down with it. Each stage's outcome is one entry of
``record["stages"]``::

    {"main": {"status": "done"},
     "predictions": {"status": "done", "note": "..."},
     "follow_on": {"status": "failed", "reason": "ParseFailure: scientist step ..."}}

``status`` is ``pending`` (not reached yet, or the run was interrupted there), ``done``,
``failed`` (with the ``reason``: the error, naming the step and a sample reply where it
has them) or ``skipped`` (with the ``reason``, e.g. the main model is not estimable). A
finished stage result is kept as an event of its own in ``events.jsonl`` (unit
``stage:predictions``, ``stage:follow_on_plan``), so ``study run --resume`` redoes only the
stages that failed or never ran: the conditions come back from their events, the kept
results from theirs. ``--retry-failed`` also reopens kept predictions whose every reply
was unusable, and redoes them with fresh model calls (:meth:`StageBook.fresh`).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from silicolab.core.fresh import fresh_calls
from silicolab.runs import Run, RunHealth
from silicolab.runs.health import cut

#: Prefix of the ``events.jsonl`` units that keep a finished stage's result.
STAGE_UNIT = "stage:"
#: How much of an error a stage's reason keeps.
REASON_CHARS = 400
RESUME_COMMAND = "silicolab study run --resume"


@dataclass
class StageBook:
    """How each stage of one study run ended, and the stage results kept in its events."""

    run: Run
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def start(cls, run: Run, *, predict: bool, follow_on: bool) -> StageBook:
        """Every requested stage, ``pending``."""
        names = ["main", *(["predictions"] if predict else []), *(["follow_on"] * follow_on)]
        return cls(run, {name: {"status": "pending"} for name in names})

    def stored(self, key: str) -> dict[str, Any] | None:
        """The result kept under ``key`` by an earlier (interrupted or failed) attempt."""
        event = self.run.finished_events().get(STAGE_UNIT + key)
        return event["data"] if event is not None else None

    def fresh(self, key: str) -> AbstractContextManager[None]:
        """Where the stage ``key`` runs: with fresh model calls (not the cached, failed
        replies) when ``--retry-failed`` reopened its kept result."""
        return fresh_calls(STAGE_UNIT + key in self.run.retried_units())

    def keep(self, key: str, data: dict[str, Any]) -> None:
        """Keep a finished result in ``events.jsonl``, so a resume does not redo it."""
        self.run.append_event(STAGE_UNIT + key, data)

    def done(self, name: str, note: str | None = None) -> None:
        self.entries[name] = {"status": "done", **({"note": note} if note else {})}

    def skipped(self, name: str, reason: str) -> None:
        self.entries[name] = {"status": "skipped", "reason": reason}

    def failed(self, name: str, exc: BaseException) -> str:
        """Mark ``name`` failed with ``exc`` as the reason (returned)."""
        reason = f"{type(exc).__name__}: {cut(str(exc), REASON_CHARS)}"
        self.entries[name] = {"status": "failed", "reason": reason}
        return reason

    def problems(self) -> list[str]:
        """One line per failed stage, with how to redo it."""
        return [
            f"the {name.replace('_', '-')} stage failed ({entry['reason']}); the main "
            f"study is kept: '{RESUME_COMMAND}' redoes only this stage (add --model SPEC "
            "to try another scientist)"
            for name, entry in self.entries.items()
            if entry["status"] == "failed"
        ]

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {name: dict(entry) for name, entry in self.entries.items()}


def condition_problem(stage: Any, label: str = "conditions") -> str | None:
    """Why ``stage``'s (a :class:`~silicolab.studies.pipeline.StageResult`) conditions make
    the run degraded: how many were unusable, the first one, where it failed (the
    conversation's error, which names the agent and act, or the survey) and a sample reply;
    ``None`` when its health is fine."""
    if not stage.health().degraded:
        return None
    failed = [r for r in stage.runs if r.health.all_failed]
    first = failed[0]
    if first.error:
        where = f"the conversation failed: {first.error}"
    elif first.survey and all(a.get("value") is None for a in first.survey):
        asked = ", ".join(f"{a['variable']} (asked {a['addressee']})" for a in first.survey)
        where = f"no survey answer could be read: {asked}"
    else:
        where = f"{first.health.failed_steps} of {first.health.steps} model steps failed"
    unit = getattr(first.condition, "unit_id", first.condition.id)
    answers = (a.get("raw") for a in first.survey if a.get("raw"))
    sample = first.health.sample_reply or cut(next(answers, ""))
    return (
        f"{len(failed)} of {len(stage.runs)} {label} unusable; first {unit}: {where}; "
        f"sample reply {sample!r}"
    )


def fit_problem(stage: Any, label: str = "the main model") -> str | None:
    """Why ``stage``'s model could not be fitted, or ``None`` when it was."""
    if stage.fit is not None or not stage.fit_error:
        return None
    return f"{label} could not be fitted: {stage.fit_error}"


def health_line(health: RunHealth, problems: list[str]) -> str:
    """The run's one-line health: ``DEGRADED:`` and every reason when there is one, else
    the model-step counts."""
    if not problems:
        return health.summary_line()
    return "DEGRADED: " + "; ".join(problems)


__all__ = [
    "RESUME_COMMAND",
    "STAGE_UNIT",
    "StageBook",
    "condition_problem",
    "fit_problem",
    "health_line",
]
