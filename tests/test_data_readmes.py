"""The READMEs shipped with package data name only files that exist (issue 25, item 8: the
CausaLab data README pointed at a spec file, ``../../specs/causalab.md``, that was never
there).

A quoted file name is checked when it is meant as ours: a bare name (a file beside the
README), a relative path (``./``, ``../``) from the README, or a repository path
(``docs/``, ``src/``, ``tests/``). Other paths name files in upstream repositories."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
READMES = sorted(p for p in (ROOT / "src" / "silicolab").rglob("*.md") if "data" in p.parts)
_QUOTED = re.compile(r"`([^`\s]+)`")
_FILE = re.compile(r"[\w./-]*\w\.(md|txt|json|jsonl|csv)")
_REPOSITORY = ("docs/", "src/", "tests/")


def _missing(readme: Path) -> list[str]:
    missing = []
    for name in _QUOTED.findall(readme.read_text(encoding="utf-8")):
        if not _FILE.fullmatch(name):
            continue
        if name.startswith(_REPOSITORY):
            found = (ROOT / name).exists()
        elif "/" not in name or name.startswith(("./", "../")):
            found = (readme.parent / name).exists()
        else:
            continue
        if not found:
            missing.append(name)
    return missing


def test_there_are_data_readmes() -> None:
    assert any(p.name == "README.md" for p in READMES)


@pytest.mark.parametrize("readme", READMES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_a_data_readme_names_exists(readme: Path) -> None:
    missing = _missing(readme)
    assert not missing, f"{readme.relative_to(ROOT)} names files that do not exist: {missing}"
