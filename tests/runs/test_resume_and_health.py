"""The resume rule (stored settings win, contradictions refused, finished runs kept) and the
degraded verdict."""

from __future__ import annotations

import json

import pytest

from silicolab.core.errors import InputError
from silicolab.runs import DEGRADED_EXIT, Run, RunHealth, UnitHealth, open_run

SETTINGS = {"envs": ["dugongs", "irt", "survival"], "seeds": 3, "agent": "boed"}


def test_new_run_stores_settings(tmp_path):
    run, used = open_run(tmp_path, "bench-boxinggym", settings=SETTINGS, seed=5)
    assert used == SETTINGS
    stored = json.loads((run.path / "run.json").read_text())
    assert stored["config"] == SETTINGS and stored["seed"] == 5


def test_resume_reuses_stored_settings_over_defaults(tmp_path):
    first, _ = open_run(tmp_path, "bench-boxinggym", settings=SETTINGS)
    defaults = {"envs": ["all"], "seeds": 5, "agent": "boed"}
    run, used = open_run(tmp_path, "bench-boxinggym", settings=defaults, resume=True)
    assert run.path == first.path
    assert used == SETTINGS  # the defaults of this invocation yield to run.json


def test_resume_refuses_contradicting_flags_naming_each(tmp_path):
    open_run(tmp_path, "bench-boxinggym", settings=SETTINGS)
    given = {"envs": ["dugongs"], "seeds": 1, "agent": "boed"}
    with pytest.raises(InputError) as err:
        open_run(
            tmp_path,
            "bench-boxinggym",
            settings=given,
            explicit={"envs", "seeds", "agent"},
            resume=True,
        )
    message = str(err.value)
    assert "envs=dugongs (stored: dugongs,irt,survival)" in message
    assert "seeds=1 (stored: 3)" in message
    assert "agent" not in message.split("but you gave")[1]  # same value: no conflict


def test_resume_accepts_explicit_flags_equal_to_stored(tmp_path):
    open_run(tmp_path, "k", settings=SETTINGS)
    _, used = open_run(tmp_path, "k", settings=dict(SETTINGS), explicit=set(SETTINGS), resume=True)
    assert used == SETTINGS


def test_finished_run_is_never_reopened(tmp_path):
    run, _ = open_run(tmp_path, "k", settings=SETTINGS)
    with run:
        run.write_record({"rows": [1, 2, 3]})
    before = run.record_path.read_text()
    with pytest.raises(InputError, match="is finished"):
        open_run(tmp_path, "k", settings=SETTINGS, resume=True)
    assert run.record_path.read_text() == before


def test_resume_with_nothing_to_resume_and_wrong_kind(tmp_path):
    with pytest.raises(InputError, match="no k run"):
        open_run(tmp_path, "k", settings={}, resume=True)
    other, _ = open_run(tmp_path, "other", settings={})
    with pytest.raises(InputError, match="not a k run"):
        open_run(tmp_path, "k", settings={}, resume=other.path)


def test_unwritable_runs_folder_is_refused_without_creating_anything(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match="is a file"):
        open_run(blocker / "runs", "k", settings={})
    with pytest.raises(InputError, match="cannot write"):
        open_run("/proc/nope", "k", settings={})


def test_health_all_failed_unit_degrades_and_names_worst():
    good = UnitHealth(unit="dugongs-0", steps=10, parse_failures=1)
    bad = UnitHealth(unit="irt-1", steps=10)
    for _ in range(10):
        bad.note_failure("skipped_steps", "echo: " + "x" * 400)
    health = RunHealth.of([good, bad])
    assert health.degraded
    assert health.worst is bad
    assert health.totals()["skipped_steps"] == 10 and health.totals()["failed_units"] == 1
    line = health.summary_line()
    assert line.startswith("DEGRADED") and "irt-1" in line and "echo: xxx" in line
    assert len(bad.sample_reply) == 160  # cut, on one line
    assert DEGRADED_EXIT not in (0, 1, 2)


def test_health_partial_failures_are_not_degraded_and_round_trip():
    units = [UnitHealth(unit=f"u{i}", steps=4, model_errors=i) for i in range(4)]
    health = RunHealth.of(units)
    assert not health.degraded and health.worst.unit == "u3"
    assert [UnitHealth.from_dict(u.to_dict()) for u in units] == units
    with pytest.raises(ValueError):
        units[0].note_failure("nonsense")


def test_run_finish_with_health_sets_degraded(tmp_path):
    run, _ = open_run(tmp_path, "k", settings={})
    with run:
        status = run.finish(RunHealth.of([UnitHealth(unit="a", steps=2, model_errors=2)]))
    assert status == "degraded"
    info = Run.open(run.path).info
    assert info["status"] == "degraded" and info["health"]["model_errors"] == 2
    # a degraded run may be resumed (it is not finished)
    again, _ = open_run(tmp_path, "k", settings={}, resume=True)
    assert again.path == run.path


def test_resume_takes_the_newest_unfinished_run_not_a_newer_finished_one(tmp_path):
    interrupted, _ = open_run(tmp_path, "k", settings=SETTINGS)
    interrupted.set_status("interrupted")
    newer, _ = open_run(tmp_path, "k", settings=SETTINGS)
    with newer:
        newer.write_record({"rows": []})
    assert newer.status == "finished" and Run.latest(tmp_path, "k").path == newer.path
    run, _ = open_run(tmp_path, "k", settings=SETTINGS, resume=True)
    assert run.path == interrupted.path
