"""The examples in docs/scm.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "scm.md"


def test_documentation_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 10
    namespace: dict[str, object] = {}
    for number, block in enumerate(blocks):
        exec(compile(block, f"{DOC.name} block {number}", "exec"), namespace)
