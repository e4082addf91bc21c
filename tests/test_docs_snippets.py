"""The Python examples in README.md and docs/*.md run, offline, as written.

Every fenced ```` ```python ```` block is one test: it runs in a fresh namespace (as
``__main__``), in a temporary working directory, with no user settings (``SILICOLAB_*``
removed, a private LLM cache). A block of ``>>>`` lines is checked with :mod:`doctest`
instead (its outputs must match). A block guarded by ``if __name__ == "__main__":`` (worker
processes must import its functions) runs as a script in a subprocess.

Two markers, an HTML comment on the line before the fence (blank lines between allowed):

- ``<!-- no-test: why -->``: the block cannot run offline (a paid model, your own files,
  a placeholder signature); the reason is required, and the blocks left out are reported
  as one number (the ``test_blocks_left_out`` skip), never silently;
- ``<!-- test: continues -->``: the block runs in the namespace left by the previous
  tested block of the same file (a page that builds one example step by step).
"""

from __future__ import annotations

import ast
import doctest
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import silicolab

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
_MARKER = re.compile(r"^\s*<!--\s*(no-test|test)\s*:?\s*(.*?)\s*-->\s*$")


@dataclass
class Block:
    """One fenced python block: where it is, its code, and its marker."""

    page: Path
    line: int  # of the opening fence, 1-based
    code: str
    skip: str | None = None  # the no-test reason
    continues: bool = False
    previous: Block | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        page = self.page.relative_to(REPO) if self.page.is_relative_to(REPO) else self.page
        return f"{page}:{self.line}"


def _marker(lines: list[str], fence: int) -> tuple[str, str] | None:
    """The marker comment before line index ``fence`` (skipping blank lines), if any."""
    i = fence - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    match = _MARKER.match(lines[i]) if i >= 0 else None
    return (match.group(1), match.group(2)) if match else None


def blocks(page: Path) -> list[Block]:
    """The python blocks of ``page``, in order, each linked to the previous tested one."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    last_tested: Block | None = None
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening or not opening.group(2):
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip().startswith("```"))
        if opening.group(2) == "python":
            block = Block(page, i + 1, textwrap.dedent("\n".join(lines[i + 1 : end])) + "\n")
            marker = _marker(lines, i)
            if marker and marker[0] == "no-test":
                block.skip = marker[1]
            elif marker and marker[1] == "continues":
                block.continues, block.previous = True, last_tested
            if block.skip is None:
                last_tested = block
            found.append(block)
        i = end + 1
    return found


ALL = [b for page in PAGES for b in blocks(page)]
TESTED = [b for b in ALL if b.skip is None]


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temp cwd, no ``SILICOLAB_*`` settings, a private LLM cache; no API keys, and
    HTTP(S) beyond 127.0.0.1 goes to a proxy that is not there (the closed discard port)."""
    for name in [n for n in os.environ if n.startswith("SILICOLAB_") or n.endswith("_API_KEY")]:
        monkeypatch.delenv(name)
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
        monkeypatch.setenv(name.upper(), "http://127.0.0.1:9")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("SILICOLAB_CACHE", str(tmp_path / "llm-cache.sqlite"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(block: Block, namespace: dict[str, Any]) -> None:
    """Execute ``block`` in ``namespace`` (top-level ``await`` allowed)."""
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    code = compile(block.code, block.name, "exec", flags=flags)
    result = eval(code, namespace)
    if result is not None:  # a coroutine: the block awaits at top level
        import asyncio

        asyncio.run(result)


def _namespace(block: Block) -> dict[str, Any]:
    """A fresh namespace, or the one the block continues (its chain run first)."""
    if not block.continues:
        return {"__name__": "__main__"}
    if block.previous is None:
        raise AssertionError(f"{block.name}: 'continues' but no tested block before it")
    namespace = _namespace(block.previous)
    _run(block.previous, namespace)
    return namespace


def _doctest(block: Block) -> None:
    test = doctest.DocTestParser().get_doctest(block.code, {}, block.name, block.name, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, f"{block.name}: {runner.failures} doctest example(s) failed"


def _script(block: Block, cwd: Path) -> None:
    script = cwd / "snippet.py"
    script.write_text(block.code, encoding="utf-8")
    source = str(Path(silicolab.__file__).resolve().parent.parent)  # the tests' silicolab
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, str(script)], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, f"{block.name} failed:\n{out.stderr[-3000:]}"


@pytest.mark.parametrize("block", TESTED, ids=[b.name for b in TESTED])
def test_python_block_runs(block: Block, offline: Path) -> None:
    if block.code.lstrip().startswith(">>>"):
        _doctest(block)
    elif 'if __name__ == "__main__":' in block.code:
        _script(block, offline)
    else:
        _run(block, _namespace(block))


def test_markers_give_reasons_and_are_used() -> None:
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            match = _MARKER.match(line)
            if not match:
                continue
            where = f"{page.relative_to(REPO)}:{i + 1}"
            kind, text = match.groups()
            assert kind == "no-test" or text == "continues", f"{where}: unknown marker"
            assert text, f"{where}: say why the block cannot run offline"
            following = next((x for x in lines[i + 1 :] if x.strip()), "")
            assert following.strip() == "```python", f"{where}: a marker precedes a ```python"
    assert TESTED, "no python block found in README.md or docs/"


def test_most_blocks_run() -> None:
    """At least half of the docs' python blocks run offline (38 of 63 when this was
    written): a page that marks its examples no-test instead of making them runnable
    fails here, with the count."""
    left_out = len(ALL) - len(TESTED)
    assert len(TESTED) >= len(ALL) / 2, (
        f"{left_out} of {len(ALL)} python blocks in the docs are marked no-test"
    )


def test_the_parser_reads_markers_and_a_wrong_block_fails(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nx = 1\n```\n\n<!-- no-test: needs a key -->\n```python\nraise SystemExit\n```"
        "\n<!-- test: continues -->\n\n```python\nassert x == 2, x\n```\n```bash\nls\n```\n",
        encoding="utf-8",
    )
    first, untested, third = blocks(page)
    assert (first.skip, untested.skip, third.skip) == (None, "needs a key", None)
    assert third.continues and third.previous is first  # the untested block is passed over
    with pytest.raises(AssertionError, match="1"):
        _run(third, _namespace(third))  # x comes from the first block, and is not 2
