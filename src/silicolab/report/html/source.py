"""What a page builder reads: one run directory, loaded once (``run.json``, ``record.json``,
and ``events.jsonl`` when a page asks for it), and the small helpers every builder shares."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from silicolab.core.files import dumps
from silicolab.report.html.blocks import Facts, Fold, Table
from silicolab.report.html.figures import FIGURES_DIR, FigureSet


@dataclass
class RunSource:
    """A run directory as data: its ``info`` (``run.json``), ``record`` (``{}`` before the
    run wrote one), the page's :class:`FigureSet` and its ``events``, read on first use
    (a page drawn from the record alone, a replication's, skips decoding thousands of
    lines)."""

    path: Path
    info: dict[str, Any]
    record: dict[str, Any]
    figures: FigureSet

    @cached_property
    def events(self) -> list[dict[str, Any]]:
        """The run's events, in order (``events.jsonl``)."""
        from silicolab.runs import Run

        return Run.open(self.path).events()

    @classmethod
    def load(
        cls,
        path: Path,
        *,
        save_figures: bool = True,
        info: dict[str, Any] | None = None,
        write_figures: bool = True,
    ) -> RunSource:
        """Read ``path`` (a run directory: :meth:`silicolab.runs.Run.open` checks it);
        ``info`` replaces its ``run.json`` (the writer's status, not yet on disk). With
        ``save_figures`` the page links its figure files under ``figures/``, written there
        unless ``write_figures`` is false (then only the files already there are linked)."""
        from silicolab.runs import Run

        run = Run.open(path)
        record = run.read_record() or {}
        folder = run.path / FIGURES_DIR if save_figures else None
        figures = FigureSet(folder, write=write_figures)
        return cls(run.path, info or run.info, record, figures)

    @property
    def kind(self) -> str:
        return str(self.info.get("kind", ""))

    def ok_events(self) -> list[dict[str, Any]]:
        """The data of each finished unit, in order (latest event of a unit wins)."""
        latest: dict[str, dict[str, Any]] = {}
        for event in self.events:
            if event.get("status") == "ok":
                latest[str(event.get("unit"))] = event.get("data") or {}
        return list(latest.values())

    def run_facts(self) -> list[tuple[str, Any]]:
        """Status, creation time, seconds of work (every process's) and seed of the run."""
        info = self.info
        facts = [("status", info.get("status")), ("created", str(info.get("created", ""))[:19])]
        if isinstance(info.get("runtime_s"), int | float):
            facts.append(("runtime s", round(info["runtime_s"], 1)))
        if info.get("seed") is not None:
            facts.append(("seed", info.get("seed")))
        if info.get("health_summary"):
            facts.append(("model health", info["health_summary"]))
        return facts


def rows_table(rows: list[dict[str, Any]], columns: Any, **options: Any) -> Table:
    """A :class:`Table` of ``rows`` over the ``(key, heading)`` columns some row has."""
    present = [(k, h) for k, h in columns if any(k in r for r in rows)]
    return Table(columns=present or list(columns), rows=rows, **options)


def dict_table(mapping: dict[str, Any], key: str = "name", value: str = "value") -> Table:
    """A two-column table of a mapping."""
    rows = [{key: k, value: v} for k, v in mapping.items()]
    return Table(columns=[(key, key), (value, value)], rows=rows)


def health_fold(health: dict[str, Any] | None) -> list[Any]:
    """The model-health totals and units of a record, folded (empty when absent)."""
    if not health:
        return []
    totals = health.get("totals") or {}
    units = health.get("units") or []
    blocks: list[Any] = [Facts(list(totals.items()))]
    if units:
        columns = [(k, k) for k in units[0] if k not in ("sample_reply",)]
        blocks.append(Table(columns=columns, rows=units))
    status = "degraded" if health.get("degraded") else "ok"
    return [Fold(summary=f"Model health ({status})", blocks=blocks)]


def pretty(value: Any) -> str:
    """A JSON value as indented text (for ``<pre>``)."""
    return dumps(value, indent=2, ensure_ascii=False)


__all__ = ["RunSource", "dict_table", "health_fold", "pretty", "rows_table"]
