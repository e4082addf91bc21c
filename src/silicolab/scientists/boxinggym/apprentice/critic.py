"""The critic: compares a fitted program's predictions with the data (spec §14).

Its reply holds two fenced blocks, ```Hypotheses``` and ```Synthesis```; both are fed to
the next proposal and to the scientist's system message.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from silicolab.scientists.templates import render_template

PROMPTS = Path(__file__).parent / "prompts"


def render(name: str, **values: Any) -> str:
    """Render one of the apprentice's prompt templates (missing variables are errors)."""
    return render_template(PROMPTS, name, **values).strip()


@dataclass
class Criticism:
    """The critic's hypotheses and synthesis (empty when it gave none) and its raw reply."""

    hypotheses: str = ""
    synthesis: str = ""
    raw: str = ""

    def to_dict(self) -> dict[str, str]:
        """JSON-ready record."""
        return asdict(self)


def extract_block(text: str, name: str) -> str:
    """The body of the fenced block labelled ``name`` (case-insensitive), or ""."""
    match = re.search(rf"```\s*{name}\s*\n(.*?)```", text, re.DOTALL | re.IGNORECASE)
    return match.group(1).strip() if match else ""


def parse_criticism(text: str) -> Criticism:
    """The two blocks of a critic's reply."""
    return Criticism(extract_block(text, "hypotheses"), extract_block(text, "synthesis"), text)
