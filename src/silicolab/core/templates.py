"""Prompt templates: jinja2 files rendered with strict variables.

Every package that talks to a language model keeps its prompts as ``.j2`` files in a
``prompts/`` folder. ``StrictUndefined`` turns a missing variable into an error instead
of an empty string, so a typo cannot silently drop part of a prompt; blocks are trimmed
so a template's control lines leave no blank lines behind.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any


@cache
def _environment(directory: Path) -> Any:
    import jinja2  # here, not at import: the CLI's --help stays light

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(directory)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def render_template(directory: Path, name: str, /, **values: Any) -> str:
    """Render ``directory/<name>.j2`` with ``values`` (which may themselves hold a
    ``name``); surrounding blank space is trimmed."""
    return _environment(Path(directory)).get_template(f"{name}.j2").render(**values).strip()


__all__ = ["render_template"]
