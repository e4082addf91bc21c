"""Where a published number comes from, and how a printed table says so.

Every reference ("anchor") number a bench prints beside ours carries its provenance: a
:class:`Kind` (read from a table of the paper, stated in its text, read off a figure, or
taken from another source such as the authors' blog), where exactly (``where``: "Table 2,
row 'PC', col Sachs SHD", "§5.2 text", "blog radar figure") and the document (``source``).
A printed cell marks anything not read from a table, so a reader never takes an estimate
for a published cell: ``≈`` before a value read off a figure, ``*`` after a value stated
in the text, ``†`` after a value from another source than the paper, ``‡`` after a value
computed from a table cell (put on our scale: BoxingGym's accuracy goals in fixed mode). A
range prints as a range (``40–54*``). :func:`legend` writes the lines that explain the
marks a table uses.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Kind(StrEnum):
    """How a published number was obtained."""

    TABLE = "table"  # a cell of one of the paper's tables
    TEXT = "text"  # stated in the paper's text (the table behind it is not at hand)
    APPROXIMATE = "approximate"  # read off a figure, or otherwise estimated
    OTHER = "other"  # stated by another source (the authors' blog, ...), named in ``source``
    DERIVED = "derived"  # computed from a table cell (``where`` names the cell and the step)


#: The source of numbers that come from the paper itself.
PAPER = "paper"
#: The mark of each kind, and the legend line that explains it.
MARKS: Mapping[str, str] = {"approximate": "≈", "text": "*", "other": "†", "derived": "‡"}
LEGEND: Mapping[str, str] = {
    "approximate": "≈ read off a figure (approximate)",
    "text": "* stated in the paper's text, not read from a table",
    "other": "† from another source than the paper (the authors' blog)",
    "derived": "‡ computed from a table cell, not printed in the paper (the notes say how)",
}


@dataclass(frozen=True)
class Provenance:
    """Where one anchor comes from: its ``kind``, ``where`` in the source (table and cell,
    section, figure) and the ``source`` document (:data:`PAPER` or a named other one)."""

    kind: Kind
    where: str
    source: str = PAPER

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", Kind(self.kind))
        if not self.where:
            raise ValueError("a provenance names where the number is (table and cell, section)")

    def marks(self) -> tuple[str, str]:
        """The (prefix, suffix) a printed value gets: ``≈`` before an approximate value,
        ``*`` after one stated in text, ``†`` after one from another source than the paper,
        ``‡`` after one computed from a table cell."""
        prefix = MARKS["approximate"] if self.kind is Kind.APPROXIMATE else ""
        suffix = MARKS["text"] if self.kind is Kind.TEXT else ""
        suffix += MARKS["derived"] if self.kind is Kind.DERIVED else ""
        if self.kind is Kind.OTHER or self.source != PAPER:
            suffix += MARKS["other"]
        return prefix, suffix

    def used_marks(self) -> set[str]:
        """The legend keys this provenance's marks need."""
        prefix, suffix = self.marks()
        return {k for k, m in MARKS.items() if m in prefix + suffix}

    def to_dict(self) -> dict[str, str]:
        return {"kind": str(self.kind), "where": self.where, "source": self.source}


def _number(value: Any) -> str:
    """A published number as the paper prints it (0.8, not 0.800: no precision added)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return f"{value:g}"
    return "" if value is None or value != value else str(value)  # missing: a blank cell


def value_text(low: Any, high: Any = None) -> str:
    """A published value (or the range ``low``–``high``) as a table cell, unmarked."""
    if high is None or (isinstance(high, float) and math.isnan(high)):
        return _number(low)
    return f"{_number(low)}–{_number(high)}"


def marked(low: Any, high: Any, provenance: Provenance | Mapping[str, str]) -> str:
    """The printed cell of a published value: the value or range with its marks."""
    if isinstance(provenance, Mapping):
        provenance = Provenance(**provenance)  # type: ignore[arg-type]
    prefix, suffix = provenance.marks()
    return f"{prefix}{value_text(low, high)}{suffix}"


def legend(provenances: Iterable[Provenance | Mapping[str, str]]) -> list[str]:
    """The legend lines for the marks the given provenances use (none for table cells)."""
    used: set[str] = set()
    for p in provenances:
        used |= (Provenance(**p) if isinstance(p, Mapping) else p).used_marks()  # type: ignore[arg-type]
    return [line for key, line in LEGEND.items() if key in used]


def count_kinds(provenances: Sequence[Provenance]) -> dict[str, int]:
    """How many anchors there are of each kind (every kind listed, zeros included)."""
    return {str(k): sum(p.kind is k for p in provenances) for k in Kind}


#: The key of a bench row that holds the provenance of each published column.
ROW_KEY = "published_provenance"


def mark_rows(rows: Iterable[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Bench rows as a person reads them: each published column that has a provenance in
    the row's :data:`ROW_KEY` becomes its marked text (ranges as ranges); plus the legend
    lines for the marks used. Rows without provenance pass unchanged."""
    out: list[dict[str, Any]] = []
    used: list[Mapping[str, str]] = []
    for row in rows:
        shown = dict(row)
        for column, info in (row.get(ROW_KEY) or {}).items():
            if column in shown and isinstance(info, Mapping):
                prov = {k: info[k] for k in ("kind", "where", "source")}
                shown[column] = marked(info.get("low"), info.get("high"), prov)
                used.append(prov)
        out.append(shown)
    return out, legend(used)


__all__ = [
    "LEGEND",
    "MARKS",
    "PAPER",
    "ROW_KEY",
    "Kind",
    "Provenance",
    "count_kinds",
    "legend",
    "mark_rows",
    "marked",
    "value_text",
]
