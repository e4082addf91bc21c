"""``silicolab sim list`` and ``sim run NAME|FILE.yaml`` as real subprocesses: listing,
copying a world to edit, running the copy, kill -9 and resume, and a model that keeps
failing (a degraded run, never "ok")."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.cli.test_cli import EXE, run
from tests.support.cli import strict_json
from tests.support.openai_server import FakeLLMServer

from silicolab.sim.simulation import Simulation
from silicolab.sim.worlds import world_names


def test_sim_list_shows_every_built_in_world(tmp_path: Path) -> None:
    out = run(["sim", "list", "--json"], tmp_path)
    assert out.returncode == 0, out.stderr
    listed = strict_json(out.stdout)["worlds"]
    assert [w["name"] for w in listed] == world_names()
    assert all(w["description"] for w in listed)
    table = run(["sim", "list"], tmp_path)
    assert all(name in table.stdout for name in world_names())


def test_a_copied_world_runs_from_its_file_with_the_same_outcome(tmp_path: Path) -> None:
    wrote = run(["sim", "run", "election", "--write", "mine.yaml"], tmp_path)
    assert wrote.returncode == 0 and "mine.yaml" in wrote.stdout, wrote.stderr
    again = run(["sim", "run", "election", "--write", "mine.yaml"], tmp_path)
    assert again.returncode == 0  # the same text: nothing to protect
    (tmp_path / "mine.yaml").write_text((tmp_path / "mine.yaml").read_text() + "# edited\n")
    kept = run(["sim", "run", "election", "--write", "mine.yaml"], tmp_path)
    assert kept.returncode == 2 and "--force" in kept.stderr
    by_name = strict_json(run(["sim", "run", "election", "--json"], tmp_path).stdout)
    by_file = strict_json(run(["sim", "run", "mine.yaml", "--json"], tmp_path).stdout)
    assert (
        by_name["final_state"]
        == by_file["final_state"]
        == {
            "votes": {"Alice": 2, "Bob": 1},
            "rumour_believed": {"Carol": False, "Dan": False, "Erin": False},
        }
    )
    run_dir = tmp_path / by_file["run_dir"]
    for name in ("outcome.csv", "timeline.csv", "report.html", "transcript.html"):
        assert (run_dir / name).is_file(), name
    assert (run_dir / "outcome.csv").read_text().splitlines()[0] == "entity,votes,rumour_believed"
    stored = json.loads((run_dir / "run.json").read_text())["config"]["simulation"]
    assert Simulation.from_yaml(stored) == Simulation.load(tmp_path / "mine.yaml")


def _reply(body: dict[str, Any]) -> str:
    """Choices: the first option; anything else: the echo of the last user message."""
    last = body["messages"][-1]["content"]
    text = last if isinstance(last, str) else json.dumps(last)
    return '{"choice": 1}' if "Options:" in text else f"{text.splitlines()[-1][:80]}"


def _sim(args: list[str], cwd: Path, url: str) -> list[str]:
    model = ["--model", "openai:fake-model", "--base-url", url, "--api-key-env", "FAKE_KEY"]
    return [*EXE, "sim", "run", "election", *model, "--runs-dir", "runs", *args]


def test_kill_9_mid_world_and_resume_gives_the_uninterrupted_log(tmp_path: Path) -> None:
    env = {**os.environ, "FAKE_KEY": "k"}
    with FakeLLMServer(reply=_reply, latency_s=0.05) as server:
        whole_dir, killed_dir = tmp_path / "whole", tmp_path / "killed"
        whole_dir.mkdir(), killed_dir.mkdir()
        done = subprocess.run(_sim(["--json"], whole_dir, server.base_url), cwd=whole_dir,
                              env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr
        whole = json.loads(next((whole_dir / "runs").glob("*/record.json")).read_text())
        proc = subprocess.Popen(_sim([], killed_dir, server.base_url), cwd=killed_dir, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            found = list((killed_dir / "runs").glob("*/checkpoint.json"))
            if found and json.loads(found[0].read_text() or "{}").get("step", 0) >= 2:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert not list((killed_dir / "runs").glob("*/record.json")), "killed too late"
        resumed = subprocess.run(_sim(["--resume", "--json"], killed_dir, server.base_url),
                                 cwd=killed_dir, env=env, capture_output=True, text=True,
                                 timeout=300)  # fmt: skip
        assert resumed.returncode == 0, resumed.stderr
    record = json.loads(next((killed_dir / "runs").glob("*/record.json")).read_text())
    assert record["log"] == whole["log"]
    assert record["final_state"] == whole["final_state"]


def test_a_world_whose_model_keeps_failing_ends_degraded_not_ok(tmp_path: Path) -> None:
    env = {**os.environ, "FAKE_KEY": "k"}
    with FakeLLMServer(reply="I would rather not say.") as server:  # never a valid choice
        out = subprocess.run(_sim(["--json"], tmp_path, server.base_url), cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 3, out.stderr
    assert "no valid choice" in out.stderr or "degraded" in out.stderr
    info = json.loads(next((tmp_path / "runs").glob("*/run.json")).read_text())
    assert info["status"] != "finished"
