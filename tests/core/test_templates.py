"""Prompt templates render strictly: a missing variable is an error, not a blank."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from silicolab.core.templates import render_template


def test_render_trims_and_refuses_missing_variables(tmp_path: Path) -> None:
    (tmp_path / "ask.j2").write_text("\n{% if loud %}\nHELLO {{ name }}!\n{% endif %}\n\n")
    assert render_template(tmp_path, "ask", loud=True, name="Ada") == "HELLO Ada!"
    with pytest.raises(jinja2.UndefinedError):
        render_template(tmp_path, "ask", loud=True)
