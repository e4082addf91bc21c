"""``--resume RUN_DIR`` continues the named run, not the newest unfinished one, on every
command that writes a run; ``--resume`` alone, followed by a study name or another flag,
keeps meaning the newest unfinished run."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest

from silicolab.cli.resume_target import resume_target, take_resume_dir
from silicolab.runs import Run
from tests.reliability.support import cli, ok_units, start, wait_for
from tests.support.cli import strict_json

DEMO = ["demo", "--conditions", "20", "--json"]


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "runs" / "20260101-000000-study-x"
    folder.mkdir(parents=True)
    (folder / "run.json").write_text("{}")
    return folder


@pytest.mark.parametrize(
    ("argv", "kept"),
    [
        (["study", "run", "auction", "--resume"], ["study", "run", "auction", "--resume"]),
        (["study", "run", "--resume", "auction"], ["study", "run", "--resume", "auction"]),
        (["demo", "--resume", "--yes"], ["demo", "--resume", "--yes"]),
        (["study", "run", "--resume", "RUN", "-y"], ["study", "run", "--resume", "-y"]),
        (["study", "run", "--resume=RUN"], ["study", "run", "--resume"]),
        (["bench", "causalab", "--retry-failed", "RUN"], ["bench", "causalab", "--retry-failed"]),
    ],
)
def test_the_run_directory_is_taken_off_the_arguments(
    run_dir: Path, argv: list[str], kept: list[str]
) -> None:
    given = [str(run_dir) if token == "RUN" else token for token in argv]
    given = [t.replace("=RUN", f"={run_dir}") for t in given]
    assert take_resume_dir(given) == kept
    named = any("RUN" in token for token in argv)
    assert resume_target(True) == (run_dir if named else True)
    assert resume_target(False) is False


def _interrupted_demo(folder: Path) -> Path:
    """A demo stopped by Ctrl-C after its first unit: its run directory. The demo's 20
    conditions land in one write and the run ends ~3 s later; on a loaded machine the
    signal can arrive after that end (the run is then finished, which is right but not
    what this test needs): that run is removed and the demo started again, up to 3 times."""
    statuses = []
    for _ in range(3):
        before = set((folder / "runs").glob("*")) if (folder / "runs").is_dir() else set()

        def started(before: set[Path] = before) -> bool:
            runs = folder / "runs"
            new = set(runs.glob("*/events.jsonl")) if runs.is_dir() else set()
            return any(p.read_text().count("\n") >= 1 for p in new if p.parent not in before)

        proc = start([*DEMO, "--runs-dir", "runs"], folder)
        wait_for(started, proc, "the first unit")
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
        (made,) = set((folder / "runs").glob("*")) - before
        statuses.append(Run.open(made).status)
        if statuses[-1] == "interrupted":
            return made
        assert statuses[-1] == "finished", statuses  # never anything else
        shutil.rmtree(made)
    raise AssertionError(f"every demo ended before Ctrl-C landed: {statuses}")


def test_resume_run_dir_finishes_that_run_and_leaves_the_newer_one(tmp_path: Path) -> None:
    older = _interrupted_demo(tmp_path)
    newer = _interrupted_demo(tmp_path)
    newer_units = ok_units(Run.open(newer))

    out = cli([*DEMO, "--runs-dir", "runs", "--resume", str(older.relative_to(tmp_path))], tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / strict_json(out.stdout)["run_dir"]).resolve() == older.resolve()
    assert Run.open(older).status == "finished"
    assert Run.open(newer).status == "interrupted"  # untouched
    assert ok_units(Run.open(newer)) == newer_units

    again = cli([*DEMO, "--runs-dir", "runs", f"--resume={older}"], tmp_path)
    assert again.returncode == 2 and "is finished" in again.stderr  # kept as it is

    plain = cli([*DEMO, "--runs-dir", "runs", "--resume"], tmp_path)  # the newest unfinished
    assert plain.returncode == 0, plain.stderr
    assert Run.open(newer).status == "finished"
