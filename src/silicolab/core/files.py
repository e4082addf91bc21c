"""Durable file writes: atomic replacement and flushed append-only JSON lines.

A crash or a kill at any moment leaves either the old or the new version of a file,
never a torn one, and every appended line that returned has reached the disk.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any


def finite(obj: Any) -> Any:
    """``obj`` with every NaN or infinite float (Python or NumPy) and every pandas missing
    value (``pd.NA``, ``pd.NaT``) replaced by ``None``, and NumPy scalars and arrays (keys
    too) turned into Python values: what strict JSON can carry.

    JSON has no NaN or Infinity; ``json.dumps`` writes them anyway as ``NaN`` and
    ``-Infinity``, which strict parsers (JavaScript's ``JSON.parse``, most JSON libraries)
    refuse. Every record, event line and ``--json`` output goes through this."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {_key(k): finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [finite(v) for v in obj]
    kind = type(obj)
    item = getattr(obj, "item", None)  # NumPy scalars; arrays via tolist
    if callable(item) and kind.__module__ == "numpy":
        tolist = getattr(obj, "tolist", None)
        return finite(tolist() if getattr(obj, "ndim", 0) else item())
    if kind.__name__ in _PANDAS_MISSING and kind.__module__.startswith("pandas"):
        return None  # pandas.NA and pandas.NaT: "missing", which JSON spells null
    return obj


#: The types of pandas' missing-value singletons (``pd.NA``, ``pd.NaT``), matched by name
#: so that this module never imports pandas.
_PANDAS_MISSING = frozenset({"NAType", "NaTType"})


def _key(key: Any) -> Any:
    """A mapping key JSON can carry: NumPy scalar keys (``np.int64(3)``) become Python's."""
    if type(key).__module__ == "numpy" and callable(getattr(key, "item", None)):
        return key.item()
    return key


def dumps(obj: Any, **options: Any) -> str:
    """Strict JSON text of ``obj``: non-finite numbers become ``null`` (see :func:`finite`),
    anything else unknown is written with ``str``. Accepts ``json.dumps``' options."""
    options.setdefault("default", str)
    return json.dumps(finite(obj), allow_nan=False, **options)


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
    text = dumps(obj, indent=indent, ensure_ascii=False)
    return atomic_write_text(path, text + "\n")


def append_jsonl(path: str | Path, obj: Any) -> None:
    """Append ``obj`` as one JSON line to ``path``, flushed and fsynced before returning.

    The line is written with a single ``write`` call on a file opened in append mode, so
    concurrent appenders in different processes do not interleave within a line.
    """
    line = dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
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
