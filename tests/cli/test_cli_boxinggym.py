"""``silicolab bench boxinggym`` as a real subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import run
from tests.support.cli import strict_json


def test_bench_boxinggym_rows_beside_the_paper_and_resume(tmp_path: Path) -> None:
    args = ["bench", "boxinggym", "--env", "death_process", "--seeds", "1", "--json"]
    out = run(args, tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    (row,) = strict_json(out.stdout)["rows"]
    assert (row["env"], row["goal"], row["seeds"]) == ("death_process", "direct", 1)
    assert row["after"] < 0 and row["regret"] >= -0.05  # beats the prior mean; regret ~ 0
    # fixed mode asks about a named time and estimates EIG its own way: no paper number beside
    assert row["paper_before"] is None and row["paper_regret"] is None
    assert "names the time" in row["paper_not_comparable"]
    run_dir = tmp_path / strict_json(out.stdout)["run_dir"]
    events = (run_dir / "events.jsonl").read_text().splitlines()
    again = run([*args, "--resume"], tmp_path, timeout=300)
    assert again.returncode == 0, again.stderr
    assert (run_dir / "events.jsonl").read_text().splitlines() == events  # nothing rerun


def test_bench_boxinggym_bad_input(tmp_path: Path) -> None:
    for args, fragment in [
        (["bench", "boxinggym", "--agent", "llm"], "needs --model"),
        (["bench", "boxinggym", "--agent", "oracle"], "use reference"),
        (["bench", "boxinggym", "--env", "quidditch", "--seeds", "1"], "quidditch"),
    ]:
        out = run(args, tmp_path)
        assert out.returncode == 2, (args, out.stderr)
        assert fragment in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_participant_words_come_from_the_configured_model(tmp_path: Path) -> None:
    args = [
        "bench",
        "boxinggym",
        "--env",
        "moral_machines",
        "--seeds",
        "1",
        "--participant-model",
        "scripted",
        "--json",
    ]
    out = run(args, tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    run_dir = tmp_path / strict_json(out.stdout)["run_dir"]
    (event,) = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    utterances = event["data"]["record"]["truth"]["utterances"]
    assert utterances and {u["source"] for u in utterances} == {"llm"}


def test_bench_boxinggym_resume_refuses_typed_options_that_differ(tmp_path: Path) -> None:
    from silicolab.runs import lock, open_run

    stored = {
        "env": "dugongs,irt,survival",
        "agent": "reference",
        "model": None,
        "seeds": 3,
        "prior": True,
        "communicate": False,
        "participant_model": None,
        "fidelity": "fixed",
    }
    left, _ = open_run(tmp_path / "runs", "bench-boxinggym", settings=stored)  # unfinished
    lock.release(left.path)  # as if the process that made it had ended
    out = run(["bench", "boxinggym", "--resume", "--env", "dugongs", "--seeds", "1"], tmp_path)
    assert out.returncode == 2, out.stderr
    assert "env=dugongs (stored: dugongs,irt,survival)" in out.stderr
    assert "seeds=1 (stored: 3)" in out.stderr


def test_bench_boxinggym_old_agent_name_still_works(tmp_path: Path) -> None:
    out = run(["bench", "boxinggym", "--agent", "boed", "--env", "oops"], tmp_path)
    assert out.returncode == 2 and "now called reference" in out.stderr
