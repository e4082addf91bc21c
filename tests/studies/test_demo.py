"""``silicolab demo``: the offline study end to end, resumable, served from the cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.cli import strict_json

EXE = [sys.executable, "-m", "silicolab.cli.app"]


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SILICOLAB_")}
    return subprocess.run(
        [*EXE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_demo_runs_a_study_end_to_end_and_reruns_from_the_cache(tmp_path: Path) -> None:
    first = run(["demo", "--conditions", "120", "--json"], tmp_path)
    assert first.returncode == 0, first.stderr
    summary = strict_json(first.stdout)
    run_dir = tmp_path / summary["run_dir"]
    for name in ("run.json", "events.jsonl", "record.json", "report.md", "hypothesis.yaml"):
        assert (run_dir / name).is_file(), name
    assert summary["status"] == "finished" and summary["conditions"] == 120
    # hypothesis step: the scientist's decisions are recorded with explanations
    record = json.loads((run_dir / "record.json").read_text())
    assert summary["decisions"] == len(record["decisions"]) > 10
    assert all(d["explanation"] for d in record["decisions"])
    # runs and survey: one event per condition, each once
    units = [
        json.loads(line)["unit"] for line in (run_dir / "events.jsonl").read_text().splitlines()
    ]
    conditions = [u for u in units if u.startswith("c-")]
    assert len(conditions) == len(set(conditions)) == 120
    # fit: the budgets' effects are found, the attachment's (truth 0) is not significant;
    # every true effect (on the probability of a deal, what the fit estimates) is inside
    # its 95 % interval
    paths = {p["rhs"]: p for p in summary["paths"]}
    assert paths["buyer_budget"]["p"] < 0.01 and paths["seller_min_price"]["p"] < 0.01
    assert paths["buyer_budget"]["est"] > 0 > paths["seller_min_price"]["est"]
    assert summary["truth"]["scale"] == "probability of 'yes'"
    for cause, truth in summary["truth"]["effects"].items():
        assert paths[cause]["ci_low"] <= truth <= paths[cause]["ci_high"], cause
    # predictions were scored; mechanical LOO is far better than the scripted guesses
    assert summary["predictions"]["loo_mechanical"] < summary["predictions"]["predict_y"]
    # follow-on: non-significant causes dropped, new ones proposed and tested
    follow = summary["follow_on"]
    assert follow["dropped"] == [p["rhs"] for p in summary["paths"] if p["p"] >= 0.05]
    assert follow["added"] and set(follow["dropped"]).isdisjoint(follow["added"])
    assert {p["rhs"] for p in follow["paths"]} >= set(follow["added"])
    assert summary["causalab"]["accuracy"] == 100.0
    assert "| buyer_budget |" in (run_dir / "report.md").read_text()
    # a second demo is served from the LLM cache: no scripted call is made again
    second = strict_json(run(["demo", "--conditions", "120", "--json"], tmp_path).stdout)
    for role, ledger in second["ledger"].items():
        assert ledger["cache_hits"] == ledger["calls"], role
    assert second["paths"] == summary["paths"]


def test_demo_resume_reuses_stored_settings_and_refuses_contradictions(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    first = run(["demo", "--conditions", "40", "--seed", "3", "--json"], tmp_path)
    assert first.returncode == 0, first.stderr
    again = run(["demo", "--resume", "--json"], tmp_path)
    assert again.returncode == 2 and "is finished" in again.stderr
    info = json.loads((tmp_path / strict_json(first.stdout)["run_dir"] / "run.json").read_text())
    info["status"] = "interrupted"
    (tmp_path / strict_json(first.stdout)["run_dir"] / "run.json").write_text(json.dumps(info))
    refused = run(["demo", "--resume", "--seed", "4"], tmp_path)
    assert refused.returncode == 2 and "seed=4 (stored: 3)" in refused.stderr
    resumed = run(["demo", "--resume", "--json"], tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert strict_json(resumed.stdout)["conditions"] == 40
