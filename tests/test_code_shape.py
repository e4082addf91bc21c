"""The code's shape limits (docs/architecture.md, "Style"): small modules and functions.

A module of ``src/silicolab`` has at most 500 lines and a function or method at most 80,
so each reads in one sitting; a change that grows past either splits the code by job.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "silicolab"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
MODULES = sorted(SRC.rglob("*.py"))


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
    return [node for node in ast.walk(tree) if isinstance(node, kinds)]


def test_the_package_is_found() -> None:
    assert len(MODULES) > 100, SRC


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_module_and_function_sizes(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    lines = len(text.splitlines())
    assert lines <= MAX_MODULE_LINES, f"{path.name} has {lines} lines: split it by job"
    long = [
        f"{fn.name} ({fn.end_lineno - fn.lineno + 1} lines, line {fn.lineno})"
        for fn in _functions(ast.parse(text))
        if fn.end_lineno is not None and fn.end_lineno - fn.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, f"{path.name}: functions over {MAX_FUNCTION_LINES} lines: {long}"
