"""kill -9 in the middle of a replication, then ``--resume``: every (variant, condition)
runs exactly once, nothing finished is asked of the server again, and the verdicts equal
an uninterrupted run's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from silicolab.runs import Run
from silicolab.studies import load_example
from silicolab.studies.world import HiddenWorld
from tests.cli.test_cli import EXE
from tests.support.cli import private_cache_env
from tests.support.openai_server import FakeLLMServer
from tests.support.world_server import world_server

ARGS = [
    "study", "replicate", "lawyer", "--models", "openai:fake-a,openai:fake-b", "--seeds", "2",
    "--conditions", "8", "--jobs", "2", "--json", "--runs-dir", "runs",
]  # fmt: skip


def _server() -> FakeLLMServer:
    world = HiddenWorld(load_example("lawyer"), {"passed_bar": 0.6}, intercept=0.2, noise_sd=0.5)
    return world_server(world, latency_s=0.01, log_limit=1_000_000)


def _env(cwd: Path) -> dict[str, str]:
    return private_cache_env(cwd)


def _run(cwd: Path, url: str, *extra: str) -> dict[str, Any]:
    out = subprocess.run([*EXE, *ARGS, "--base-url", url, *extra], cwd=cwd, env=_env(cwd),
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _units(cwd: Path) -> list[str]:
    (folder,) = [p for p in (cwd / "runs").iterdir() if p.is_dir()]
    return [e["unit"] for e in Run.open(folder).events() if e["status"] == "ok"]


def _texts(server: FakeLLMServer) -> list[str]:
    return [json.dumps(r, sort_keys=True) for r in server.stats.requests_log]


@pytest.mark.slow
def test_a_killed_replication_resumes_without_repeating_a_finished_unit(tmp_path: Path) -> None:
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    whole.mkdir(), killed.mkdir()
    with _server() as server:
        reference = _run(whole, server.base_url)
        served_whole = len(server.stats.requests_log)
        server.reset_stats()
        proc = subprocess.Popen([*EXE, *ARGS, "--base-url", server.base_url], cwd=killed,
                                env=_env(killed), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
        deadline = time.monotonic() + 120
        events = None
        while time.monotonic() < deadline and proc.poll() is None:
            found = list((killed / "runs").glob("*/events.jsonl"))
            events = found[0] if found else None
            if events is not None and events.read_bytes().count(b"\n") >= 12:
                break
            time.sleep(0.005)
        assert proc.poll() is None, "the replication finished before the kill"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        before = set(_units(killed))
        asked_before = len(server.stats.requests_log)
        resumed = _run(killed, server.base_url, "--resume")
        after_texts = _texts(server)[asked_before:]
    units = _units(killed)
    assert sorted(units) == sorted(_units(whole))  # every (variant, condition) once
    assert not [u for u, n in Counter(units).items() if n > 1]
    assert len(before) >= 11 and len(units) == 1 + 4 * 8  # the wordings unit + 32
    # the cache answers what was answered before the kill: only the unfinished remain,
    # plus at most the calls in flight when it came: --jobs 2 conditions in all, each
    # waiting on one call (the lawyer's respondents have one question each)
    assert asked_before + len(after_texts) <= served_whole + 2
    assert [p["verdict"] for p in resumed["paths"]] == [p["verdict"] for p in reference["paths"]]
    assert [p["random"] for p in resumed["paths"]] == [p["random"] for p in reference["paths"]]
