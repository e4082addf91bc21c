"""Figures with matplotlib: drawn once, inlined in ``report.html`` as SVG and saved as PNG
and SVG files under the run's ``figures/`` folder for papers.

Figures are built on :class:`matplotlib.figure.Figure` directly (no ``pyplot``): no global
state, no GUI backend, safe in any thread. Output is deterministic: a fixed SVG hash salt,
no dates in the metadata, and glyphs drawn as paths (the file needs no font, and no text
from a record can become markup).
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from silicolab.report.html.blocks import Figure

FIGURES_DIR = "figures"
#: Colours used across pages (colour-blind safe: Okabe-Ito).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000")
_RC: dict[str, Any] = {
    "svg.hashsalt": "silicolab",
    "svg.fonttype": "path",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
}


@contextmanager
def style() -> Iterator[None]:
    """The figures' matplotlib settings, for the duration of a drawing: matplotlib's
    defaults plus ours, whatever another library imported in the process changed (so the
    same run gives the same files in any process)."""
    import matplotlib

    settings: Any = {k: v for k, v in matplotlib.rcParamsDefault.items() if k != "backend"}
    settings.update(_RC)
    with matplotlib.rc_context(settings):
        yield


def new_figure(width: float = 6.0, height: float = 3.6, *, constrained: bool = True) -> Any:
    """A blank :class:`matplotlib.figure.Figure` (inches), not attached to pyplot; laid out
    by matplotlib's constrained layout unless ``constrained`` is false (fixed margins: the
    geometry then depends on nothing but the data)."""
    from matplotlib.figure import Figure as MplFigure

    with style():
        return MplFigure(figsize=(width, height), layout="constrained" if constrained else None)


@dataclass
class FigureSet:
    """The figures of one page: each :meth:`add` returns the inline block and, when
    ``folder`` is set and ``save`` is true, writes ``<name>.png`` and ``<name>.svg`` there.
    With ``write`` false nothing is written: the block links the files already in
    ``folder`` (a page written elsewhere, ``view --out``, leaves the run as it is)."""

    folder: Path | None
    saved: list[Figure] = field(default_factory=list)
    write: bool = True

    def add(self, name: str, fig: Any, caption: str, *, save: bool = True) -> Figure:
        """Render ``fig``; returns the :class:`Figure` block (SVG data URI)."""
        with style():
            svg = _render(fig, "svg")
            files: list[str] = []
            if save and self.folder is not None:
                paths = [self.folder / f"{name}.png", self.folder / f"{name}.svg"]
                if self.write:
                    self.folder.mkdir(parents=True, exist_ok=True)
                    paths[1].write_bytes(svg)
                    paths[0].write_bytes(_render(fig, "png"))
                if all(p.is_file() for p in paths):
                    files = [f"{FIGURES_DIR}/{p.name}" for p in paths]
        uri = "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")
        block = Figure(name=name, src=uri, caption=caption, files=tuple(files))
        if files:
            self.saved.append(block)
        return block


def _render(fig: Any, fmt: str) -> bytes:
    """``fig`` as ``fmt`` bytes without time stamps."""
    buffer = io.BytesIO()
    metadata: dict[str, Any] = {"Date": None} if fmt == "svg" else {"Software": None}
    fig.savefig(buffer, format=fmt, dpi=150 if fmt == "png" else 72, metadata=metadata)
    return buffer.getvalue()


def line_chart(
    series: Sequence[tuple[str, Sequence[float], Sequence[float]]],
    *,
    xlabel: str,
    ylabel: str,
    title: str = "",
    width: float = 6.0,
    height: float = 3.2,
    integer_x: bool = True,
) -> Any:
    """One line per ``(label, xs, ys)`` with markers; a legend (outside, right) when there
    are labels; whole-number ticks on x unless ``integer_x`` is false."""
    fig = new_figure(width, height)
    ax = fig.add_subplot()
    for i, (label, xs, ys) in enumerate(series):
        ax.plot(xs, ys, marker="o", ms=3, lw=1.4, color=PALETTE[i % len(PALETTE)], label=label)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    if integer_x:
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if any(label for label, _, _ in series):
        ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def scatter_vs(
    observed: Sequence[float],
    predicted: dict[str, Sequence[float]],
    *,
    xlabel: str = "observed",
    ylabel: str = "predicted",
) -> Any:
    """Predicted against observed, one panel per prediction kind, with the identity line."""
    fig = new_figure(3.2 * max(1, len(predicted)), 3.2)
    axes = fig.subplots(1, max(1, len(predicted)), squeeze=False)[0]
    for i, (ax, (label, values)) in enumerate(zip(axes, predicted.items(), strict=False)):
        pairs = [(o, p) for o, p in zip(observed, values, strict=False) if _finite(o, p)]
        if pairs:
            xs, ys = zip(*pairs, strict=True)
            ax.scatter(xs, ys, s=14, alpha=0.75, color=PALETTE[i % len(PALETTE)])
            low, high = min(*xs, *ys), max(*xs, *ys)
            ax.plot([low, high], [low, high], color="#888", lw=0.8, ls="--")
        ax.set(title=label, xlabel=xlabel, ylabel=ylabel if i == 0 else "")
    return fig


def bars(
    groups: Sequence[str],
    values: Mapping[str, Sequence[Any]],
    *,
    ylabel: str,
    title: str = "",
) -> Any:
    """Grouped bars: for each group one bar per series (``None`` leaves a gap)."""
    fig = new_figure(max(4.0, 0.9 * len(groups) * max(1, len(values)) + 1.5), 3.2)
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(values))
    for i, (label, ys) in enumerate(values.items()):
        xs = [g + i * width for g in range(len(groups))]
        ax.bar(
            [x for x, y in zip(xs, ys, strict=True) if y is not None],
            [y for y in ys if y is not None],
            width=width,
            label=label,
            color=PALETTE[i % len(PALETTE)],
        )
    ax.set_xticks([g + width * (len(values) - 1) / 2 for g in range(len(groups))], groups)
    ax.set(ylabel=ylabel, title=title)
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def _finite(*values: Any) -> bool:
    import math

    return all(isinstance(v, int | float) and math.isfinite(v) for v in values)


__all__ = ["FIGURES_DIR", "PALETTE", "FigureSet", "bars", "line_chart", "new_figure", "scatter_vs"]
