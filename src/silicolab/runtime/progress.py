"""A progress bar on stderr for batches of units (rich), plain lines in a pipe, or nothing.

Why a wrapper: executors call :meth:`ProgressBar.advance` once per unit, so a disabled bar
must cost nothing and an enabled one must not redraw per call — rich redraws from its own
thread at most ``refresh_per_second`` times, and ``advance`` only bumps a counter.
``rich`` is imported only when a bar is actually shown, keeping imports fast.

When stderr is not a terminal (a pipe, a log file, CI) a bar would be invisible and a long
command silent for minutes, so :class:`PipeTicker` writes one plain line per interval
instead (``boxinggym: 12/60 done, 1m40s elapsed, ETA 6m``), never on stdout, and nothing
at all for work that ends within the first interval. :func:`heartbeat` does the same for
long work that runs outside an executor (one discovery method, one fit).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, Any, Self

from silicolab.core.errors import ConfigError

#: Redraws per second; low enough that a fast batch spends no measurable time drawing.
REFRESH_PER_SECOND = 4
#: Seconds between two plain progress lines when stderr is not a terminal.
PIPE_INTERVAL = 10.0
#: Environment variable overriding :data:`PIPE_INTERVAL` (seconds; tests use a fraction).
INTERVAL_ENV = "SILICOLAB_PROGRESS_INTERVAL"


def progress_enabled(progress: bool | None, stream: IO[str] | None = None) -> bool:
    """Resolve the executors' ``progress`` option for the bar: ``None`` means "only when
    stderr (or ``stream``) is an interactive terminal" (elsewhere :class:`ProgressBar`
    writes plain lines, see :class:`PipeTicker`); ``False`` shows nothing at all."""
    if progress is not None:
        return progress
    return is_terminal(stream)


def is_terminal(stream: IO[str] | None = None) -> bool:
    """Whether ``stream`` (default: stderr) is an interactive terminal."""
    stream = stream if stream is not None else sys.stderr
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or replaced stream
        return False


def pipe_interval() -> float:
    """Seconds between plain progress lines: ``$SILICOLAB_PROGRESS_INTERVAL`` or 10."""
    raw = os.environ.get(INTERVAL_ENV, "").strip()
    if not raw:
        return PIPE_INTERVAL
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ConfigError(
            f"{INTERVAL_ENV}={raw!r} is not a number of seconds above 0; set it to e.g. 10 "
            "or unset it"
        )
    return value


def format_duration(seconds: float) -> str:
    """``42s``, ``1m40s``, ``2h05m``: short enough for a progress line."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class PipeTicker:
    """A daemon thread that writes ``line(elapsed)`` to ``file`` (default stderr) every
    ``interval`` seconds until stopped; the first line comes after one interval, so fast
    work prints nothing. Safe beside worker processes: they start by forkserver or spawn
    (see :class:`~silicolab.runtime.executor.ProcessExecutor`), never a plain fork."""

    def __init__(
        self,
        line: Callable[[float], str],
        *,
        interval: float | None = None,
        file: IO[str] | None = None,
    ):
        self._line = line
        self._interval = pipe_interval() if interval is None else interval
        self._file = file
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = 0.0
        self.lines = 0

    def start(self) -> None:
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="silicolab-progress", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self._write(self._line(time.monotonic() - self._started))

    def _write(self, text: str) -> None:
        stream = self._file if self._file is not None else sys.stderr
        try:
            stream.write(text + "\n")
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: progress is not worth a crash
            return
        self.lines += 1

    def stop(self, last: str | None = None) -> None:
        """Stop the thread; write ``last`` (the work's end) when the work outlasted one
        interval, so a long run's log always ends with its final count."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if last is not None and (self.lines or self.elapsed >= self._interval):
            self._write(last)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._started


@contextlib.contextmanager
def heartbeat(what: str, *, file: IO[str] | None = None) -> Iterator[None]:
    """While the block runs, a line ``what: still running, 1m10s elapsed`` on stderr per
    interval when stderr is not a terminal: long work outside an executor (one discovery
    method, one fit) is not silent in a pipe. Nothing on a terminal or for fast work."""
    if is_terminal(file):
        yield
        return
    ticker = PipeTicker(
        lambda elapsed: f"{what}: still running, {format_duration(elapsed)} elapsed", file=file
    )
    ticker.start()
    try:
        yield
    finally:
        ticker.stop(f"{what}: done in {format_duration(ticker.elapsed)}")


class ProgressBar:
    """``description  ━━━━━━━━  done/total  elapsed  ETA  [n failed]`` on stderr.

    Use as a context manager; units restored from a previous run count as done at the start
    (``completed``), so the ETA reflects only the work that is left. With ``enabled=None``
    and stderr not a terminal it writes a plain line per interval instead (:class:`PipeTicker`).
    """

    def __init__(
        self,
        total: int,
        *,
        completed: int = 0,
        description: str = "",
        enabled: bool | None = None,
        file: IO[str] | None = None,
    ):
        self.total = total
        self.completed = completed
        self.failed = 0
        self._description = description or "units"
        self._enabled = progress_enabled(enabled, file)
        self._piped = enabled is None and not self._enabled
        self._file = file
        self._ticker: PipeTicker | None = None
        self._restored = completed
        self._progress: Any = None
        self._task: Any = None

    @property
    def enabled(self) -> bool:
        return self._enabled

    def pipe_line(self, elapsed: float) -> str:
        """``description: done/total done, elapsed, ETA[, n failed]`` for a pipe."""
        done, fresh = self.completed, self.completed - self._restored
        left = self.total - done
        eta = format_duration(elapsed / fresh * left) if fresh > 0 and left > 0 else "?"
        eta = "0s" if left <= 0 else eta
        failures = f", {self.failed} failed" if self.failed else ""
        return (
            f"{self._description}: {done}/{self.total} done, "
            f"{format_duration(elapsed)} elapsed, ETA {eta}{failures}"
        )

    def __enter__(self) -> Self:
        if self._piped and self.completed < self.total:
            self._ticker = PipeTicker(self.pipe_line, file=self._file)
            self._ticker.start()
        if self._enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            console = Console(file=self._file) if self._file else Console(stderr=True)
            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                TextColumn("{task.fields[failures]}", style="red"),
                console=console,
                refresh_per_second=REFRESH_PER_SECOND,
            )
            self._progress.start()
            self._task = self._progress.add_task(
                self._description, total=self.total, completed=self.completed, failures=""
            )
        return self

    def advance(self, *, failed: bool = False) -> None:
        """Count one more unit as done (``failed=True`` also counts it as a failure)."""
        self.completed += 1
        if failed:
            self.failed += 1
        if self._progress is not None:
            if failed:
                self._progress.update(self._task, failures=f"{self.failed} failed")
            self._progress.advance(self._task)

    def __exit__(self, *exc_info: object) -> None:
        """Stop the bar however the block ended (the exception, if any, propagates)."""
        if self._ticker is not None:
            ticker, self._ticker = self._ticker, None
            ticker.stop(self.pipe_line(ticker.elapsed))
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


__all__ = [
    "INTERVAL_ENV",
    "PIPE_INTERVAL",
    "REFRESH_PER_SECOND",
    "PipeTicker",
    "ProgressBar",
    "format_duration",
    "heartbeat",
    "is_terminal",
    "pipe_interval",
    "progress_enabled",
]
