"""A progress bar on stderr for batches of units (rich), or nothing at all.

Why a wrapper: executors call :meth:`ProgressBar.advance` once per unit, so a disabled bar
must cost nothing and an enabled one must not redraw per call — rich redraws from its own
thread at most ``refresh_per_second`` times, and ``advance`` only bumps a counter.
``rich`` is imported only when a bar is actually shown, keeping imports fast.
"""

from __future__ import annotations

import sys
from typing import IO, Any, Self

#: Redraws per second; low enough that a fast batch spends no measurable time drawing.
REFRESH_PER_SECOND = 4


def progress_enabled(progress: bool | None, stream: IO[str] | None = None) -> bool:
    """Resolve the executors' ``progress`` option: ``None`` means "only when stderr (or
    ``stream``) is an interactive terminal", so logs and CI output stay clean."""
    if progress is not None:
        return progress
    stream = stream if stream is not None else sys.stderr
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or replaced stream
        return False


class ProgressBar:
    """``description  ━━━━━━━━  done/total  elapsed  ETA  [n failed]`` on stderr.

    Use as a context manager; units restored from a previous run count as done at the start
    (``completed``), so the ETA reflects only the work that is left.
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
        self._file = file
        self._progress: Any = None
        self._task: Any = None

    @property
    def enabled(self) -> bool:
        return self._enabled

    def __enter__(self) -> Self:
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
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


__all__ = ["REFRESH_PER_SECOND", "ProgressBar", "progress_enabled"]
