"""Kill -9 and SIGTERM at several points, then --resume: every unit recorded once, the
same result as an uninterrupted run; a resume that contradicts the stored settings is
refused and leaves the run as it was; a finished run is never reopened."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.reliability.support import (
    bargainer_reply,
    cli,
    ok_units,
    one_line,
    only_run,
    record,
    start,
    use_server,
    wait_for,
)
from tests.support.cli import strict_json
from tests.support.openai_server import FakeLLMServer

SIM = ["sim", "run", "bargaining", "--model", "openai:fake"]
MAC = ["discover", "--dataset", "auto_mpg", "--method", "mac_meta_debate", "--model", "openai:fake"]


def _outcome(rec: dict) -> dict:
    keep = ("deal", "price", "transcript", "stop_reason", "health")
    return {k: rec[k] for k in keep} | {"survey": [a["value"] for a in rec["survey"]]}


@pytest.fixture
def bargainer_server():
    with FakeLLMServer(reply=bargainer_reply, latency_s=0.15) as server:
        yield server


def _uninterrupted(folder: Path, server: FakeLLMServer, args: list[str]) -> dict:
    use_server(folder, server.base_url)
    out = cli(args, folder)
    assert out.returncode in (0, 3), out.stderr
    return record(only_run(folder / "runs"))


@pytest.mark.parametrize("after_replies", [1, 3])
def test_sim_kill_9_then_resume(tmp_path: Path, bargainer_server, after_replies: int) -> None:
    expected = _outcome(_uninterrupted(tmp_path / "whole", bargainer_server, SIM))
    folder = tmp_path / "killed"
    use_server(folder, bargainer_server.base_url)
    served = bargainer_server.stats.ok
    proc = start(SIM, folder)
    wait_for(lambda: bargainer_server.stats.ok >= served + after_replies, proc, "replies")
    proc.kill()
    proc.communicate()
    run = only_run(folder / "runs")
    assert run.status == "running" and ok_units(run) == []  # nothing can record a kill -9

    resumed = cli([*SIM, "--resume"], folder)
    assert resumed.returncode == 0, resumed.stderr
    run = only_run(folder / "runs")
    assert run.status == "finished" and ok_units(run) == ["episode"]
    assert _outcome(record(run)) == expected


def test_sim_sigterm_is_interrupted_then_resume_and_contradictions(
    tmp_path: Path, bargainer_server
) -> None:
    expected = _outcome(_uninterrupted(tmp_path / "whole", bargainer_server, SIM))
    folder = tmp_path / "stopped"
    use_server(folder, bargainer_server.base_url)
    served = bargainer_server.stats.ok
    proc = start(SIM, folder)
    wait_for(lambda: bargainer_server.stats.ok >= served + 2, proc, "replies")
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM
    assert "--resume" in one_line(stderr)
    run = only_run(folder / "runs")
    assert run.status == "interrupted" and "--resume" in run.info["resume_hint"]

    before = (run.path / "run.json").read_bytes()
    for args, fragment in (
        ([*SIM, "--resume", "--seed", "5"], "seed=5 (stored: 0)"),
        (["sim", "run", "market", "--resume"], "name=market (stored: bargaining)"),
        ([*SIM[:3], "--model", "openai:other", "--resume"], "model=openai:other"),
    ):
        refused = cli(args, folder)
        assert refused.returncode == 2, refused.stderr
        assert fragment in one_line(refused.stderr)
        assert (run.path / "run.json").read_bytes() == before
        assert not (run.path / "record.json").exists()

    resumed = cli([*SIM, "--resume", "--json"], folder)
    assert resumed.returncode == 0, resumed.stderr
    run = only_run(folder / "runs")
    assert run.status == "finished" and ok_units(run) == ["episode"]
    assert _outcome(record(run)) == expected

    kept = (run.path / "record.json").read_bytes()
    again = cli([*SIM, "--resume"], folder)
    assert again.returncode == 2 and "is finished" in one_line(again.stderr)
    assert (run.path / "record.json").read_bytes() == kept


def test_sim_market_resume_of_a_killed_run_continues_from_its_checkpoint(tmp_path: Path) -> None:
    whole = cli(["sim", "run", "market", "--json"], tmp_path)
    assert whole.returncode == 0, whole.stderr
    expected = strict_json(whole.stdout)
    run = only_run(tmp_path / "runs")
    # A run killed mid-episode: status running, a checkpoint of the first steps, no event.
    folder = tmp_path / "killed"
    (folder / "runs").mkdir(parents=True)
    killed = folder / "runs" / run.path.name
    killed.mkdir()
    info = json.loads((run.path / "run.json").read_text()) | {"status": "running"}
    (killed / "run.json").write_text(json.dumps(info))
    from silicolab.sim.examples.market import run_market

    partial = run_market(seed=0, rounds=2, checkpoint=killed / "checkpoint.json")
    assert partial.trades != expected["trades"]
    checkpoint = json.loads((killed / "checkpoint.json").read_text())
    checkpoint["gm"]["done"] = False
    (killed / "checkpoint.json").write_text(json.dumps(checkpoint))

    resumed = cli(["sim", "run", "market", "--resume", "--json"], folder)
    assert resumed.returncode == 0, resumed.stderr
    got = strict_json(resumed.stdout)
    assert got["trades"] == expected["trades"] and got["final_state"] == expected["final_state"]
    assert ok_units(only_run(folder / "runs")) == ["episode"]


@pytest.mark.parametrize("after_requests", [3, 15])
def test_discover_kill_9_then_resume(tmp_path: Path, after_requests: int) -> None:
    with FakeLLMServer(latency_s=0.03) as server:
        expected = _uninterrupted(tmp_path / "whole", server, MAC)
        folder = tmp_path / "killed"
        use_server(folder, server.base_url)
        seen = server.stats.requests
        proc = start(MAC, folder)
        wait_for(lambda: server.stats.requests >= seen + after_requests, proc, "requests")
        proc.kill()
        proc.communicate()
        run = only_run(folder / "runs")
        assert run.status == "running"

        refused = cli([*MAC[:3], "--method", "pc", "--resume"], folder)
        assert refused.returncode == 2
        assert "method=pc (stored: mac_meta_debate)" in one_line(refused.stderr)

        resumed = cli([*MAC, "--resume"], folder)
    assert resumed.returncode == 3, resumed.stderr  # the echoing model: degraded, as before
    run = only_run(folder / "runs")
    assert run.status == "degraded" and ok_units(run) == ["result"]
    got = record(run)
    assert got["result"]["edges"] == expected["result"]["edges"]
    assert got["health"] == expected["health"]
