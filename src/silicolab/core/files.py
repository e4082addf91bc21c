"""Durable file writes: atomic replacement and flushed append-only JSON lines.

A crash or a kill at any moment leaves either the old or the new version of a file,
never a torn one, and every appended line that returned has reached the disk.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace: equal objects give equal
    strings, which makes it suitable for hashing (cache keys, identities)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` via a temporary file in the same folder and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_json(path: str | Path, obj: Any, *, indent: int | None = 2) -> Path:
    """Write ``obj`` as JSON to ``path`` atomically (see :func:`atomic_write_text`)."""
    text = json.dumps(obj, indent=indent, ensure_ascii=False, default=str)
    return atomic_write_text(path, text + "\n")


def append_jsonl(path: str | Path, obj: Any) -> None:
    """Append ``obj`` as one JSON line to ``path``, flushed and fsynced before returning.

    The line is written with a single ``write`` call on a file opened in append mode, so
    concurrent appenders in different processes do not interleave within a line.
    """
    line = json.dumps(obj, ensure_ascii=False, default=str, separators=(",", ":")) + "\n"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line)
        handle.flush()
        os.fsync(handle.fileno())


def read_jsonl(path: str | Path) -> list[Any]:
    """Read a JSON-lines file, skipping a torn last line left by a hard kill."""
    path = Path(path)
    if not path.exists():
        return []
    rows: list[Any] = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows
