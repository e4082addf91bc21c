"""Prompt rendering for MAC: jinja2 templates in ``prompts/`` with strict variables.

Every prompt the MAC agents see is one template there (written for silicolab from the
paper's description of the roles, not copied from it). ``StrictUndefined`` turns a missing
template variable into an error instead of an empty string, so a typo cannot silently
drop the questions or the data sample from a prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from silicolab.core.templates import render_template

PROMPT_DIR = Path(__file__).with_name("prompts")


def render(name: str, **variables: Any) -> str:
    """Render ``prompts/<name>.j2`` with ``variables``; surrounding blank space is trimmed."""
    return render_template(PROMPT_DIR, name, **variables)
