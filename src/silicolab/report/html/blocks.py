"""The building blocks of a report page: plain data that one template renders.

A page builder (one module per run kind) turns a run directory into a :class:`Page` made of
:class:`Section` objects holding blocks. No block holds markup: every string is text that
the template escapes (Jinja2 autoescape), except :class:`Figure`, whose image is a data URI
made here from matplotlib's output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class Text:
    """A paragraph (``muted`` for notes)."""

    text: str
    muted: bool = False
    kind: Literal["text"] = "text"


@dataclass(frozen=True)
class Facts:
    """A short list of ``(label, value)`` pairs."""

    items: Sequence[tuple[str, Any]]
    kind: Literal["facts"] = "facts"


@dataclass(frozen=True)
class Table:
    """A table: ``columns`` are ``(key, heading)``, ``rows`` mappings; cells are formatted
    by :func:`silicolab.report.tables.format_cell`. ``highlight`` names columns drawn in
    bold (the published anchors)."""

    columns: Sequence[tuple[str, str]]
    rows: Sequence[dict[str, Any]]
    caption: str = ""
    highlight: Sequence[str] = ()
    kind: Literal["table"] = "table"


@dataclass(frozen=True)
class Figure:
    """A figure: an SVG data URI, a caption and the files it was also saved as."""

    name: str
    src: str
    caption: str
    files: Sequence[str] = ()
    kind: Literal["figure"] = "figure"


@dataclass(frozen=True)
class Chat:
    """A conversation: ``(speaker, text)`` statements in order."""

    statements: Sequence[tuple[str, str]]
    kind: Literal["chat"] = "chat"


@dataclass(frozen=True)
class Code:
    """Preformatted text (a DSL record, a JSON value)."""

    text: str
    kind: Literal["code"] = "code"


@dataclass(frozen=True)
class Fold:
    """A folded part (``<details>``): ``summary`` shown, ``blocks`` inside; ``anchor`` is
    its id (for links), ``search`` the text the page's search box matches."""

    summary: str
    blocks: Sequence[Any]
    open: bool = False
    anchor: str = ""
    search: str = ""
    badge: str = ""
    kind: Literal["fold"] = "fold"


@dataclass(frozen=True)
class Searchable:
    """A list of folds with a search box that hides the folds whose text does not match."""

    items: Sequence[Fold]
    placeholder: str = "search"
    kind: Literal["searchable"] = "searchable"


@dataclass(frozen=True)
class Columns:
    """Blocks side by side (wrapping on a narrow screen)."""

    blocks: Sequence[Any]
    kind: Literal["columns"] = "columns"


@dataclass(frozen=True)
class Link:
    """A link inside the page (``#anchor``) or to a file in the run directory."""

    text: str
    href: str
    kind: Literal["link"] = "link"


@dataclass(frozen=True)
class Section:
    """One titled part of a page; ``anchor`` is its id in the table of contents."""

    title: str
    anchor: str
    blocks: Sequence[Any]


@dataclass(frozen=True)
class Page:
    """A whole report: title, one-line subtitle, headline facts and sections."""

    title: str
    subtitle: str
    facts: Sequence[tuple[str, Any]]
    sections: Sequence[Section]
    figures: Sequence[Figure] = field(default_factory=tuple)


__all__ = [
    "Chat",
    "Code",
    "Columns",
    "Facts",
    "Figure",
    "Fold",
    "Link",
    "Page",
    "Searchable",
    "Section",
    "Table",
    "Text",
]
