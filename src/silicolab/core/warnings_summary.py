"""Library warnings counted during a command and summarized at its end, never flooded.

One study once printed 812 lines of statsmodels ``RuntimeWarning``; in ``--json`` mode such
lines must never touch stdout either. While a command runs, :func:`counted_warnings`
replaces :func:`warnings.showwarning` with a counter keyed by (category, package, message)
— the warning filters still decide what is shown, so nothing new surfaces — and prints one
``note:`` line per kind on stderr when the command ends (at most :data:`MAX_KINDS`, then
how many kinds more). Worker processes (``ProcessExecutor``) cannot hand their counts back
cheaply, so :func:`show_each_kind_once` makes each of them print a kind's first warning
only, on its own stderr.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

#: Summary lines printed at most; the rest are counted in one more line.
MAX_KINDS = 3
#: Characters of a warning's message kept in its summary line.
MESSAGE_CHARS = 80


@dataclass
class _Kind:
    """How often one (category, package, message) warning was shown, and where first."""

    count: int
    first_at: str


def package_of(filename: str) -> str:
    """The top-level package a warning's file belongs to (``statsmodels`` for
    ``.../site-packages/statsmodels/regression/linear_model.py``), else the file's stem."""
    parts = Path(filename).parts
    for marker in ("site-packages", "dist-packages"):
        if marker in parts and parts.index(marker) + 1 < len(parts):
            return Path(parts[parts.index(marker) + 1]).stem
    if "silicolab" in parts:
        return "silicolab"
    return Path(filename).stem or "python"


def _short_place(filename: str, lineno: int) -> str:
    """``statsmodels/regression/linear_model.py:1234``: the path from the package down."""
    parts = Path(filename).parts
    for marker in ("site-packages", "dist-packages", "src"):
        if marker in parts:
            parts = parts[parts.index(marker) + 1 :]
            break
    return f"{'/'.join(parts[-4:])}:{lineno}"


Kind = tuple[str, str, str]


def kind_key(message: Warning | str, category: type[Warning], filename: str) -> Kind:
    """What makes two warnings the same kind: category, package, and message text."""
    return category.__name__, package_of(filename), " ".join(str(message).split())


class WarningCounter:
    """A :func:`warnings.showwarning` replacement that counts instead of printing."""

    def __init__(self) -> None:
        self.kinds: dict[tuple[str, str, str], _Kind] = {}

    def showwarning(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: IO[str] | None = None,
        line: str | None = None,
    ) -> None:
        key = kind_key(message, category, filename)
        kind = self.kinds.get(key)
        if kind is None:
            self.kinds[key] = _Kind(1, _short_place(filename, lineno))
        else:
            kind.count += 1

    def forget_unawaited_coroutines(self) -> None:
        """Drop the "coroutine ... was never awaited" warnings: after an interruption they
        are its own trace (a signal raised between creating a coroutine and awaiting it),
        not a problem of the library the user should look into."""
        self.kinds = {
            (category, package, text): kind
            for (category, package, text), kind in self.kinds.items()
            if not (category == "RuntimeWarning" and _is_unawaited_coroutine(text))
        }

    def summary_lines(self, max_kinds: int = MAX_KINDS) -> list[str]:
        """One ``note:`` line per kind, most frequent first; empty when nothing was shown."""
        ranked = sorted(self.kinds.items(), key=lambda item: -item[1].count)
        lines = []
        for (category, package, text), kind in ranked[:max_kinds]:
            short = text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 3] + "..."
            noun = "warning" if kind.count == 1 else "warnings"
            lines.append(
                f"note: {kind.count} {noun} from {package} ({category}: {short}), "
                f"first at {kind.first_at}"
            )
        rest = ranked[max_kinds:]
        if rest:
            total = sum(kind.count for _, kind in rest)
            lines.append(f"note: and {total} more warnings of {len(rest)} other kinds")
        return lines


@contextlib.contextmanager
def counted_warnings(stream: IO[str] | None = None) -> Iterator[WarningCounter]:
    """Count the warnings shown inside the block; print their summary on stderr at exit
    (also when the block raises, so a failed command still says what it warned)."""
    counter = WarningCounter()
    with warnings.catch_warnings():
        warnings.showwarning = counter.showwarning
        try:
            yield counter
        finally:
            _print(counter.summary_lines(), stream)


def show_each_kind_once() -> None:
    """In a worker process: show only the first warning of each (category, package,
    message), through the display already installed; the rest are dropped, so a library
    warning repeated from a thousand places is one line per worker, not a thousand."""
    shown: set[tuple[str, str, str]] = set()
    display = warnings.showwarning

    def showwarning(message: Warning | str, category: type[Warning], filename: str,
                    lineno: int, *where: Any) -> None:  # fmt: skip
        key = kind_key(message, category, filename)
        if key not in shown:
            shown.add(key)
            display(message, category, filename, lineno, *where)

    warnings.showwarning = showwarning


def _print(lines: list[str], stream: IO[str] | None) -> None:
    out: Any = stream if stream is not None else sys.stderr
    with contextlib.suppress(OSError, ValueError):  # a closed stderr: nothing to tell
        for line in lines:
            out.write(line + "\n")
        out.flush()


def _is_unawaited_coroutine(text: str) -> bool:
    """Whether a warning's text is Python's "coroutine ... was never awaited"."""
    return text.startswith("coroutine ") and text.endswith("was never awaited")


__all__ = ["MAX_KINDS", "WarningCounter", "counted_warnings", "package_of", "show_each_kind_once"]
