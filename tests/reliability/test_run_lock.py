"""One writer per run: a second process that would write a live run is refused (exit 2,
naming the live process); a lock left by a killed process is recovered without a
question; two concurrent ``--resume`` of one run never write a unit twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from silicolab.runs import Run, RunLocked, lock
from tests.reliability.support import cli, one_line, only_run, start, wait_for
from tests.support.cli import cli_env

HOLDER = """
import sys, time
from silicolab.runs import Run
with Run.open(sys.argv[1]):        # working in the run holds its writer lock
    print("held", flush=True)
    time.sleep(600)
"""


def _hold(run_dir: Path) -> subprocess.Popen[str]:
    """A second process that holds ``run_dir``'s writer lock until killed."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(run_dir)],
        env=cli_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_writer_is_refused_and_a_killed_holder_leaves_no_lock(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench", slug="lock")
    lock.release(run.path)  # this process steps aside; another one takes the run
    holder = _hold(run.path)
    try:
        with pytest.raises(RunLocked, match=rf"pid {holder.pid}\b"):
            Run.open(run.path).append_event("u1", {"x": 1})
        assert Run.open(run.path).events() == []  # nothing was written
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # kill -9 left the lock file but no lock: the next writer goes on without a question
    assert (run.path / lock.LOCK_FILE).exists()
    again = Run.open(run.path)
    again.append_event("u1", {"x": 1})
    assert [e["unit"] for e in again.events()] == ["u1"]
    assert f"pid {os.getpid()}" in lock.holder(run.path)


def test_one_process_may_open_its_run_many_times(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench")
    Run.open(run.path).append_event("a")
    run.append_event("b")  # re-entrant: the same process holds one lock for the folder
    assert lock.held(run.path)
    assert [e["unit"] for e in run.events()] == ["a", "b"]


def test_resume_of_a_live_run_exits_2_naming_the_process(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    done = cli(["study", "run", "auction", "--subjects", "rule", "--conditions", "6",
                "--yes", "--runs-dir", str(runs)], tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    study = only_run(runs)
    study.set_status("interrupted")  # as a kill would leave it
    lock.release(study.path)
    holder = _hold(study.path)
    try:
        refused = cli(["study", "run", "--resume", "--yes", "--runs-dir", str(runs)], tmp_path)
        assert refused.returncode == 2, refused.stderr
        line = one_line(refused.stderr)
        assert f"pid {holder.pid}" in line and "being written" in line
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()


def test_two_concurrent_resumes_write_every_unit_once(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    args = ["study", "run", "auction", "--subjects", "rule", "--yes", "--runs-dir", str(runs)]
    first = start(args, tmp_path)

    def events() -> bool:
        logs = [p / "events.jsonl" for p in runs.iterdir()] if runs.is_dir() else []
        return any(len(f.read_text().splitlines()) >= 30 for f in logs if f.exists())

    wait_for(events, first, "30 finished conditions")
    first.send_signal(signal.SIGKILL)
    first.wait()
    resume = ["study", "run", "--resume", "--yes", "--runs-dir", str(runs)]
    a, b = start(resume, tmp_path), start(resume, tmp_path)
    outcomes = sorted(p.wait(timeout=300) for p in (a, b))
    errors = [p.communicate()[1] for p in (a, b)]
    assert outcomes == [0, 2], errors
    refused = next(e for p, e in zip((a, b), errors, strict=True) if p.returncode == 2)
    # refused as a second writer, or (when the first finished before the second looked)
    # as a finished run: either way one line, and nothing written twice
    assert "being written" in refused or "finished" in refused, refused
    units = Counter(e["unit"] for e in only_run(runs).events() if e["status"] == "ok")
    assert len(units) == 343 and set(units.values()) == {1}


def test_a_finished_run_s_report_can_be_rebuilt_while_its_maker_lives(tmp_path: Path) -> None:
    # a notebook kernel that ran a study keeps living; `silicolab view` in a terminal must
    # still rebuild the run's page: the lock is held only while the run is worked on
    with Run.create(tmp_path, kind="bench") as run:
        run.write_record({"rows": []})
        run.write_report("# done\n")
    assert not lock.held(run.path)
    viewed = cli(["view", str(run.path)], tmp_path)
    assert viewed.returncode == 0, viewed.stderr
    run.write_report("# again\n")  # a write outside the block takes the lock only for itself
    assert not lock.held(run.path)
