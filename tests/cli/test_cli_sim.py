"""``silicolab sim run`` as a real subprocess."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_cli import run
from tests.support.cli import strict_json


def test_sim_run_examples_write_run_directories(tmp_path: Path) -> None:
    for name in ("auction", "bargaining", "market"):
        out = run(["sim", "run", name, "--json"], tmp_path)
        assert out.returncode == 0, (name, out.stderr)
        run_dir = tmp_path / strict_json(out.stdout)["run_dir"]
        for file in ("record.json", "report.md", "transcript.html"):
            assert (run_dir / file).is_file(), (name, file)
    bad = run(["sim", "run", "quidditch"], tmp_path)
    assert bad.returncode == 2 and "quidditch" in bad.stderr
    assert all(name in bad.stderr for name in ("auction", "bargaining", "market", "election"))
