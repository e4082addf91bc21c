"""A damaged LLM cache is moved aside and rebuilt empty, never a traceback.

The cache only saves calls: losing it costs answers that must be asked again, never a
result. So a cache file SQLite cannot use (pages overwritten by a disk error or a copy
cut short, or a file that is not SQLite at all) is renamed to
``<file>.damaged-<YYYYmmdd-HHMMSS>`` (with its ``-wal`` file, kept for whoever wants to
look), a new empty cache takes its place, and one warning line names both paths; the
command then carries on. The check is SQLite's own ``PRAGMA quick_check``, run once per
file per process when the cache is opened (about 0.1 s per 100 MB). Processes that find
the same damage at once repair it once: the repair holds an exclusive lock on the cache's
folder and checks again before moving anything.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from silicolab.core import notices
from silicolab.core.errors import ConfigError

#: SQLite's primary result codes for "this is not a usable database file".
_DAMAGE_CODES = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
_checked: set[str] = set()
_guard = threading.Lock()


def ensure_usable(path: Path) -> None:
    """Check the cache file ``path`` once per process; move a damaged one aside (one
    warning line) so the caller opens a fresh, empty cache there; a damaged file that
    cannot be moved is a :class:`ConfigError`. A missing file, or a problem that is not
    damage (no permission, a folder), is left to the caller's open."""
    key = os.path.realpath(path)
    with _guard:
        if key in _checked:
            return
    first = damage(path)
    if first is None:
        _checked.add(key)
        return
    try:
        with _folder_lock(path.parent):
            problem = damage(path)  # another process or thread may have repaired it
            aside = _move_aside(path) if problem is not None else None
    except OSError as err:  # a read-only folder: the damaged file must stay where it is
        raise ConfigError(
            f"the LLM cache {path} is damaged ({first}) and cannot be moved aside "
            f"({err.strerror or err}); delete it, or set cache_path to a writable location"
        ) from None
    _checked.add(key)
    if aside is None:
        return
    notices.warn(
        f"the LLM cache {path} was damaged ({problem}); moved it to {aside} and started an "
        "empty cache in its place (its answers will be asked again)"
    )


def damage(path: Path) -> str | None:
    """What makes the SQLite file ``path`` unusable, or ``None`` (healthy, missing, or
    unusable for a reason that is not damage)."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    try:
        conn = sqlite3.connect(path, timeout=30.0)
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as err:
        code = getattr(err, "sqlite_errorcode", None)
        return str(err) if code is not None and code & 0xFF in _DAMAGE_CODES else None
    if rows == [("ok",)]:
        return None
    return f"quick_check: {rows[0][0]}" if rows else "quick_check gave no answer"


def _move_aside(path: Path) -> Path:
    """Rename ``path`` (and its ``-wal``; the ``-shm`` index is rebuilt) to a free
    ``<name>.damaged-<time>`` name; returns it."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    n = 1
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
    os.replace(path, aside)
    wal = path.with_name(path.name + "-wal")
    if wal.exists():
        os.replace(wal, aside.with_name(aside.name + "-wal"))
    path.with_name(path.name + "-shm").unlink(missing_ok=True)
    return aside


@contextlib.contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``folder`` for the length of a ``with`` block: no lock
    file is left behind, and the kernel releases it if the process dies."""
    fd = os.open(folder, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


__all__ = ["damage", "ensure_usable"]
