"""Reading a run's ``events.jsonl``: the units it finished, the units reopened for a retry,
and what to do with a line that a kill or a damaged disk left behind.

Kept apart from :mod:`silicolab.runs.run_dir` (which owns writing and the lock) because
these are pure reads of one file: every rule about which event of a unit counts lives
here once. Events are append-only; the newest ``ok``/``retry`` event of a unit decides.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from silicolab.core import notices
from silicolab.core.files import read_jsonl

#: The status of the event that reopens a unit for ``--retry-failed``: a unit whose
#: newest ``ok``/``retry`` event is a retry is unfinished again, and its calls skip the
#: LLM cache when it reruns (events stay append-only: nothing is rewritten).
RETRY = "retry"
#: The unit key at the start of an event line, readable even when the rest is damaged.
_UNIT_KEY = re.compile(rb'^\s*\{\s*"unit"\s*:\s*"((?:[^"\\]|\\.){1,300})"')


def read_events(path: Path) -> list[dict[str, Any]]:
    """Every event of ``path`` in order. A last line torn by a hard kill is skipped; so is
    a damaged line before it (not UTF-8, not JSON), with one warning line naming it,
    unless its unit was done again later: a unit whose line is lost counts as not done,
    so ``--resume`` runs it again and every reader still works."""
    damaged: list[tuple[int, bytes, str]] = []
    rows = read_jsonl(path, on_damaged=lambda *line: damaged.append(line))
    events = [e for e in rows if isinstance(e, dict) and "unit" in e]
    if damaged:
        done = {e["unit"] for e in events if e.get("status") == "ok"}
        for number, raw, problem in damaged:
            _warn_damaged_line(path, number, raw, problem, done)
    return events


def _warn_damaged_line(path: Path, number: int, raw: bytes, problem: str, done: set[str]) -> None:
    """One warning (per process) for a damaged line, naming the unit when its key can
    still be read, and nothing when that unit was redone."""
    found = _UNIT_KEY.search(raw)
    unit = found.group(1).decode("utf-8", errors="replace") if found else None
    if unit in done:
        return
    which = f"unit {unit!r}" if unit else "the unit it recorded"
    notices.warn(
        f"{path} line {number} is damaged ({problem}) and was skipped: "
        f"{which} counts as not done (that unit will be run again by --resume)",
        key=("events line", str(path.resolve()), number),
    )


def finished_events(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The latest ``"ok"`` event of each finished unit, by unit key (a unit whose newest
    ``ok``/``retry`` event is a :data:`RETRY` is unfinished again)."""
    out: dict[str, dict[str, Any]] = {}
    for event in events:
        if event.get("status") == "ok":
            out[event["unit"]] = event
        elif event.get("status") == RETRY:
            out.pop(event["unit"], None)
    return out


def retried_units(events: list[dict[str, Any]]) -> set[str]:
    """Keys of the units reopened by a :data:`RETRY` event and not finished since."""
    retried: set[str] = set()
    for event in events:
        if event.get("status") == RETRY:
            retried.add(event["unit"])
        elif event.get("status") == "ok":
            retried.discard(event["unit"])
    return retried


def repair_tail(path: Path) -> None:
    """End a torn last line (left by a kill mid-write) with a newline, so the next event
    starts on a line of its own instead of being glued to the fragment and lost."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb") as handle:
        handle.seek(-1, 2)
        if handle.read(1) == b"\n":
            return
    with open(path, "ab") as handle:
        handle.write(b"\n")


__all__ = ["RETRY", "finished_events", "read_events", "repair_tail", "retried_units"]
