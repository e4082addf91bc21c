"""``silicolab bench causalab`` as a real subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import run


def test_bench_causalab_reference_rows_beside_the_paper_and_resume(tmp_path: Path) -> None:
    args = [
        "bench",
        "causalab",
        "--suite",
        "3nodes..4nodes",
        "--episodes",
        "6",
        "--jobs",
        "2",
        "--json",
    ]
    out = run(args, tmp_path)
    assert out.returncode == 0, out.stderr
    rows = {r["suite"]: r for r in json.loads(out.stdout)["rows"]}
    assert set(rows) == {"3nodes", "4nodes"}
    for row in rows.values():
        assert row["episodes"] == 6 and row["accuracy"] == 100.0 and row["all_edge_f1"] == 1.0
        assert row["published_accuracy"] is not None  # the paper's anchor for the same suite
    run_dir = tmp_path / json.loads(out.stdout)["run_dir"]
    assert len((run_dir / "events.jsonl").read_text().splitlines()) == 12
    again = run([*args, "--resume"], tmp_path)
    assert again.returncode == 0, again.stderr
    assert len((run_dir / "events.jsonl").read_text().splitlines()) == 12  # nothing rerun
    assert "| 4nodes |" in (run_dir / "report.md").read_text()


def test_bench_causalab_bad_input(tmp_path: Path) -> None:
    for args, fragment in [
        (["bench", "causalab", "--suite", "9nodes"], "unknown suite"),
        (["bench", "causalab", "--agent", "llm"], "needs --model"),
        (["bench", "causalab", "--agent", "genius"], "use reference, random or llm"),
    ]:
        out = run(args, tmp_path)
        assert out.returncode == 2, (args, out.stderr)
        assert fragment in out.stderr and len(out.stderr.strip().splitlines()) == 1
