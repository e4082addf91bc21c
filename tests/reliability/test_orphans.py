"""No process of a silicolab batch outlives it: after ``kill -9`` of the main process
(which cannot clean up) the pool workers, the forkserver and the resource tracker end
within seconds; after SIGTERM the run is "interrupted" and the workers are stopped, not
waited for."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from silicolab.runs import Run, lock
from tests.reliability.support import alive, cli_env, descendants

WORKER = Path(__file__).parents[1] / "runtime" / "kill_worker.py"


def _start_batch(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Run, list[int]]:
    """A process-pool batch of long units, started and computing; its descendants."""
    run = Run.create(tmp_path / "runs", kind="bench", slug="orphans")
    lock.release(run.path)  # the worker process below writes it
    log = tmp_path / "executions.log"
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), str(run.path), str(log), "8", "30", "process"],
        env=cli_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not (log.exists() and len(log.read_text().split()) >= 2):
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
        assert time.monotonic() < deadline, "no unit started in 30 s"
        time.sleep(0.05)
    family = descendants(proc.pid)
    assert len(family) >= 3, family  # workers, forkserver, resource tracker
    return proc, run, family


def _survivors(family: list[int], limit: float) -> list[int]:
    deadline = time.monotonic() + limit
    while any(alive(p) for p in family) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in family if alive(p)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_no_child_survives_kill_9_of_its_parent(tmp_path: Path) -> None:
    proc, run, family = _start_batch(tmp_path)
    proc.kill()  # the main process only, not its process group
    proc.wait(timeout=10)
    try:
        assert _survivors(family, limit=10) == []
    finally:
        for pid in family:
            if alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
    assert Run.open(run.path).status == "running"  # nothing can record a kill -9


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_interrupts_the_run_and_stops_the_workers(tmp_path: Path) -> None:
    proc, run, family = _start_batch(tmp_path)
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=20)
    assert proc.returncode == 128 + signal.SIGTERM
    assert time.monotonic() - started < 15  # the 30 s units were not waited for
    assert _survivors(family, limit=10) == []
    info = Run.open(run.path).info
    assert info["status"] == "interrupted" and "--resume" in info["resume_hint"]
