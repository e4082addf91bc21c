"""One writer per run directory: an exclusive OS file lock, released by the kernel on kill -9.

Two processes writing one run (a ``--resume`` started while the run is still alive, or two
``--resume`` at once) would both run every remaining unit: ``events.jsonl`` fills with
duplicate lines and every paid call is made twice. So writing a run takes an exclusive
``flock`` on ``<run>/.writer.lock``. The kernel releases it when the process dies, however
it dies (``kill -9`` included), so a lock left by a dead process is recovered without a
question: the file may remain, but nothing holds it.

Who holds it: a process that creates a run, resumes it (:func:`silicolab.runs.open_run`) or
works in it (``with run:``) holds the lock until the block ends (or the process exits); a
write outside such a block (rebuilding a finished run's report) holds it only for that
write (:func:`writing`). A second writer is refused with :class:`RunLocked` (an
:class:`InputError`: one line, exit 2) naming the live process (pid and command line, which
the holder writes into the lock file). Within one process the lock is re-entrant: every
:class:`~silicolab.runs.Run` object for the same directory shares the one held
descriptor (``flock`` locks belong to an open file description, so a second ``open`` in the
same process would otherwise block itself).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from silicolab.core.errors import InputError

LOCK_FILE = ".writer.lock"

_held: dict[Path, int] = {}
_guard = threading.Lock()


class RunLocked(InputError):
    """Another live process is writing this run."""


def _key(run_dir: Path) -> Path:
    return Path(os.path.realpath(run_dir))


def holder(run_dir: str | Path) -> str:
    """What the lock file says about its holder (``pid N: command``), or ``""``."""
    try:
        return (Path(run_dir) / LOCK_FILE).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def acquire(run_dir: str | Path) -> None:
    """Take (or confirm this process already holds) the writer lock of ``run_dir``.

    Raises :class:`RunLocked` when another live process holds it. Never blocks."""
    key = _key(Path(run_dir))
    with _guard:
        if key in _held:
            return
        path = key / LOCK_FILE
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError:
            return  # a read-only run (a shared archive) has no writer to exclude
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            who = holder(key) or "another process"
            raise RunLocked(
                f"{key} is being written by {who}; wait for it to end (or stop it) and run "
                "the command again; two writers would run every unit twice"
            ) from None
        os.ftruncate(fd, 0)
        command = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))
        os.write(fd, f"pid {os.getpid()}: {command[:200]}\n".encode())
        _held[key] = fd


def release(run_dir: str | Path) -> None:
    """Give the lock up before the process ends (tests; a long-lived notebook kernel that
    finished a run). Safe to call when not held."""
    key = _key(Path(run_dir))
    with _guard:
        fd = _held.pop(key, None)
    if fd is not None:
        os.close(fd)  # closing the last descriptor releases the flock


@contextlib.contextmanager
def writing(run_dir: str | Path) -> Iterator[None]:
    """Hold the writer lock for one write: a lock this process already holds (a run it is
    working on) stays held; otherwise it is taken for the write and given up after, so a
    finished run's report can be rebuilt (``silicolab view``, ``study predict``) without
    keeping the run locked for the rest of a long-lived process such as a notebook."""
    if held(run_dir):
        yield
        return
    acquire(run_dir)
    try:
        yield
    finally:
        release(run_dir)


def held(run_dir: str | Path) -> bool:
    """Whether this process holds the writer lock of ``run_dir``."""
    return _key(Path(run_dir)) in _held


__all__ = ["LOCK_FILE", "RunLocked", "acquire", "held", "holder", "release", "writing"]
