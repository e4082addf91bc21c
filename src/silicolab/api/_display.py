"""How every result of :mod:`silicolab.api` shows itself: a short ``repr`` and an inline
``_repr_html_`` (a summary table and the run's main figure) for Jupyter.

A result subclasses :class:`Shown` and says what to show with :meth:`Shown._headline`
(the few ``name=value`` pairs of its ``repr`` and the summary table) and
:meth:`Shown._figure` (a PNG or SVG file, usually in the run's ``figures/``).
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_MAX_REPR_VALUE = 60  # characters of one value in a repr before it is cut


def short(value: Any) -> str:
    """``repr(value)`` cut to a readable length (floats to 4 significant digits)."""
    if isinstance(value, float):
        text = f"{value:.4g}"
    else:
        text = repr(str(value)) if isinstance(value, Path) else repr(value)
    return text if len(text) <= _MAX_REPR_VALUE else text[: _MAX_REPR_VALUE - 1] + "…"


def inline_image(path: Path | None) -> str:
    """An ``<img>`` holding the file at ``path`` (PNG or SVG) as a data URI, or ``""``."""
    if path is None or not Path(path).is_file():
        return ""
    mime = "image/svg+xml" if Path(path).suffix.lower() == ".svg" else "image/png"
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return f'<img src="data:{mime};base64,{data}" style="max-width:42em" alt="{path.name}">'


def html_table(rows: Sequence[tuple[str, Any]]) -> str:
    """A two-column HTML table of ``(label, value)`` rows, escaped."""
    cells = "".join(
        f"<tr><th style='text-align:left'>{html.escape(str(k))}</th>"
        f"<td style='text-align:left'>{html.escape(_cell(v))}</td></tr>"
        for k, v in rows
    )
    return f"<table>{cells}</table>"


def _cell(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


class Shown:
    """Mixin: a short ``repr`` from :meth:`_headline`, and ``_repr_html_`` with the same
    pairs as a table plus :meth:`_figure` inline."""

    def _headline(self) -> list[tuple[str, Any]]:
        """The ``(name, value)`` pairs that summarise this result, most important first."""
        raise NotImplementedError

    def _figure(self) -> Path | None:
        """The main figure's file (PNG or SVG), or None."""
        return None

    def __repr__(self) -> str:
        pairs = ", ".join(f"{k}={short(v)}" for k, v in self._headline())
        return f"{type(self).__name__}({pairs})"

    def _repr_html_(self) -> str:
        title = f"<strong>{html.escape(type(self).__name__)}</strong>"
        return f"<div>{title}{html_table(self._headline())}{inline_image(self._figure())}</div>"
