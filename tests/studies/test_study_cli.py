"""``silicolab study`` as a user runs it: a real subprocess, real HTTP, kill -9 and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from silicolab.llm import load_model
from silicolab.runs import Run
from silicolab.studies import load_example, make_design
from silicolab.studies.conduct import arun_condition
from silicolab.studies.world import HiddenWorld
from tests.support.cli import EXE, strict_json
from tests.support.cli import private_cache_env as _env
from tests.support.openai_server import FakeLLMServer
from tests.support.world_server import world_server


def study(args: list[str], tmp_path: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*EXE, "study", *args],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_auction_rule_based_json(tmp_path):
    out = study(["run", "auction", "--subjects", "rule", "--yes", "--json"], tmp_path)
    assert out.returncode == 0, out.stderr
    summary = strict_json(out.stdout)
    assert summary["status"] == "finished" and summary["conditions"] == 343
    assert {p["rhs"] for p in summary["paths"]} == {"budget_1", "budget_2", "budget_3"}
    assert "no LLM calls" in out.stderr
    record = json.loads((Path(summary["run_dir"]) / "record.json").read_text())
    assert isinstance(record["runs"][0]["statements"], list)  # never double-encoded
    assert (Path(summary["run_dir"]) / "report.md").read_text().startswith("# Study: auction")


def test_list_examples_and_fit_of_a_finished_run(tmp_path):
    out = study(["list-examples", "--json", "--write", "examples"], tmp_path)
    assert out.returncode == 0
    sizes = {e["name"]: e["conditions"] for e in strict_json(out.stdout)["examples"]}
    assert sizes == {"mug": 405, "bail": 245, "lawyer": 80, "auction": 343}
    assert (tmp_path / "examples" / "mug.yaml").is_file()
    run = study(
        ["run", "--hypothesis", "examples/auction.yaml", "--subjects", "rule", "--json"], tmp_path
    )
    run_dir = strict_json(run.stdout)["run_dir"]
    fit = study(["fit", run_dir, "--interactions", "--json"], tmp_path)
    assert fit.returncode == 0, fit.stderr
    refit = strict_json(fit.stdout)
    assert any(":" in p["rhs"] for p in refit["paths"])  # interaction terms
    assert refit["tests"][0]["name"] == "main effects vs pairwise interactions"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--hypothesis", "bad.yaml", "--subjects", "rule"], "field variables[1]"),
        (["run", "nosuch", "--subjects", "rule"], "unknown example study 'nosuch'"),
        (["run", "mug", "--subjects", "rule"], "has no rule-based subjects"),
        (["run", "mug", "--subjects", "world", "--max-conditions", "100"], "above --max-"),
        (["run", "auction", "--subjects", "martians"], "martians"),
        (["run", "auction", "mug", "--subjects", "rule"], "Got unexpected extra argument"),
        (["run", "--subjects", "rule"], "name a built-in study"),
        (["hypothesis", ""], "scenario is empty"),
        (["run", "--resume", "--subjects", "rule"], "no study run under"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_no_run_directory(tmp_path, args, message):
    bad = load_example("mug").to_dict()
    bad["variables"][1]["type"] = "integer"
    (tmp_path / "bad.yaml").write_text(json.dumps(bad))
    out = study(args, tmp_path)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert message in out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_paid_run_needs_confirmation_and_respects_max_cost(tmp_path):
    (tmp_path / "silicolab.yaml").write_text(
        "models:\n  default:\n    spec: openai:gpt-4o-mini\n    base_url: http://127.0.0.1:9\n"
        "    prices: {input: 0.15, output: 0.6}\n"
    )
    out = study(["run", "mug"], tmp_path)
    assert (
        out.returncode == 2 and "add --yes" in out.stderr and "plan: 405 conditions" in out.stderr
    )
    out = study(["run", "mug", "--yes", "--max-cost", "0.01"], tmp_path)
    assert out.returncode == 2 and "above --max-cost" in out.stderr


def _world_server(hypothesis, latency_s: float) -> tuple[FakeLLMServer, HiddenWorld]:
    world = HiddenWorld(hypothesis, {"passed_bar": 0.6}, intercept=0.2, noise_sd=0.0)
    return world_server(world, latency_s=latency_s), world


def _texts(body: dict) -> str:
    return json.dumps(body["messages"], sort_keys=True)


def test_kill_9_then_resume_runs_each_condition_once_and_repeats_no_request(tmp_path):
    hypothesis = load_example("lawyer")
    server, world = _world_server(hypothesis, latency_s=0.02)
    # which requests each condition makes, from an in-process reference run
    recorded: dict[str, set[str]] = {}
    for condition in make_design(hypothesis).conditions:
        seen: list[str] = []

        def fn(request, seen=seen):
            seen.append(json.dumps(request.messages, sort_keys=True))
            return world(request)

        model = load_model("scripted", fn=fn)
        from silicolab.llm.base import run_sync

        run_sync(
            arun_condition(hypothesis, condition, subject_model=model, coordinator_model=model)
        )
        recorded[condition.id] = set(seen)
    args = [
        "run", "lawyer", "--yes", "--jobs", "4", "--json",
        "--model", "openai:fake-model", "--base-url",
    ]  # fmt: skip
    with server:
        proc = subprocess.Popen(
            [*EXE, "study", *args, server.base_url],
            cwd=tmp_path,
            env=_env(tmp_path),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        events = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = list((tmp_path / "runs").glob("*/events.jsonl"))
            if found and len(found[0].read_text().splitlines()) >= 15:
                events = found[0]
                break
            time.sleep(0.05)
        assert events is not None, "the run never finished 15 conditions"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        finished = {e["unit"] for e in Run.open(events.parent).events() if e["status"] == "ok"}
        assert 15 <= len(finished) < 80
        before = len(server.stats.requests_log)
        out = subprocess.run(
            [
                *EXE,
                "study",
                "run",
                "--resume",
                "--yes",
                "--json",
                "--model",
                "openai:fake-model",
                "--base-url",
                server.base_url,
            ],
            cwd=tmp_path,
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        after = [_texts(body) for body in server.stats.requests_log[before:]]
    unfinished = set().union(*(recorded[c] for c in recorded if c not in finished))
    assert after and all(text in unfinished for text in after)
    record = json.loads((events.parent / "record.json").read_text())
    ids = [r["condition_id"] for r in record["runs"]]
    assert len(ids) == 80 == len(set(ids))
    units = [e["unit"] for e in Run.open(events.parent).events() if e["status"] == "ok"]
    assert len(units) == len(set(units)) == 80


def test_predict_whose_every_reply_is_unusable_is_degraded_not_a_crash(tmp_path):
    run = study(["run", "auction", "--subjects", "rule", "--yes", "--json"], tmp_path)
    run_dir = strict_json(run.stdout)["run_dir"]
    with FakeLLMServer(reply="I cannot predict that.") as server:
        out = study(
            ["predict", run_dir, "--max-conditions", "3", "--json",
             "--model", "openai:fake-model", "--base-url", server.base_url],
            tmp_path,
        )  # fmt: skip
    assert out.returncode == 3, out.stderr
    assert "DEGRADED" in out.stderr and "worst unit predictions" in out.stderr
    written = json.loads((Path(run_dir) / "predictions.json").read_text())
    assert written["health"]["steps"] == 3 + 3 + 1  # predict-y, model LOO, predict-beta
    assert written["health"]["parse_failures"] == written["health"]["steps"]
    assert written["mse"]["predict_y"] is None and written["mse"]["loo_mechanical"] is not None
    assert '<section id="predictions">' in (Path(run_dir) / "report.html").read_text()
