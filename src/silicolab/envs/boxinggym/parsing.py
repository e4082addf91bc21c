"""Text parsing shared by the BoxingGym environments: designs and answers as agents write them.

Every helper here is pure and raises :class:`ValueError` (never anything broader) on text it
cannot read, so an environment's ``validate`` can turn the failure into the exact
:class:`~silicolab.envs.boxinggym.base.InvalidDesign` message its spec section prescribes.
The rules copy the published behaviour where it is benign (strip brackets, split on commas,
take the part after ``=``) and avoid ``eval`` everywhere (``ast.literal_eval`` instead).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable
from typing import Any

_BRACKETS = "[](){}"
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def strip_brackets(text: str) -> str:
    """``text`` without surrounding whitespace and bracket characters (``[1, 2]`` -> ``1, 2``)."""
    return text.strip().strip(_BRACKETS).strip()


def parse_number_list(text: str, cast: Callable[[str], Any] = float) -> list[Any]:
    """A bracketed, comma-separated list of numbers: ``"[0.5, 1]"`` -> ``[0.5, 1.0]``.

    Brackets anywhere are removed first (so ``"[[1, 2]]"`` reads like ``"1, 2"``); each item is
    converted with ``cast``. Raises ``ValueError`` for empty text or an unconvertible item.
    """
    body = text.strip()
    for bracket in _BRACKETS:
        body = body.replace(bracket, "")
    items = [item.strip() for item in body.split(",")]
    if not body.strip() or any(item == "" for item in items):
        raise ValueError(f"not a list of numbers: {text!r}")
    return [cast(item) for item in items]


_COMMENT = re.compile(r"\(.*\)\s*$")


def design_float(text: Any, fidelity: str, message: str) -> float:
    """A finite number from a design's text; fixed fidelity also accepts ``[0.5]`` and a
    trailing ``(comment)``. Anything else raises :class:`InvalidAction` with ``message``."""
    from silicolab.envs.errors import InvalidAction

    text = str(text).strip()
    if fidelity == "fixed":
        text = strip_brackets(_COMMENT.sub("", text))
    try:
        value = float(text)
    except ValueError:
        raise InvalidAction(message) from None
    if not math.isfinite(value):
        raise InvalidAction(message)
    return value


def int_from_float(text: str) -> int:
    """``int(float(text))``: ``"3.0"`` -> 3, ``"3.7"`` -> 3 (truncation, as upstream)."""
    return int(float(str(text).strip()))


def parse_float(text: str) -> float:
    """A float from stripped text; raises ``ValueError`` otherwise (``"nan"``/``"inf"`` too)."""
    value = float(str(text).strip())
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"not a finite number: {text!r}")
    return value


def parse_int(text: str) -> int:
    """A strict integer (``"7"``, ``" -2 "``); ``"7.5"`` raises ``ValueError``."""
    return int(str(text).strip())


def after_equals(text: str) -> str:
    """The answer part of ``"x = 3.2"``: the text between the first and second ``=`` (or the
    whole text when there is no ``=``), stripped. This is the published rule
    ``text.split("=")[1]``."""
    text = str(text).strip()
    return text.split("=")[1].strip() if "=" in text else text


def float_answer(text: str | None) -> float | None:
    """A scalar answer after the ``=`` rule; ``None`` when it does not parse."""
    if text is None:
        return None
    try:
        return parse_float(after_equals(text))
    except (ValueError, IndexError):
        return None


#: Dates (2024-03-16, 16/03/2024) and clock times (10:15, 10:15:03), with an optional
#: ISO ``T`` between them: their digits are never an answer.
_TIMESTAMP = re.compile(
    r"(?<![\d.])\d{1,4}([-/])\d{1,2}\1\d{1,4}(?![\d.])(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?"
    r"|(?<![\d.])\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
)


def without_timestamps(text: str) -> str:
    """``text`` with every timestamp-like part (a date, a clock time) blanked out."""
    return _TIMESTAMP.sub(" ", text)


def last_number(text: str | None) -> float | None:
    """The last number written anywhere in ``text`` (a fallback reader) outside any
    timestamp-like part (``2024-03-16``, ``10:15:03``: a timestamp is not an answer);
    ``None`` if there is none."""
    if text is None:
        return None
    found = _NUMBER.findall(without_timestamps(str(text)))
    return float(found[-1]) if found else None


def binary_answer(text: str | None) -> int | None:
    """The published binary rule: ``1`` if the text contains "1", else ``0`` if it contains
    "0", else ``None`` (so ``"10"`` reads as 1)."""
    if text is None:
        return None
    text = str(text)
    if "1" in text:
        return 1
    if "0" in text:
        return 0
    return None


def literal_list(text: str | None) -> list[Any] | None:
    """A (possibly nested) Python/JSON list literal such as ``"[[1, 2], [3, 4]]"`` read with
    ``ast.literal_eval`` (never ``eval``); ``None`` if it is not a list."""
    if text is None:
        return None
    try:
        value = ast.literal_eval(str(text).strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(value, tuple):
        value = list(value)
    return value if isinstance(value, list) else None


def numeric_matrix(text: str | None, rows: int, cols: int) -> list[list[float]] | None:
    """A ``rows`` x ``cols`` list of lists of finite numbers, or ``None``."""
    value = literal_list(text)
    if value is None or len(value) != rows:
        return None
    out: list[list[float]] = []
    for row in value:
        if not isinstance(row, list | tuple) or len(row) != cols:
            return None
        try:
            out.append([parse_float(str(item)) for item in row])
        except ValueError:
            return None
    return out


def extract_tag(text: str, tag: str) -> str | None:
    """The stripped text between the first ``<tag>`` and the following ``</tag>``, or ``None``."""
    match = re.search(rf"<{tag}>(.*?)</{tag}>", text, flags=re.DOTALL)
    return match.group(1).strip() if match else None


def format_number(value: float, digits: int = 2) -> str:
    """A number for prompts and outcomes: rounded to ``digits`` decimals, shortest form
    (``0.5``, ``1.0``, ``1234.57``), never scientific notation."""
    rounded = round(float(value), digits)
    text = repr(rounded)
    return f"{rounded:.{digits}f}" if "e" in text or "E" in text else text


def format_list(values: Any, digits: int = 2) -> str:
    """``[0.5, 1.25]``-style text for a vector of numbers."""
    return "[" + ", ".join(format_number(float(v), digits) for v in values) + "]"
