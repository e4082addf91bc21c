"""Plausible bad input: one line on stderr, exit 2, and no run directory created."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.reliability.support import cli, one_line


def _files(folder: Path) -> None:
    rng = np.random.default_rng(0)
    x, z = rng.normal(size=200), rng.normal(size=200)
    rows = "\n".join(f"{a},{a},{c}" for a, c in zip(x, z, strict=True))
    (folder / "twins.csv").write_text(f"a,b,c\n{rows}\n")
    (folder / "header_only.csv").write_text("a,b,c\n")
    (folder / "semicolons.csv").write_text("a;b;c\n1;2;3\n4;5;6\n")
    (folder / "a_folder").mkdir()


CASES = [
    (["demo", "--seed", "-1"], "--seed"),
    (["sim", "run", "bargaining", "--seed", "-1"], "--seed"),
    (["discover", "--dataset", "auto_mpg", "--seed", "-1"], "--seed"),
    (["discover", "--dataset", "auto_mpg", "-p", "alpha=abc"], "alpha must be a number"),
    (["discover", "--dataset", "auto_mpg", "-p", "max_k=abc"], "max_k must be an integer"),
    (["discover", "--data", "twins.csv", "--method", "pc"], "['a', 'b']"),
    (["discover", "--data", "header_only.csv"], "no data rows"),
    (["discover", "--data", "semicolons.csv"], "separated by semicolons"),
    (["discover", "--data", "a_folder"], "is a folder"),
    (["discover", "--dataset", "auto_mpg", "--runs-dir", "/proc/nope"], "/proc/nope"),
    (["sim", "run", "market", "--runs-dir", "/proc/nope"], "/proc/nope"),
    (["demo", "--runs-dir", "/proc/nope"], "/proc/nope"),
    (["discover", "--dataset", "auto_mpg", "--bogus"], "No such option: --bogus"),
    (["sim", "run", "quidditch"], "unknown simulation 'quidditch'"),
    (["sim", "run", "market", "--model", "openai:x"], "needs none"),
    (["discover", "--resume"], "no discover run"),
    (["sim", "run", "market", "--resume"], "no sim run"),
]


@pytest.mark.parametrize(("args", "fragment"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_bad_input_is_one_line_exit_2_and_no_run_directory(
    tmp_path: Path, args: list[str], fragment: str
) -> None:
    _files(tmp_path)
    out = cli(args, tmp_path)
    assert out.returncode == 2, (out.stdout, out.stderr)
    line = one_line(out.stderr)
    assert line.startswith("error: ") and fragment in line, line
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
