"""Which units of a run failed, so ``--retry-failed`` reruns those and keeps the others.

A unit failed when its newest event is an ``error`` (it raised: a model error that
outlived the retries, a parse failure), or when it finished (``ok``) with a
:class:`~silicolab.runs.UnitHealth` that says every model step failed (an unusable
condition, an episode whose every reply was garbage). That health is stored in the event's
data: under ``"health"`` (a study condition, the predictions stage) or ``"episode"`` →
``"health"`` (a bench or tour episode). A command whose events keep their health
elsewhere (``sim run``, ``discover``) passes its own rule.

The units found are reopened with :meth:`Run.retry` (a ``retry`` event each, appended
when the work starts); the executor then reruns them with fresh model calls (the cache
holds their failed replies) and restores every other unit from ``events.jsonl``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from silicolab.runs.health import UnitHealth
from silicolab.runs.run_dir import RETRY, Run

#: Decides from a unit's newest event whether the unit failed.
FailedRule = Callable[[Mapping[str, Any]], bool]


def stored_health(data: Any) -> UnitHealth | None:
    """The :class:`UnitHealth` an event's ``data`` carries, or ``None``."""
    if not isinstance(data, Mapping):
        return None
    for holder in (data, data.get("episode")):
        health = holder.get("health") if isinstance(holder, Mapping) else None
        if isinstance(health, Mapping) and "steps" in health:
            try:
                return UnitHealth.from_dict({"unit": "", **health})
            except TypeError:  # not a health record after all
                return None
    return None


def unit_failed(event: Mapping[str, Any]) -> bool:
    """The default rule: an ``error`` event, or an ``ok`` one whose stored health says
    every model step failed."""
    if event.get("status") == "error":
        return True
    health = stored_health(event.get("data"))
    return health is not None and health.all_failed


def failed_units(run: Run, failed: FailedRule = unit_failed) -> list[str]:
    """The units whose newest ``ok``/``error`` event ``failed`` says failed, in the order
    of their first event. A unit already reopened (newest event ``retry``: a retry that
    was interrupted) is left out: it reruns, with fresh calls, anyway."""
    newest: dict[str, Mapping[str, Any]] = {}
    for event in run.events():
        if event.get("status") in ("ok", "error", RETRY):
            newest[event["unit"]] = event
    return [
        unit for unit, event in newest.items() if event.get("status") != RETRY and failed(event)
    ]


__all__ = ["FailedRule", "failed_units", "stored_health", "unit_failed"]
