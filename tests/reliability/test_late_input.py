"""Input checked late never leaves a run behind: bad input found after the run directory
was created (a method's parameter value, a model spec a bench loads with its episodes)
removes the run when no unit finished, so ``--resume`` cannot pick it and fail again; a
run that failed on bad input after units finished is kept, and ``--resume`` without a
path skips it, saying so."""

from __future__ import annotations

from pathlib import Path

import pytest

from silicolab.core.errors import ConfigError, InputError
from silicolab.runs import Run, open_run
from tests.reliability.support import cli, one_line

BOXINGGYM = ["bench", "boxinggym", "--env", "dugongs", "--seeds", "1", "--agent", "random",
             "--participant-model", "bogus:x"]  # fmt: skip
CASES = [
    # refused by the method itself, once it runs (after the run directory was created)
    (["discover", "--dataset", "auto_mpg", "-p", "alpha=2"], "alpha must be between 0 and 1"),
    (["discover", "--dataset", "auto_mpg", "-p", "indep_test=bogus"], "indep_test='bogus'"),
    # checked before the run now (a bench loaded its models and datasets inside the run)
    (["bench", "discovery", "--methods", "pc", "--datasets", "nowhere"], "unknown dataset"),
    (["bench", "episodes", "--agent", "llm", "--model", "bogus:x"], "unknown model spec"),
    (BOXINGGYM, "unknown model spec"),
]


@pytest.mark.parametrize(("args", "fragment"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_late_bad_input_is_one_line_exit_2_and_leaves_no_run(
    tmp_path: Path, args: list[str], fragment: str
) -> None:
    out = cli(args, tmp_path)
    assert out.returncode == 2, (out.stdout, out.stderr)
    line = one_line(out.stderr)
    assert line.startswith("error: ") and fragment in line, line
    runs = tmp_path / "runs"
    assert not runs.exists() or not any(runs.iterdir()), list(runs.iterdir())
    again = cli([*args[:2], "--resume"] if args[0] == "bench" else [args[0], "--resume"], tmp_path)
    assert again.returncode == 2 and "to resume" in one_line(again.stderr)


@pytest.mark.parametrize("error", [InputError("bad column 'x'"), ConfigError("no key")])
def test_a_run_ended_by_bad_input_before_any_unit_is_removed(tmp_path: Path, error) -> None:
    with pytest.raises(type(error)), Run.create(tmp_path, kind="study") as run:
        run.append_event("c1", {"error": "half done"}, status="error")  # nothing finished
        raise error
    assert not run.path.exists()
    again = Run.create(tmp_path, kind="study")  # the lock went with it: nothing is stuck
    with again:
        pass
    assert again.status == "finished"


def test_a_crash_or_an_interrupt_before_any_unit_keeps_the_run(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), Run.create(tmp_path, kind="study") as crashed:
        raise RuntimeError("a bug")
    assert Run.open(crashed.path).status == "failed"
    assert not Run.open(crashed.path).failed_on_input
    with pytest.raises(KeyboardInterrupt), Run.create(tmp_path, kind="demo") as stopped:
        raise KeyboardInterrupt
    assert Run.open(stopped.path).status == "interrupted"


def _failed_on_input_after_a_unit(root: Path) -> Run:
    with pytest.raises(InputError), Run.create(root, kind="study", slug="late") as run:
        run.append_event("c1", {"value": 1})
        raise InputError("condition c2 names an unknown column 'x'")
    run = Run.open(run.path)
    assert run.status == "failed" and run.failed_on_input and run.finished_units() == {"c1"}
    return run


def test_resume_skips_a_run_that_failed_on_bad_input_and_says_so(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt), Run.create(tmp_path, kind="study") as older:
        raise KeyboardInterrupt
    bad = _failed_on_input_after_a_unit(tmp_path)
    notes: list[str] = []
    run, _ = open_run(tmp_path, "study", settings={}, resume=True, note=notes.append)
    assert run.path == older.path
    assert notes == [
        f"note: resuming skips {bad.path}, which failed on bad input (InputError: condition "
        "c2 names an unknown column 'x'): its stored input would fail again"
    ]
    assert Run.open(bad.path).status == "failed"  # kept as it is: its finished unit too
    run2, _ = open_run(tmp_path, "study", settings={}, resume=bad.path)  # by its path: yes
    assert run2.path == bad.path


def test_resume_with_only_a_run_that_failed_on_bad_input_names_it(tmp_path: Path) -> None:
    bad = _failed_on_input_after_a_unit(tmp_path)
    with pytest.raises(InputError, match="failed on bad input") as refused:
        open_run(tmp_path, "study", settings={}, resume=True, note=print)
    assert str(bad.path) in str(refused.value) and "start a new run" in str(refused.value)
    with Run.open(bad.path) as resumed:  # resuming it clears the mark with the error
        assert "input_error" not in resumed.info and "error" not in resumed.info
