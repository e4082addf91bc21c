"""``silicolab bench causalab`` as a real subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import run
from tests.support.cli import strict_json


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
    rows = {r["suite"]: r for r in strict_json(out.stdout)["rows"]}
    assert set(rows) == {"3nodes", "4nodes"}
    for row in rows.values():
        assert row["episodes"] == 6 and row["accuracy"] == 100.0 and row["all_edge_f1"] == 1.0
        assert row["published_accuracy"] is not None  # the paper's anchor for the same suite
    run_dir = tmp_path / strict_json(out.stdout)["run_dir"]
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


def test_bench_causalab_resume_uses_the_stored_settings(tmp_path: Path) -> None:
    args = ["bench", "causalab", "--suite", "3nodes", "--episodes", "3", "--jobs", "1", "--json"]
    out = run(args, tmp_path)
    assert out.returncode == 0, out.stderr
    run_dir = tmp_path / strict_json(out.stdout)["run_dir"]
    info = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps({**info, "status": "interrupted"}))
    refused = run(["bench", "causalab", "--resume", "--episodes", "1"], tmp_path)
    assert refused.returncode == 2 and "episodes=1 (stored: 3)" in refused.stderr
    again = run(["bench", "causalab", "--resume", "--json"], tmp_path)  # the stored experiment
    assert again.returncode == 0, again.stderr
    assert strict_json(again.stdout)["rows"][0]["episodes"] == 3
    assert len((run_dir / "events.jsonl").read_text().splitlines()) == 3  # nothing rerun
    finished = (run_dir / "record.json").read_text()
    refused = run(["bench", "causalab", "--resume", "--episodes", "1"], tmp_path)
    assert refused.returncode == 2 and (run_dir / "record.json").read_text() == finished


def test_bench_causalab_checks_fixed_values_before_any_run_dir(tmp_path: Path) -> None:
    for args, fragment in [
        (["--verify", "sometimes"], "--verify sometimes: use one of"),
        (["--fidelity", "exact"], "--fidelity exact: use one of"),
    ]:
        out = run(["bench", "causalab", "--runs-dir", "runs", *args], tmp_path)
        assert out.returncode == 2 and fragment in out.stderr, out.stderr
    assert not (tmp_path / "runs").exists()


def test_bench_causalab_with_a_model_that_never_parses_is_degraded(tmp_path: Path) -> None:
    args = ["bench", "causalab", "--agent", "llm", "--model", "scripted", "--suite", "3nodes"]
    out = run([*args, "--episodes", "1", "--json"], tmp_path)
    assert out.returncode == 3, out.stderr
    assert out.stderr.startswith("DEGRADED: 1 of 1 units failed every step")
    summary = strict_json(out.stdout)
    assert summary["status"] == "degraded"
    info = json.loads((tmp_path / summary["run_dir"] / "run.json").read_text())
    assert info["status"] == "degraded" and info["health"]["parse_failures"] > 0
