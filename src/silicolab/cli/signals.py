"""SIGTERM ends a command the way Ctrl-C does: the run is marked ``interrupted``.

Python turns SIGINT into :class:`KeyboardInterrupt`, which a :class:`silicolab.runs.Run`
used as a context manager records as ``interrupted`` with a resume hint. SIGTERM (``kill``,
a CI timeout, a container stop) would otherwise end the process at once and leave the run
marked ``running``; :func:`install` makes it raise :class:`Terminated`, a
``KeyboardInterrupt``, so both signals take the same path. Exit codes follow the shell
convention: 128 + the signal number.
"""

from __future__ import annotations

import signal
from types import FrameType

RESUME_HINT = "interrupted: finished units are saved; rerun the same command with --resume"


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when the process receives SIGTERM."""

    signum = signal.SIGTERM


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    del frame
    # Once is enough: the cleanup that follows (marking the run, stopping workers) must
    # not be cut short by a second SIGTERM.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated(f"received signal {signum}")


def install() -> None:
    """Route SIGTERM through :class:`Terminated` (call once, from the main thread)."""
    signal.signal(signal.SIGTERM, _on_sigterm)


def exit_code(exc: KeyboardInterrupt) -> int:
    """130 for Ctrl-C (SIGINT), 143 for SIGTERM."""
    return 128 + int(getattr(exc, "signum", signal.SIGINT))


__all__ = ["RESUME_HINT", "Terminated", "exit_code", "install"]
