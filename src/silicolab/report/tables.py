"""Result tables: one formatting of cells, two renderings (rich on a terminal, Markdown).

Why two renderings: rich fits a table to the terminal's width, and when stdout is a pipe
or a file it assumes 80 columns and cuts cells into ``0…``. A table printed to anything
that is not a terminal is therefore written as Markdown, which wraps nowhere and pastes
into issues, notebooks and CI logs as it is.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TextIO

#: ``(column, heading)``: which record key a printed column shows, under which heading.
Column = tuple[str, str]
_NOTE_KEYS = ("error", "published_note", "notes")
_NO_WRAP = ("method", "dataset", "suite", "environment", "variable", "path")


def format_cell(value: Any) -> str:
    """A value as a table cell: blank for missing/NaN, yes/no, integers without ``.0``,
    other floats to three decimals."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) >= 1 else f"{value:.3f}"
    return str(value)


def table_cells(
    records: Iterable[Mapping[str, Any]], columns: Sequence[Column]
) -> tuple[list[str], list[list[str]], list[str]]:
    """Headings, formatted cells and numbered notes of ``records`` (dicts, or a DataFrame's
    ``to_dict("records")``). A record's ``error``/``published_note``/``notes`` text becomes
    a footnote marked ``[n]`` in its first cell; equal notes share a number."""
    records = list(records)
    present = [(c, h) for c, h in columns if any(c in r for r in records)] or list(columns)
    rows: list[list[str]] = []
    notes: list[str] = []
    for record in records:
        cells = [format_cell(record.get(c)) for c, _ in present]
        for key in _NOTE_KEYS:
            text = record.get(key)
            if text and isinstance(text, str):
                if text not in notes:
                    notes.append(text)
                cells[0] += f" [{notes.index(text) + 1}]"
        rows.append(cells)
    return [h for _, h in present], rows, notes


def _records(table: Any) -> list[Mapping[str, Any]]:
    return table.to_dict("records") if hasattr(table, "to_dict") else list(table)


def markdown_table(table: Any, columns: Sequence[Column]) -> str:
    """``table`` (a DataFrame or a list of dicts) as a Markdown table with numbered notes."""
    headings, rows, notes = table_cells(_records(table), columns)
    lines = ["| " + " | ".join(headings) + " |", "|" + "---|" * len(headings)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |" for cells in rows]
    if notes:
        lines += ["", *[f"[{i}] {note}" for i, note in enumerate(notes, start=1)]]
    return "\n".join(lines)


def print_table(
    table: Any,
    columns: Sequence[Column],
    *,
    title: str = "",
    footer: Sequence[str] = (),
    stream: TextIO | None = None,
) -> None:
    """Print ``table`` for a person: a rich table on a terminal, Markdown otherwise (see
    the module docstring), then its notes and the ``footer`` lines."""
    stream = stream or sys.stdout
    if not _is_terminal(stream):
        text = (f"## {title}\n\n" if title else "") + markdown_table(table, columns)
        stream.write(text + "\n" + "".join(f"{line}\n" for line in footer) + "\n")
        stream.flush()
        return
    from rich.console import Console
    from rich.table import Table

    headings, rows, notes = table_cells(_records(table), columns)
    out = Table(title=title or None)
    for heading in headings:
        out.add_column(heading, no_wrap=heading in _NO_WRAP)
    for cells in rows:
        out.add_row(*cells)
    console = Console(file=stream)
    console.print(out)
    for i, note in enumerate(notes, start=1):
        console.print(f"[{i}] {note}", markup=False)
    for line in footer:
        console.print(line, markup=False, highlight=False)


def print_lines(lines: Iterable[str], *, stream: TextIO | None = None) -> None:
    """Print plain summary lines (no markup, no wrapping when not a terminal)."""
    stream = stream or sys.stdout
    for line in lines:
        stream.write(f"{line}\n")
    stream.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


__all__ = ["Column", "format_cell", "markdown_table", "print_lines", "print_table", "table_cells"]
