"""SIGTERM ends a command the way Ctrl-C does: the run is marked ``interrupted``.

Python turns SIGINT into :class:`KeyboardInterrupt`, which a :class:`silicolab.runs.Run`
used as a context manager records as ``interrupted`` with a resume hint. SIGTERM (``kill``,
a CI timeout, a container stop) would otherwise end the process at once and leave the run
marked ``running``; :func:`install` makes it raise :class:`Terminated`, a
``KeyboardInterrupt``, so both signals take the same path. Exit codes follow the shell
convention: 128 + the signal number.

SIGINT gets a handler of ours too, one that raises :class:`KeyboardInterrupt` at once, as
Python's default does. Without it, :func:`asyncio.run` (Python 3.11+) replaces the default
handler while its loop runs with one that only *requests* the cancellation of the main
task; the request can be lost (a cancellation that meets a finishing timeout or a
synchronous wait on a worker thread), and the command then ran to its end after Ctrl-C
and reported the run ``finished`` (seen on a loaded machine). An exception in the main
thread cannot be lost that way: every ``with run:`` block sees it and marks the run
``interrupted``. The task that was running when the exception struck keeps it as its
result, which asyncio would log at exit as "Task exception was never retrieved" with a
traceback: :func:`install` drops those log records (an interruption is not an error),
so the resume hint stays the command's last line.
"""

from __future__ import annotations

import logging
import signal
from types import FrameType

#: The exit code typer returns for a KeyboardInterrupt (128 + SIGINT).
INTERRUPTED = 130
RESUME_HINT = "interrupted: finished units are saved; rerun the same command with --resume"


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when the process receives SIGTERM."""

    signum = signal.SIGTERM


_received: list[int] = []


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    del frame
    _received.append(signum)
    # Once is enough: the cleanup that follows (marking the run, stopping workers) must
    # not be cut short by a second SIGTERM.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated(f"received signal {signum}")


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    del signum, frame
    raise KeyboardInterrupt


class _DropInterrupts(logging.Filter):
    """Drop asyncio's log records of a task that ended with the interruption."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, KeyboardInterrupt)


_DROP_INTERRUPTS = _DropInterrupts()


def install() -> None:
    """Route SIGTERM through :class:`Terminated` and SIGINT straight to
    :class:`KeyboardInterrupt` (module docstring; call once, from the main thread)."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)
    logging.getLogger("asyncio").addFilter(_DROP_INTERRUPTS)


def received() -> bool:
    """Whether SIGTERM arrived (the exception it raised may have been replaced on its way
    out: typer turns every KeyboardInterrupt into exit code 130)."""
    return bool(_received)


def exit_code(exc: BaseException | None = None) -> int:
    """143 after SIGTERM, else 130 (Ctrl-C)."""
    if _received:
        return 128 + _received[0]
    return 128 + int(getattr(exc, "signum", signal.SIGINT))


__all__ = ["INTERRUPTED", "RESUME_HINT", "Terminated", "exit_code", "install", "received"]
