"""Durable file writes (atomic replacement, flushed append-only JSON lines) and reads
that never end in a traceback.

A crash or a kill at any moment leaves either the old or the new version of a file,
never a torn one, and every appended line that returned has reached the disk. A file a
user hands us (a hypothesis, a config, a CSV) or a run's own file that was damaged since
(a truncated ``record.json``, a flipped byte in ``events.jsonl``) is read by
:func:`read_user_text`, :func:`read_json_file` and :func:`read_jsonl`: every problem is
one :class:`~silicolab.core.errors.InputError` naming the file and the fix, or, for a
damaged event line, a line skipped and reported.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from silicolab.core.errors import InputError, SilicolabError


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
    """Append ``obj`` as one JSON line to ``path``, flushed and fsynced before returning
    (:func:`append_lines`)."""
    append_lines(path, jsonl_line(obj))


def jsonl_line(obj: Any) -> str:
    """``obj`` as one line of a JSON-lines file (compact, newline-terminated)."""
    return dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"


def append_lines(path: str | Path, text: str) -> None:
    """Append ``text`` (whole lines) to ``path``, flushed and fsynced once before
    returning: many records for the price of one fsync (a group commit).

    The text is written with a single ``write`` call on a file opened in append mode, so
    concurrent appenders in different processes do not interleave within a line; a kill
    during the write can only tear the last line written, which readers skip.
    """
    if not text:
        return
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def read_jsonl(
    path: str | Path, *, on_damaged: Callable[[int, bytes, str], None] | None = None
) -> list[Any]:
    """Read a JSON-lines file (none yet: ``[]``), skipping every line that is not UTF-8
    JSON instead of failing on it.

    The last non-empty line is skipped silently: a hard kill mid-write tears it, and what
    it held never counted as written. A damaged line before it (a flipped byte, a bad
    edit, a disk error) is reported to ``on_damaged(line_number, raw_bytes, problem)``
    (1-based; ``problem`` is ``"not UTF-8 text"`` or ``"not valid JSON"``) so the caller
    can say what it means. An unreadable file (a folder, no permission) is an
    :class:`InputError` naming it.
    """
    path = Path(path)
    rows: list[Any] = []
    pending: tuple[int, bytes, str] | None = None  # a damaged line not yet known to be last
    try:
        with open(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                if pending is not None and on_damaged is not None:
                    on_damaged(*pending)
                pending = None
                try:
                    rows.append(json.loads(raw.decode("utf-8")))
                except UnicodeDecodeError:
                    pending = (number, raw, "not UTF-8 text")
                except json.JSONDecodeError:
                    pending = (number, raw, "not valid JSON")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise _unreadable(path, str(path), exc, InputError) from None
    return rows


def can_create_in(folder: str | Path) -> bool:
    """Whether a file can be created in ``folder``, found by trying: permission bits say
    nothing for root, nor for a read-only mount. Commands check it before work that would
    be lost (a fit, paid model calls) when its output cannot be written."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def read_user_text(
    path: str | Path,
    *,
    what: str = "file",
    missing: str = "check the path",
    damaged: str = "save it as UTF-8",
    error: type[SilicolabError] = InputError,
) -> str:
    """The UTF-8 text of a file the user named (or a run's file): every way it can fail to
    be read becomes one ``error`` (default :class:`InputError`, exit 2) naming ``what`` and
    ``path`` and the fix, never a traceback.

    Missing (``missing`` says what to do), a folder, no permission, any other OS error,
    or bytes that are not UTF-8 (named with their offset; ``damaged`` is the fix: for a
    run's own file, restoring or rerunning). A leading UTF-8 byte-order mark (which some
    Windows editors write) is dropped: JSON refuses it and it is never content.
    """
    path = Path(path)
    name = f"{what} {path}".strip()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise error(f"{name} does not exist; {missing}") from None
    except IsADirectoryError:
        raise error(f"{name} is a folder; pass the file itself") from None
    except OSError as exc:
        raise _unreadable(path, name, exc, error) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(
            f"{name} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}): "
            f"{damaged}"
        ) from None
    return text.removeprefix("\ufeff")


def _unreadable(path: Path, name: str, exc: OSError, error: type[SilicolabError]) -> SilicolabError:
    """The error of a file the OS refused to read (``exc``), with the fix."""
    if isinstance(exc, PermissionError):
        return error(
            f"cannot read {name} (permission denied); make it readable (chmod u+r {path}) "
            "or pass a copy you can read"
        )
    if isinstance(exc, IsADirectoryError):
        return error(f"{name} is a folder; pass the file itself")
    return error(f"cannot read {name} ({exc.strerror or exc}); pass a regular file you can read")


def read_json_file(path: str | Path, *, what: str = "", fix: str) -> Any:
    """The JSON value of a file silicolab wrote (``run.json``, ``record.json``…): one
    :class:`InputError` naming the file, how it is damaged (``JSON ends at line 3``, not
    UTF-8, empty) and ``fix`` (restore it, or rerun what wrote it) when it cannot be used."""
    path = Path(path)
    name = f"{what} {path}".strip()
    text = read_user_text(path, what=what, missing=fix, damaged=fix)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{name} is damaged ({json_problem(exc, text)}): {fix}") from None


def json_problem(exc: json.JSONDecodeError, text: str) -> str:
    """What is wrong with JSON ``text``, in words: ``it is empty``, ``JSON ends at line 3``
    (a file cut short, e.g. by a full disk or a copy stopped midway), or where it breaks."""
    body = text.rstrip()
    if not body:
        return "it is empty"
    if exc.pos >= len(body) or exc.msg.startswith("Unterminated string"):
        return f"JSON ends at line {body.count(chr(10)) + 1}"
    return f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
