"""``silicolab`` as a subprocess, the way the CLI tests run it: the command line and an
environment with no user settings (``SILICOLAB_*`` removed) and this checkout's source on
``PYTHONPATH``; and the strict JSON checks every ``--json`` output and every file the suite
writes must pass (:func:`strict_json`, :func:`json_problems`).

JSON has no ``NaN``, ``Infinity`` or ``-Infinity``. Python's :mod:`json` writes and reads
them anyway, so a test that parses with ``json.loads`` never notices a record that
JavaScript's ``JSON.parse`` and most JSON libraries refuse. The parser here refuses them.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import silicolab

SRC = str(Path(silicolab.__file__).resolve().parent.parent)
EXE = [sys.executable, "-m", "silicolab.cli.app"]


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment without ``SILICOLAB_*``, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SILICOLAB_")}
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra or {})
    return env


def private_cache_env(folder: Path) -> dict[str, str]:
    """:func:`cli_env` with an LLM cache of its own in ``folder``."""
    return cli_env({"SILICOLAB_CACHE_PATH": str(folder / "cache.sqlite")})


#: The tokens Python's json module accepts and strict JSON does not.
NON_STRICT_TOKENS = ("NaN", "Infinity", "-Infinity")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_TOKEN = re.compile(r"-?Infinity|NaN")


class NonStrictJSONError(AssertionError):
    """Text that parses as JSON only because Python's json module accepts ``NaN`` and
    ``±Infinity``: ``token`` is the first such token, ``where`` says where it is."""

    def __init__(self, token: str, where: str, source: str = "the text") -> None:
        self.token, self.where, self.source = token, where, source
        super().__init__(f"{source} is not strict JSON: {token} at {where}")


def _refuse(token: str) -> Any:
    raise NonStrictJSONError(token, "?")


def _locate(text: str, token: str) -> str:
    """``line L, column C: …context…`` of the first ``token`` outside a JSON string."""
    blanked = _STRING.sub(lambda m: '"' + " " * (len(m.group()) - 2) + '"', text)
    found = _TOKEN.search(blanked)
    if found is None:
        return "an unknown position"
    start = found.start()
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    context = text[max(0, start - 40) : found.end() + 20].replace("\n", " ")
    return f"line {line}, column {column}: ...{context}..."


def strict_json(text: str, *, source: str = "the JSON output") -> Any:
    """``text`` parsed as strict JSON: ``NaN``, ``Infinity`` or ``-Infinity`` anywhere
    raises :class:`NonStrictJSONError` naming the token and where it is (use it for every
    ``--json`` stdout a test reads)."""
    try:
        return json.loads(text, parse_constant=_refuse)
    except NonStrictJSONError as exc:
        raise NonStrictJSONError(exc.token, _locate(text, exc.token), source) from None


def json_problems(root: Path, *, skip: Iterable[Path] = ()) -> list[str]:
    """One line per ``*.json`` file and per ``*.jsonl`` line under ``root`` that Python's
    lenient parser reads but a strict parser refuses (a ``NaN`` or ``±Infinity``): the file,
    the line and the token. Folders under ``skip`` are left out. Text that is not JSON at
    all (a torn last line after a kill, a test's deliberately broken file) is not reported:
    this checks that what the suite writes as JSON is strict, not that every file parses."""
    root = Path(root)
    skipped = [Path(p).resolve() for p in skip]
    problems: list[str] = []
    if not root.is_dir():
        return problems
    for path in sorted([*root.rglob("*.json"), *root.rglob("*.jsonl")]):
        resolved = path.resolve()
        if not path.is_file() or any(resolved.is_relative_to(s) for s in skipped):
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue  # removed by a background process since the listing
        chunks = text.splitlines() if path.suffix == ".jsonl" else [text]
        for number, chunk in enumerate(chunks, start=1):
            problem = _chunk_problem(chunk)
            if problem is not None and path.suffix == ".jsonl":  # one line: its column
                problems.append(f"{path} line {number}: {problem.replace('line 1, ', '', 1)}")
            elif problem is not None:
                problems.append(f"{path}: {problem}")
    return problems


def _chunk_problem(chunk: str) -> str | None:
    """What is wrong with one JSON document, or ``None`` (also for text that is no JSON)."""
    if not chunk.strip():
        return None
    try:
        strict_json(chunk)
    except NonStrictJSONError as exc:
        return f"{exc.token} at {exc.where}"
    except ValueError:
        return None  # not JSON at all, not even for the lenient parser
    return None


__all__ = [
    "EXE",
    "NON_STRICT_TOKENS",
    "SRC",
    "NonStrictJSONError",
    "cli_env",
    "json_problems",
    "private_cache_env",
    "strict_json",
]
