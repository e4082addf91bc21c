"""Render a :class:`~silicolab.report.html.blocks.Page` into one self-contained HTML file.

One Jinja2 template (``templates/page.html.j2``) with autoescape on: every string from a
record (agent statements, LLM explanations, variable names) is escaped; only the package's
own CSS and JavaScript (``assets/``) are inserted as they are. Figures are SVG data URIs,
so the page needs no other file and makes no network request.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from silicolab.core.files import dumps
from silicolab.report.html.blocks import Page
from silicolab.report.tables import format_cell

_PACKAGE = "silicolab.report.html"


def cell(value: Any) -> str:
    """A value as table text: lists joined, mappings as compact JSON, numbers by
    :func:`silicolab.report.tables.format_cell`."""
    if isinstance(value, list | tuple):
        return ", ".join(cell(v) for v in value)
    if isinstance(value, dict):
        return dumps(value, ensure_ascii=False)
    if isinstance(value, float) and value != 0 and abs(value) < 0.001:
        return f"{value:.2e}"
    return format_cell(value)


@cache
def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader(_PACKAGE, "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["cell"] = cell
    return env


@cache
def asset(name: str) -> str:
    """The text of a file in the package's ``assets/`` folder."""
    return resources.files(_PACKAGE).joinpath("assets", name).read_text(encoding="utf-8")


def render_page(page: Page, *, run_name: str, link_prefix: str = "") -> str:
    """The HTML text of ``page``; ``link_prefix`` leads from where the page is written to
    the run directory (the figure files' links are relative to it)."""
    from silicolab import __version__

    template = _environment().get_template("page.html.j2")
    return template.render(
        page=page,
        run_name=run_name,
        link_prefix=link_prefix,
        version=__version__,
        css=asset("report.css"),
        js=asset("report.js"),
    )


__all__ = ["asset", "cell", "render_page"]
