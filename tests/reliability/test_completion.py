"""Completion is the last write: a run says ``finished`` only once its record, reports and
figures exist, and a kill -9 at any moment of its final writes leaves a run that
``--resume`` completes from its events, without redoing a unit, to the record an
uninterrupted run writes, byte for byte (the record holds the science only; time and
model calls are process accounting in ``run.json``). The interrupted message's command
works as printed. ``test_kill_anywhere`` kills at 20 moments of a run's whole life."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from silicolab.runs import Run
from tests.reliability.support import cli, ok_units, only_run, start

DEMO = ["demo", "--conditions", "20", "--json"]
STUDY = ["study", "run", "auction", "--subjects", "rule", "--conditions", "20", "-y", "--json"]
#: Kill moments after the last unit event: what appeared in the run directory. ``events``
#: is the last unit event; ``figures`` (the page is being drawn) and ``report.html`` (the
#: page is written, ``run.json`` not yet) fall in the final writes. Before this fix all
#: three left runs ``finished`` without report.html (and the demo without its report).
MOMENTS = ["events", "figures", "report.html"]


def _whole(folder: Path, args: list[str]) -> tuple[bytes, int]:
    """An uninterrupted run: its record's bytes and its number of events."""
    folder.mkdir()
    out = cli([*args, "--runs-dir", "runs"], folder)
    assert out.returncode == 0, out.stderr
    run = only_run(folder / "runs")
    assert run.status == "finished"
    return (run.path / "record.json").read_bytes(), len(run.events())


def _appeared(runs: Path, what: str, n_events: int) -> Callable[[], bool]:
    def check() -> bool:
        folders = list(runs.iterdir()) if runs.is_dir() else []
        if not folders:
            return False
        if what == "events":
            path = folders[0] / "events.jsonl"
            return path.exists() and path.read_text().count("\n") >= n_events
        return (folders[0] / what).exists()

    return check


def _kill_when(args: list[str], folder: Path, ready: Callable[[], bool]) -> None:
    proc = start([*args, "--runs-dir", "runs"], folder)
    deadline = time.monotonic() + 60
    while not ready() and proc.poll() is None:
        assert time.monotonic() < deadline, "the moment never came"
        time.sleep(0.001)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()


def _complete(run: Run, expected: bytes, n_events: int) -> None:
    """Everything a finished run promises, and the uninterrupted run's record."""
    assert run.status == "finished", run.info
    for name in ("record.json", "report.md", "report.html"):
        assert (run.path / name).is_file(), f"{run.path} is finished without {name}"
    assert list((run.path / "figures").iterdir()), "finished without its figures"
    units = ok_units(run)
    assert len(units) == len(set(units)) == n_events, "a unit was redone or lost"
    assert (run.path / "record.json").read_bytes() == expected, "the record differs"


@pytest.mark.slow
@pytest.mark.parametrize("args", [DEMO, STUDY], ids=["demo", "study"])
def test_a_kill_during_the_final_writes_is_completed_by_resume(
    tmp_path: Path, args: list[str]
) -> None:
    expected, n_events = _whole(tmp_path / "whole", args)
    for what in MOMENTS:
        folder = tmp_path / f"kill-at-{what}"
        folder.mkdir()
        _kill_when(args, folder, _appeared(folder / "runs", what, n_events))
        run = only_run(folder / "runs")
        if run.status != "finished":  # killed before its last write: resume completes it
            assert run.status == "running", run.info
            out = cli([*args, "--runs-dir", "runs", "--resume"], folder)
            assert out.returncode == 0, (what, out.stderr)
            assert json.loads(out.stdout)["status"] == "finished"
            run = Run.open(run.path)
        _complete(run, expected, n_events)


def test_the_interrupted_message_command_works_as_printed(tmp_path: Path) -> None:
    args = [*STUDY, "--runs-dir", "runs"]
    proc = start(args, tmp_path)
    runs = tmp_path / "runs"
    while not _appeared(runs, "events", 1)():
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.005)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate()
    run = only_run(runs)
    assert proc.returncode == 143 and run.status == "interrupted", (stderr, run.info)
    hint = run.info["resume_hint"]
    assert "rerun the same command with --resume" in hint and "--resume" in stderr
    other = cli(["study", "run", "mug", "--runs-dir", "runs", "-y", "--resume"], tmp_path)
    assert other.returncode == 2 and "a study of 'auction'" in other.stderr  # another study
    assert Run.open(run.path).status == "interrupted"
    out = cli([*args, "--resume"], tmp_path)  # the same command, --resume added
    assert out.returncode == 0, out.stderr
    assert Run.open(run.path).status == "finished"
