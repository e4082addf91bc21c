"""Prompt rendering for MAC: jinja2 templates in ``prompts/`` with strict variables.

Every prompt the MAC agents see is one template there (written for silicolab from the
paper's description of the roles, not copied from it). ``StrictUndefined`` turns a missing
template variable into an error instead of an empty string, so a typo cannot silently
drop the questions or the data sample from a prompt.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2

PROMPT_DIR = Path(__file__).with_name("prompts")


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(PROMPT_DIR)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        autoescape=False,
    )


def render(name: str, **variables: Any) -> str:
    """Render ``prompts/<name>.j2`` with ``variables``; surrounding blank space is trimmed."""
    return _environment().get_template(f"{name}.j2").render(**variables).strip()
