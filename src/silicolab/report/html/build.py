"""Build and write a run directory's ``report.html``: pick the page of the run's kind,
render it, save its figures and link them from ``report.md``."""

from __future__ import annotations

import importlib
import logging
from pathlib import Path
from typing import Any

from silicolab.core.files import read_user_text
from silicolab.report.html.blocks import Code, Page, Section, Text
from silicolab.report.html.figures import style
from silicolab.report.html.page import render_page
from silicolab.report.html.source import RunSource, pretty
from silicolab.report.kinds import BUILDERS
from silicolab.runs.run_dir import RECORD_FIX

log = logging.getLogger(__name__)

REPORT_HTML = "report.html"
_FIGURES_START = "<!-- silicolab figures -->"


def build_page(
    path: str | Path,
    *,
    save_figures: bool = True,
    info: dict[str, Any] | None = None,
    write_figures: bool = True,
) -> Page:
    """The :class:`Page` of the run directory ``path`` (figures saved when asked, or with
    ``write_figures`` false only linked where already saved; ``info``, when given, in
    place of its ``run.json``)."""
    src = RunSource.load(
        Path(path), save_figures=save_figures, info=info, write_figures=write_figures
    )
    module = BUILDERS.get(src.kind)
    if module is None:
        return generic_page(src)
    builder = importlib.import_module(f"silicolab.report.html.{module}")
    with style():  # every figure is drawn under the same settings
        return builder.build(src)


def build_report(path: str | Path, *, save_figures: bool = False) -> str:
    """The HTML text of the run directory ``path``'s report."""
    page = build_page(path, save_figures=save_figures)
    return render_page(page, run_name=Path(path).name)


def write_report(
    path: str | Path, *, out: str | Path | None = None, info: dict[str, Any] | None = None
) -> Path:
    """Write ``report.html`` into the run directory, save its figures under ``figures/``
    and list them at the end of ``report.md``; returns the HTML path. With ``out`` the
    page is written there and nothing else: the run directory is left as it is (it may
    be read-only), the page linking the figure files it already has. Known secret
    values are scrubbed, as from everything a run writes. ``info`` (the writing run's
    :attr:`~silicolab.runs.Run.info`) replaces ``run.json``, whose final status is
    written only after the report."""
    from silicolab.core.files import atomic_write_text
    from silicolab.runs import Run

    run_dir = Path(path)
    page = build_page(run_dir, save_figures=True, info=info, write_figures=out is None)
    prefix = "" if out is None else _prefix(run_dir, Path(out))
    html = render_page(page, run_name=run_dir.resolve().name, link_prefix=prefix)
    if out is not None:
        from silicolab.core.secrets import scrub_text

        target = Path(out)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, scrub_text(html))
        return target
    run = Run.open(run_dir)
    markdown_path = run_dir / "report.md"
    markdown = read_user_text(markdown_path, damaged=RECORD_FIX) if markdown_path.is_file() else ""
    run.write_report(_with_figures(markdown, page), html=html)
    return run_dir / REPORT_HTML


def _prefix(run_dir: Path, out: Path) -> str:
    """The relative path from the folder of ``out`` to ``run_dir``, ending in ``/``
    (empty when the page sits in the run directory)."""
    import os

    relative = os.path.relpath(run_dir.resolve(), out.resolve().parent)
    return "" if relative == "." else Path(relative).as_posix() + "/"


def write_report_safely(path: str | Path, *, info: dict[str, Any] | None = None) -> Path | None:
    """:func:`write_report`, logging a warning instead of raising: a run never fails or is
    lost because its page could not be drawn. Returns the path, or ``None`` on failure."""
    try:
        return write_report(path, info=info)
    except Exception as exc:  # any rendering problem must spare the run
        log.warning("report.html of %s was not written: %s: %s", path, type(exc).__name__, exc)
        return None


def _with_figures(markdown: str, page: Page) -> str:
    """``markdown`` with its figure list replaced by the page's saved figures."""
    body = markdown.split(_FIGURES_START)[0].rstrip("\n")
    if not page.figures:
        return body + "\n" if body else ""
    lines = [_FIGURES_START, "", "## Figures", ""]
    for fig in page.figures:
        links = " · ".join(f"[{f.rsplit('.', 1)[-1].upper()}]({f})" for f in fig.files)
        lines.append(f"- {fig.caption} ({links})")
    lines += ["", "The whole report, offline: [report.html](report.html)", ""]
    return (body + "\n\n" if body else "") + "\n".join(lines)


def generic_page(src: RunSource) -> Page:
    """The page of a run kind without its own builder: the record's figures as data."""
    scalars = [(k, v) for k, v in src.record.items() if isinstance(v, str | int | float | bool)]
    report = src.path / "report.md"
    blocks: list[Any] = [Text("This run kind has no dedicated page; its report and record:")]
    if report.is_file():
        blocks.append(Code(read_user_text(report, damaged=RECORD_FIX)))
    blocks.append(Code(pretty(src.record)[:200_000]))
    section = Section("Record", "record", blocks)
    return Page(f"Run: {src.path.name}", f"kind {src.kind}", scalars + src.run_facts(), [section])


__all__ = ["BUILDERS", "build_page", "build_report", "generic_page", "write_report_safely"]
