"""A run directory: the durable home of one batch of work.

Layout (``<root>/<YYYYmmdd-HHMMSS>-<kind>-<slug>/``)::

    run.json       kind, slug, created, updated, status, seed, config (secrets redacted),
                   versions; rewritten atomically on every status change
    events.jsonl   one line per finished unit of work, appended and fsynced as it happens
    record.json    the full export with ``schema_version``, written atomically
    report.md      (and report.html) the human-readable summary

One process writes a run at a time: the first write takes an exclusive OS file lock
(:mod:`silicolab.runs.lock`) that the process holds until it exits, so a second writer
(a ``--resume`` of a run that is still alive) is refused with one line.

Why this shape: a kill at any moment loses at most the units in flight (every finished unit
is already on disk), a resume only needs ``events.jsonl``, and nothing a user shares from
the folder can carry an API key — configs are redacted by key name and every file written
here is scrubbed of known secret values: credential-like environment variables, and the
credential values found in configs of runs created in this process. (A key written
literally in a config is therefore unknown to a later process that only reopens the run;
keep keys in environment variables, as ``silicolab.llm`` expects.)
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import shutil
import threading
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from silicolab.core import notices
from silicolab.core.errors import BudgetReached, InputError, SilicolabError
from silicolab.core.files import (
    append_lines,
    atomic_write_text,
    dumps,
    read_json_file,
)
from silicolab.core.secrets import redact, scrub_text
from silicolab.runs import lock, meta
from silicolab.runs.event_lines import event_line
from silicolab.runs.event_log import (
    RETRY,
    finished_events,
    read_events,
    repair_tail,
    retried_units,
)
from silicolab.runs.health import RunHealth
from silicolab.runs.usage import Ledgers, Usage

RUN_FILE = "run.json"
EVENTS_FILE = "events.jsonl"
RECORD_FILE = "record.json"
REPORT_MD = "report.md"
REPORT_HTML = "report.html"
#: The values ``run.json``'s ``status`` may take.
STATUSES = ("running", "finished", "degraded", "failed", "interrupted")
#: The statuses that say the work is done; inside ``with run:`` they wait for its end.
FINAL_STATUSES = ("finished", "degraded")
#: The fixes named when ``run.json`` or ``record.json`` is damaged.
RUN_FILE_FIX = "restore it from a backup, or delete the folder and start a new run"
RECORD_FIX = "restore it from a backup, or rerun the command that made the run"


class Run:
    """One run directory. Create with :meth:`create`, reopen with :meth:`open` or
    :meth:`latest`; the constructor is internal.

    Used as a context manager it records how the work ended: ``finished`` on a normal exit
    (unless the block set another status), ``interrupted`` on Ctrl-C or cancellation (and,
    with the ``reason``, at a spending limit: :class:`BudgetReached`),
    ``failed`` with the error message on any other exception (which still propagates).
    Input checked late never leaves a run behind: a block ended by bad input or
    configuration (an exit-2 error) before any unit finished removes the run directory;
    after units finished the run stays ``failed`` with ``input_error`` set in ``run.json``.
    Completion is the last write: a ``finished`` or ``degraded`` status set inside the
    block (:meth:`finish`, :meth:`set_status`) is held in memory and written to
    ``run.json`` only when the block ends normally, so every output the block writes
    (record, reports, figures) exists before the run says it is done; a kill before that
    leaves the run ``running`` (or ``interrupted``) for ``--resume`` to complete.
    """

    def __init__(self, path: Path, info: dict[str, Any]):
        self._path = path
        self._info = info
        self._tail_checked = False
        self._inside = False  # within ``with run:``: a final status waits for __exit__
        self._usage: Usage | None = None  # this process's accounting, once tracked
        self._retry_on_enter: list[str] = []  # units :meth:`retry_when_started` reopens
        #: one writer or reader of events.jsonl at a time within this process: a runner
        #: appends from a worker thread (its fsync never stalls the event loop) while
        #: another stage may read the events
        self._events_io = threading.RLock()

    # -- creating and finding runs -------------------------------------------------------

    @classmethod
    def create(
        cls,
        root: str | Path = "runs",
        *,
        kind: str,
        slug: str = "",
        config: dict[str, Any] | None = None,
        seed: int | None = None,
    ) -> Run:
        """Make a new, uniquely named run directory under ``root`` with status ``running``.

        ``kind`` (``"bench"``, ``"study"``…) and ``slug`` are reduced to ``[a-z0-9-]``; when
        the name is taken (two runs in the same second) ``-2``, ``-3``… is appended.
        """
        kind_name = meta.slugify(kind)
        if not kind_name:
            raise InputError(
                f"run kind {kind!r} has no letters or digits; pass a short name such as "
                "kind='bench' or kind='study'"
            )
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise InputError(f"seed must be an integer or None, got {seed!r}")
        config = dict(config or {})
        root = Path(root)
        if root.exists() and not root.is_dir():
            raise InputError(f"run root {root} is a file; pass a folder such as 'runs'")
        root.mkdir(parents=True, exist_ok=True)
        moment = meta.now()
        base = meta.dir_name(moment, kind_name, meta.slugify(slug))
        for n in itertools.count(1):
            path = root / (base if n == 1 else f"{base}-{n}")
            try:
                path.mkdir()
                break
            except FileExistsError:
                continue
        lock.acquire(path)
        info = {
            "kind": kind_name,
            "slug": meta.slugify(slug),
            "created": meta.timestamp(moment),
            "updated": meta.timestamp(moment),
            "status": "running",
            "seed": seed,
            "config": redact(config),
            "versions": meta.versions(),
        }
        meta.remember_secrets(meta.config_secrets(config))
        run = cls(path, info)
        run._write_info()
        return run

    @classmethod
    def open(cls, path: str | Path) -> Run:
        """Reopen an existing run directory (to resume it, add a report, or read it)."""
        path = Path(path)
        hint = "pass a folder created by silicolab, such as runs/20250101-120000-bench-demo"
        if not path.is_dir():
            raise InputError(f"run directory {path} does not exist; {hint}")
        info_path = path / RUN_FILE
        if not info_path.is_file():
            raise InputError(f"{path} is not a run directory (it has no {RUN_FILE}); {hint}")
        info = read_json_file(info_path, fix=RUN_FILE_FIX)
        if not isinstance(info, dict) or not isinstance(info.get("kind"), str):
            raise InputError(f"{info_path} has no 'kind'; it was not written by silicolab")
        return cls(path, info)

    @classmethod
    def latest(
        cls, root: str | Path = "runs", kind: str | None = None, *, unfinished: bool = False
    ) -> Run | None:
        """The most recently created run under ``root`` (of ``kind`` if given; with
        ``unfinished``, the newest whose status is not ``finished``), or ``None``.

        ``--resume`` without a path resumes the newest unfinished run, so a study finished
        after an interrupted one does not hide it. Folders without a ``run.json`` are
        ignored; one whose ``run.json`` is damaged is skipped with one warning line.
        """
        runs = cls.newest_first(root, kind)
        return next((r for r in runs if not (unfinished and r.status == "finished")), None)

    @classmethod
    def newest_first(cls, root: str | Path = "runs", kind: str | None = None) -> list[Run]:
        """Every run under ``root`` (of ``kind`` if given), the most recently created
        first; folders without a readable ``run.json`` are left out."""
        root = Path(root)
        if not root.is_dir():
            return []
        wanted = meta.slugify(kind) if kind is not None else None
        found: list[tuple[datetime, str, Run]] = []
        for child in root.iterdir():
            if not (child / RUN_FILE).is_file():
                continue
            try:
                run = cls.open(child)
                created = datetime.fromisoformat(run._info["created"])
                if created.tzinfo is None:  # hand-edited: read it as local time
                    created = created.astimezone()
            except (InputError, KeyError, TypeError, ValueError) as exc:
                problem = exc if isinstance(exc, InputError) else "it has no valid 'created'"
                notices.warn(
                    f"skipped {child} while looking for the latest run: {problem}",
                    key=("skipped run", str(child.resolve())),
                )
                continue
            if wanted is None or run.kind == wanted:
                found.append((created, child.name, run))
        found.sort(key=lambda entry: entry[:2], reverse=True)
        return [run for _, _, run in found]

    # -- what the run is ------------------------------------------------------------------

    @property
    def path(self) -> Path:
        """The run directory."""
        return self._path

    @property
    def kind(self) -> str:
        return self._info["kind"]

    @property
    def slug(self) -> str:
        return self._info.get("slug", "")

    @property
    def seed(self) -> int | None:
        return self._info.get("seed")

    @property
    def status(self) -> str:
        return self._info.get("status", "running")

    @property
    def config(self) -> dict[str, Any]:
        """The configuration as stored: credential-named values replaced by ``"***"``."""
        return copy.deepcopy(self._info.get("config", {}))

    @property
    def info(self) -> dict[str, Any]:
        """A copy of the content of ``run.json`` (with this process's accounting so far,
        see :meth:`track_usage`)."""
        self._count_usage()
        return copy.deepcopy(self._info)

    @property
    def failed_on_input(self) -> bool:
        """Whether the run is ``failed`` by bad input or configuration (an error the
        user fixes, exit 2) found after it began: ``--resume`` without a path skips it."""
        return self.status == "failed" and bool(self._info.get("input_error"))

    @property
    def events_path(self) -> Path:
        return self._path / EVENTS_FILE

    @property
    def record_path(self) -> Path:
        return self._path / RECORD_FILE

    def __repr__(self) -> str:
        return f"Run({str(self._path)!r}, kind={self.kind!r}, status={self.status!r})"

    # -- status ---------------------------------------------------------------------------

    def set_status(self, status: str, **extra: Any) -> None:
        """Set ``status`` (one of :data:`STATUSES`) and merge ``extra`` fields into
        ``run.json``, rewriting it atomically with a fresh ``updated`` time; inside
        ``with run:`` a status in :data:`FINAL_STATUSES` is written when the block ends."""
        if status not in STATUSES:
            raise InputError(f"unknown run status {status!r}; use one of {', '.join(STATUSES)}")
        self._info.update(extra)
        self._info["status"] = status
        self._info["updated"] = meta.timestamp(meta.now())
        if not (self._inside and status in FINAL_STATUSES):
            self._write_info()

    def finish(self, health: RunHealth | None = None) -> str:
        """End the run ``finished``, or ``degraded`` when ``health`` says the model kept
        failing; the health summary is stored in ``run.json``. Returns the status. Inside
        ``with run:`` the status reaches ``run.json`` only when the block ends normally."""
        if health is None:
            self.set_status("finished")
        else:
            status = "degraded" if health.degraded else "finished"
            self.set_status(status, health=health.totals(), health_summary=health.summary_line())
        return self.status

    def __enter__(self) -> Self:
        lock.acquire(self._path)  # held until the block ends: one writer per run
        if self.status != "running":  # resuming a run that ended before
            self._info.pop("error", None)
            self._info.pop("reason", None)
            self._info.pop("input_error", None)
            self.set_status("running", resumed=meta.timestamp(meta.now()))
        if self._retry_on_enter:
            self.retry(self._retry_on_enter)
            self._retry_on_enter = []
        self._inside = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._inside = False
        if exc_type is None:
            if self.status == "running":
                self._info["status"] = "finished"
            self._info["updated"] = meta.timestamp(meta.now())
            self._write_info()  # the last write: every output of the block exists
        elif issubclass(exc_type, KeyboardInterrupt | asyncio.CancelledError):
            self.set_status("interrupted", resume_hint="rerun the same command with --resume")
        elif issubclass(exc_type, BudgetReached):  # stopped on purpose, not failed
            self.set_status(
                "interrupted",
                reason=getattr(exc, "reason", str(exc)),
                resume_hint="rerun the same command with --resume and a higher --max-cost",
            )
        elif _bad_input(exc) and not self.finished_units():
            self._remove()  # input checked late: nothing finished, so nothing is left behind
        else:
            bad_input = {"input_error": True} if _bad_input(exc) else {}
            self.set_status("failed", error=f"{exc_type.__name__}: {exc}", **bad_input)
        lock.release(self._path)  # the run is left as it ended; another process may resume

    # -- process accounting (silicolab.runs.usage) ----------------------------------------

    def track_usage(self, ledgers: Callable[[], Ledgers] | None = None) -> None:
        """Count this process's work into ``run.json`` from now on: ``runtime_s`` and, with
        ``ledgers`` (a function returning each role's ledger summary, read at every
        write), ``llm_ledger``, each added to what earlier processes stored. Called again,
        it keeps the clock and takes the new ``ledgers``. The record stays free of both,
        so a resumed run's record equals an uninterrupted run's."""
        usage = self._tracked()
        if ledgers is not None:
            usage.ledgers = ledgers

    def note_timing(self, name: str, seconds: float) -> None:
        """Keep the wall-clock ``seconds`` of the step ``name`` under ``timings`` in
        ``run.json`` (written with the next status change or the final write)."""
        self._tracked().timings[name] = round(float(seconds), 3)

    def _tracked(self) -> Usage:
        if self._usage is None:
            self._usage = Usage.since(self._info)
        return self._usage

    def _count_usage(self) -> None:
        if self._usage is not None:
            self._info.update(self._usage.fields())

    def _remove(self) -> None:
        """Delete the run directory (its lock still held, so no other process can take it
        up half-deleted); only for a run that ended on bad input before any unit finished."""
        shutil.rmtree(self._path, ignore_errors=True)

    # -- events ---------------------------------------------------------------------------

    def append_event(
        self, unit: str, data: dict[str, Any] | None = None, *, status: str = "ok"
    ) -> None:
        """Append ``{"unit", "status", "time", "data"}`` to ``events.jsonl``, fsynced
        before returning, with known secret values scrubbed.

        ``data`` is stored as JSON (non-JSON values become strings), so what a resume reads
        back is the JSON form of what was written.
        """
        self.append_events([(unit, data, status)])

    def append_events(self, events: Iterable[tuple[str, dict[str, Any] | None, str]]) -> None:
        """Append several ``(unit, data, status)`` events as :meth:`append_event` does one,
        with one write and one fsync for all."""
        self.append_encoded(self.encode_events(events))

    def encode_events(self, events: Iterable[tuple[str, dict[str, Any] | None, str]]) -> str:
        """The ``events.jsonl`` lines of ``events``, secrets scrubbed, for
        :meth:`append_encoded`. Separate so that an executor's group commit
        (:class:`~silicolab.runtime.group_commit.GroupCommit`) encodes on its event loop
        and leaves only the write and the fsync, which release the GIL, to a thread."""
        stamp, secrets = meta.timestamp(meta.now()), self._secret_patterns()
        return "".join(event_line(*event, stamp, secrets) for event in events)

    def append_encoded(self, text: str) -> None:
        """Append lines made by :meth:`encode_events`, with one write and one fsync."""
        with self._events_io, lock.writing(self._path):
            self._repair_tail()
            append_lines(self.events_path, text)

    def events(self) -> list[dict[str, Any]]:
        """Every event in order; a torn or damaged line is skipped (a damaged one with a
        warning), its unit counting as not done (:func:`~silicolab.runs.event_log.read_events`)."""
        with self._events_io:
            return read_events(self.events_path)

    def finished_events(self) -> dict[str, dict[str, Any]]:
        """The latest ``"ok"`` event of each finished unit, by unit key (a unit whose
        newest ``ok``/``retry`` event is a :data:`RETRY` is unfinished again)."""
        return finished_events(self.events())

    def finished_units(self) -> set[str]:
        """Keys of the units with an ``"ok"`` event: what a resume skips."""
        return set(self.finished_events())

    def retried_units(self) -> set[str]:
        """Keys of the units reopened by :meth:`retry` and not finished since: when they
        run, their model calls skip the LLM cache (see :mod:`silicolab.core.fresh`)."""
        return retried_units(self.events())

    def retry_when_started(self, units: Iterable[str]) -> None:
        """Reopen ``units`` (:meth:`retry`) when the ``with run:`` block starts: a command
        that refuses to run after choosing them (a check that fails, a cost declined)
        leaves the run as it was."""
        self._retry_on_enter = list(units)

    def retry(self, units: Iterable[str], reason: str = "--retry-failed") -> list[str]:
        """Reopen ``units`` (finished or not) to be run again with fresh model calls: one
        :data:`RETRY` event each, appended (and fsynced) before anything reruns, so a kill
        during the retry leaves them unfinished and still to be retried. Returns them."""
        reopened = list(dict.fromkeys(units))
        self.append_events([(unit, {"reason": reason}, RETRY) for unit in reopened])
        return reopened

    def _repair_tail(self) -> None:
        """End a torn last line (left by a kill mid-write) with a newline, once per
        instance, so the next event starts on a line of its own instead of being glued
        to the fragment and lost."""
        if not self._tail_checked:
            self._tail_checked = True
            repair_tail(self.events_path)

    # -- record and report ----------------------------------------------------------------

    def write_record(self, record: dict[str, Any], *, schema_version: str = "1") -> Path:
        """Write ``record.json`` atomically with ``schema_version`` first; a
        ``schema_version`` already in ``record`` (e.g. from a model dump) is kept."""
        full = {"schema_version": schema_version, **record}
        return self._write_json(self.record_path, full)

    def read_record(self) -> dict[str, Any] | None:
        """The content of ``record.json``, or ``None`` before :meth:`write_record`; a
        damaged one (cut short, not JSON) is an :class:`InputError` naming it."""
        if not self.record_path.exists():
            return None
        record = read_json_file(self.record_path, fix=RECORD_FIX)
        if not isinstance(record, dict):
            raise InputError(f"{self.record_path} is damaged (not a JSON object): {RECORD_FIX}")
        return record

    def write_report(self, markdown: str, *, html: str | None = None) -> Path:
        """Write ``report.md`` (and ``report.html`` when given) atomically; returns the
        markdown path."""
        secrets = self._secret_patterns()
        with lock.writing(self._path):
            if html is not None:
                atomic_write_text(self._path / REPORT_HTML, scrub_text(html, secrets))
            return atomic_write_text(self._path / REPORT_MD, scrub_text(markdown, secrets))

    # -- secret-safe writing --------------------------------------------------------------

    def _write_info(self) -> None:
        self._count_usage()
        self._write_json(self._path / RUN_FILE, self._info)

    def _write_json(self, path: Path, obj: Any) -> Path:
        text = dumps(obj, indent=2, ensure_ascii=False)
        with lock.writing(self._path):
            return atomic_write_text(path, scrub_text(text, self._secret_patterns()) + "\n")

    def _secret_patterns(self) -> list[str]:
        """Secret values as they appear raw and inside JSON strings (quotes, backslashes
        and non-printing characters are escaped there), longest first."""
        raw = meta.known_secrets()
        escaped = [json.dumps(s, ensure_ascii=False)[1:-1] for s in raw]
        return sorted({s for s in raw + escaped if s}, key=len, reverse=True)


def _bad_input(exc: BaseException | None) -> bool:
    """Whether ``exc`` is an error the user fixes in the input or configuration (exit 2:
    :class:`InputError`, :class:`ConfigError`), not a crash or a failing model."""
    return isinstance(exc, SilicolabError) and exc.exit_code == 2


__all__ = ["FINAL_STATUSES", "RETRY", "STATUSES", "Run"]
