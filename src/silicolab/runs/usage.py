"""Process accounting of a run: wall-clock time and language-model calls, kept in
``run.json`` and summed over every process that worked on the run.

A run's ``record.json`` holds its science only, so a resumed run writes the same record,
byte for byte, as an uninterrupted one. What differs between the two is how the work was
done: how long each process took and which calls it made (a resume takes finished units
from ``events.jsonl`` without a call). That lives in ``run.json``:

- ``runtime_s``: seconds of work, the earlier processes' total plus this one's;
- ``llm_ledger``: ``{role: ledger summary}`` (:meth:`silicolab.llm.ledger.Ledger.summary`),
  the earlier processes' summaries plus this one's, added with
  :meth:`~silicolab.llm.ledger.Ledger.absorb`;
- ``timings``: seconds of named steps (``"discovery/pc"``), as the process that last ran
  each step measured them.

Each process adds its share whenever ``run.json`` is written (a status change, the final
write), so a process stopped by Ctrl-C or SIGTERM is counted; a ``kill -9`` loses the
share of the process it killed since its last write.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: What a ledger source returns: each role's ledger summary.
Ledgers = Mapping[str, Mapping[str, Any]]


@dataclass
class Usage:
    """This process's work on a run, on top of what ``run.json`` said when it started."""

    prior_runtime_s: float
    prior_ledgers: dict[str, Any]
    started: float = field(default_factory=time.monotonic)
    ledgers: Callable[[], Ledgers] | None = None
    timings: dict[str, float] = field(default_factory=dict)

    @classmethod
    def since(cls, info: Mapping[str, Any]) -> Usage:
        """Start counting now, on top of the totals in ``info`` (a run's ``run.json``)."""
        runtime = info.get("runtime_s")
        ledgers = info.get("llm_ledger")
        timings = info.get("timings")
        return cls(
            prior_runtime_s=float(runtime) if isinstance(runtime, int | float) else 0.0,
            prior_ledgers=dict(ledgers) if isinstance(ledgers, Mapping) else {},
            timings=dict(timings) if isinstance(timings, Mapping) else {},
        )

    def fields(self) -> dict[str, Any]:
        """The ``run.json`` fields as of now: ``runtime_s``, and ``llm_ledger`` and
        ``timings`` when there is something to say."""
        out: dict[str, Any] = {
            "runtime_s": round(self.prior_runtime_s + time.monotonic() - self.started, 3)
        }
        current = dict(self.ledgers()) if self.ledgers is not None else {}
        if current or self.prior_ledgers:
            out["llm_ledger"] = add_ledgers(self.prior_ledgers, current)
        if self.timings:
            out["timings"] = dict(sorted(self.timings.items()))
        return out


def add_ledgers(*parts: Ledgers) -> dict[str, Any]:
    """The role-by-role sum of ledger summaries (a role in any part is in the sum): every
    count added, overall and per tag, cost and latency rounded as a ledger rounds them.
    Plain dict arithmetic, so ``runs`` needs nothing from ``llm``."""
    sums: dict[str, dict[str, Any]] = {}
    for part in parts:
        for role, summary in part.items():
            if isinstance(summary, Mapping):
                _add(sums.setdefault(role, {"by_tag": {}}), summary)
    return {role: _rounded(total, top=True) for role, total in sums.items()}


def _add(into: dict[str, Any], summary: Mapping[str, Any]) -> None:
    for key, value in summary.items():
        if key == "by_tag" and isinstance(value, Mapping):
            for tag, numbers in value.items():
                _add(into["by_tag"].setdefault(tag, {"by_tag": {}}), numbers)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            into[key] = into.get(key, 0) + value


def _rounded(total: dict[str, Any], *, top: bool = False) -> dict[str, Any]:
    """``total`` as a ledger summary: cost and latency rounded; ``by_tag`` (sorted) only
    at the top, as :meth:`silicolab.llm.ledger.Ledger.summary` has it."""
    out = {k: v for k, v in total.items() if k != "by_tag"}
    for key, digits in (("cost", 8), ("latency_s", 6)):
        if key in out:
            out[key] = round(out[key], digits)
    if top:
        tags = total["by_tag"]
        out["by_tag"] = {tag: _rounded(n) for tag, n in sorted(tags.items())}
    return out


__all__ = ["Usage", "add_ledgers"]
