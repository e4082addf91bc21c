"""A batch killed with SIGKILL resumes without redoing or losing finished units."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from tests.support.cli import strict_json

from silicolab.runs import Run, lock

WORKER = Path(__file__).with_name("kill_worker.py")
N_UNITS = 40


def _ok_units(run_dir: Path) -> list[str]:
    return [e["unit"] for e in Run.open(run_dir).events() if e["status"] == "ok"]


def _executions(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


@pytest.mark.parametrize("mode", ["async", "process"])
def test_sigkill_then_resume_runs_only_the_missing_units(tmp_path: Path, mode: str) -> None:
    run = Run.create(tmp_path / "runs", kind="bench", slug=f"kill-{mode}")
    lock.release(run.path)  # the worker process below writes it
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    command = [sys.executable, str(WORKER), str(run.path)]

    # start_new_session puts the worker (and its process pool) in its own group, so the
    # kill below reaches every process this test started and nothing else.
    proc = subprocess.Popen(
        [*command, str(first_log), str(N_UNITS), "0.1", mode],
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while len(_ok_units(run.path)) < 6:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the worker recorded no units in 30 s"
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=10)
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL

    done_before = _ok_units(run.path)
    assert 6 <= len(done_before) < N_UNITS
    assert Run.open(run.path).status == "running"  # a hard kill cannot record anything
    # A kill loses at most the units in flight (4 workers), never finished ones.
    lost = set(_executions(first_log)) - set(done_before)
    assert len(lost) <= 4

    resumed = subprocess.run(
        [*command, str(second_log), str(N_UNITS), "0.01", mode],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    summary = strict_json(resumed.stdout)

    all_units = {f"u{i:02d}" for i in range(N_UNITS)}
    executed_on_resume = _executions(second_log)
    assert sorted(executed_on_resume) == sorted(all_units - set(done_before))
    assert summary["cached"] == sorted(done_before)
    assert summary["values"] == {u: {"double": 2 * int(u[1:])} for u in all_units}
    # Every unit ran at least once, and each is recorded ok exactly once.
    assert set(_executions(first_log)) | set(executed_on_resume) == all_units
    assert Counter(_ok_units(run.path)) == Counter(all_units)
    assert Run.open(run.path).status == "finished"
