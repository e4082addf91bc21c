"""Prompt templates of the scientists: one strict jinja2 environment per prompts folder.

Every LLM scientist keeps its prompts as ``*.j2`` files beside its module; a template that
names a variable the caller did not pass is an error (``StrictUndefined``), never a silent
blank, and no output is HTML-escaped (prompts are plain text).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported on first render: workers that render no prompt never load it
    import jinja2


@cache
def _environment(directory: Path, keep_trailing_newline: bool) -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(directory),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=keep_trailing_newline,
        autoescape=False,
    )


def render_template(
    directory: Path, name: str, *, keep_trailing_newline: bool = False, **values: Any
) -> str:
    """Render the template ``name`` from ``directory`` (a missing variable is an error);
    ``keep_trailing_newline`` keeps the file's final newline in the text."""
    return _environment(directory, keep_trailing_newline).get_template(name).render(**values)
