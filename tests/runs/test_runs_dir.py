"""Run directories: layout, unique names, redaction, atomic writes, statuses, lookup."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from silicolab.core.errors import InputError
from silicolab.runs import Run, meta


def test_create_writes_layout_and_run_json(tmp_path: Path) -> None:
    run = Run.create(tmp_path / "runs", kind="Bench", slug="My Study #2", config={"n": 3}, seed=7)

    assert run.path.parent == tmp_path / "runs"
    assert re.fullmatch(r"\d{8}-\d{6}-bench-my-study-2", run.path.name)
    info = json.loads((run.path / "run.json").read_text())
    assert info["kind"] == "bench" and info["slug"] == "my-study-2"
    assert info["status"] == "running" and info["seed"] == 7
    assert info["config"] == {"n": 3}
    assert info["created"] == info["updated"]
    assert {"python", "silicolab", "numpy"} <= set(info["versions"])
    assert run.info == info
    assert (run.kind, run.seed, run.config, run.status) == ("bench", 7, {"n": 3}, "running")


def test_empty_slug_gives_time_and_kind_only(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="study")
    assert re.fullmatch(r"\d{8}-\d{6}-study", run.path.name)


def test_kind_without_letters_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="kind"):
        Run.create(tmp_path, kind="!!!")


def test_seed_must_be_an_integer(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="seed"):
        Run.create(tmp_path, kind="x", seed="7")  # type: ignore[arg-type]


def test_taken_name_gets_a_numeric_suffix(tmp_path: Path) -> None:
    # Occupy the names of this second and the next two, so the new run must collide.
    start = meta.now()
    for offset in range(3):
        (tmp_path / meta.dir_name(start + timedelta(seconds=offset), "bench", "demo")).mkdir()

    run = Run.create(tmp_path, kind="bench", slug="demo")

    assert run.path.name.endswith("-demo-2")
    assert (run.path / "run.json").is_file()


def test_runs_created_together_get_distinct_directories(tmp_path: Path) -> None:
    paths = {Run.create(tmp_path, kind="bench", slug="same").path for _ in range(5)}
    assert len(paths) == 5
    assert all(re.fullmatch(r"\d{8}-\d{6}-bench-same(-[2-5])?", p.name) for p in paths)


@given(st.text())
def test_slugify_keeps_only_safe_characters(text: str) -> None:
    slug = meta.slugify(text)
    assert re.fullmatch(r"([a-z0-9]+(-[a-z0-9]+)*)?", slug)


def test_config_secrets_are_redacted_in_run_json(tmp_path: Path) -> None:
    config = {
        "model": "openai:gpt-4o-mini",
        "api_key": "sk-live-0123456789abcdef",
        "headers": {"Authorization": "Bearer tok-9876543210"},
        "max_tokens": 256,
    }
    run = Run.create(tmp_path, kind="study", config=config)

    text = (run.path / "run.json").read_text()
    assert "sk-live-0123456789abcdef" not in text and "tok-9876543210" not in text
    assert run.config == {
        "model": "openai:gpt-4o-mini",
        "api_key": "***",
        "headers": {"Authorization": "***"},
        "max_tokens": 256,
    }
    assert config["api_key"] == "sk-live-0123456789abcdef"  # the caller's dict is untouched


def test_record_is_written_atomically_with_schema_version(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench")
    assert run.read_record() is None

    for i in range(3):
        path = run.write_record({"episodes": i, "scores": [0.5, 0.25]})

    assert path == run.path / "record.json"
    assert run.read_record() == {"schema_version": "1", "episodes": 2, "scores": [0.5, 0.25]}
    assert list(path.read_text()).count("\n") > 1  # indented, readable
    leftovers = [p.name for p in run.path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_record_keeps_its_own_schema_version(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench")
    run.write_record({"schema_version": "3", "x": 1}, schema_version="2")
    assert run.read_record() == {"schema_version": "3", "x": 1}
    run.write_record({"x": 1}, schema_version="2")
    assert run.read_record() == {"schema_version": "2", "x": 1}


def test_write_report_markdown_and_html(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench")
    path = run.write_report("# Results\n", html="<h1>Results</h1>")
    assert path == run.path / "report.md"
    assert path.read_text() == "# Results\n"
    assert (run.path / "report.html").read_text() == "<h1>Results</h1>"


def test_set_status_rewrites_run_json(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench")
    before = run.info["updated"]

    run.set_status("failed", error="boom", episodes_done=3)

    info = Run.open(run.path).info
    assert info["status"] == "failed" and info["error"] == "boom" and info["episodes_done"] == 3
    assert info["updated"] > before
    with pytest.raises(InputError, match="finished"):
        run.set_status("done")


def test_context_manager_marks_finished(tmp_path: Path) -> None:
    with Run.create(tmp_path, kind="bench") as run:
        assert Run.open(run.path).status == "running"
    assert Run.open(run.path).status == "finished"


def test_context_manager_keeps_a_status_set_inside(tmp_path: Path) -> None:
    with Run.create(tmp_path, kind="bench") as run:
        run.set_status("failed", error="3 episodes crashed")
    assert Run.open(run.path).info["error"] == "3 episodes crashed"
    assert Run.open(run.path).status == "failed"


@pytest.mark.parametrize("status", ["finished", "degraded"])
def test_a_final_status_set_inside_is_the_last_write(tmp_path: Path, status: str) -> None:
    """Completion is the last write: inside the block ``run.json`` stays ``running`` (a
    kill there leaves a resumable run) and the block's end writes the status and fields."""
    with Run.create(tmp_path, kind="bench") as run:
        run.set_status(status, health_summary="ok")
        assert run.status == status and Run.open(run.path).status == "running"
        run.write_report("# done\n")
    info = Run.open(run.path).info
    assert info["status"] == status and info["health_summary"] == "ok"


def test_an_error_after_finish_inside_the_block_is_not_finished(tmp_path: Path) -> None:
    with pytest.raises(OSError), Run.create(tmp_path, kind="bench") as run:
        run.finish()
        raise OSError("disk full while writing the report")
    assert Run.open(run.path).status == "failed"
    with pytest.raises(KeyboardInterrupt), Run.open(run.path) as again:
        again.finish()
        raise KeyboardInterrupt
    assert Run.open(run.path).status == "interrupted"


def test_context_manager_marks_interrupted_on_ctrl_c(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt), Run.create(tmp_path, kind="bench") as run:
        raise KeyboardInterrupt
    assert Run.open(run.path).status == "interrupted"


def test_context_manager_marks_failed_with_message(tmp_path: Path) -> None:
    with pytest.raises(ValueError), Run.create(tmp_path, kind="bench") as run:
        raise ValueError("bad design")
    info = Run.open(run.path).info
    assert info["status"] == "failed" and info["error"] == "ValueError: bad design"


def test_resuming_a_failed_run_in_a_with_block_finishes_it(tmp_path: Path) -> None:
    with pytest.raises(ValueError), Run.create(tmp_path, kind="bench") as run:
        raise ValueError("flaky")
    with Run.open(run.path) as resumed:
        assert Run.open(run.path).status == "running"
    info = Run.open(resumed.path).info
    assert info["status"] == "finished" and "error" not in info and "resumed" in info


def test_open_reads_back_a_run(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench", config={"a": 1}, seed=3)
    again = Run.open(str(run.path))
    assert again.info == run.info and again.path == run.path


@pytest.mark.parametrize("setup", ["missing", "no_run_json", "corrupt", "not_a_run"])
def test_open_rejects_what_is_not_a_run_directory(tmp_path: Path, setup: str) -> None:
    path = tmp_path / "candidate"
    if setup != "missing":
        path.mkdir()
    if setup == "corrupt":
        (path / "run.json").write_text("{not json")
    if setup == "not_a_run":
        (path / "run.json").write_text('["a list"]')
    with pytest.raises(InputError, match=re.escape(str(path))):
        Run.open(path)


def test_latest_picks_the_most_recent_run_of_a_kind(tmp_path: Path) -> None:
    assert Run.latest(tmp_path / "nothing-here") is None
    first = Run.create(tmp_path, kind="bench")
    study = Run.create(tmp_path, kind="study")
    second = Run.create(tmp_path, kind="bench")
    (tmp_path / "notes").mkdir()  # unrelated folders are ignored
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "run.json").write_text("oops")

    assert Run.latest(tmp_path).path == second.path
    assert Run.latest(tmp_path, kind="study").path == study.path
    assert Run.latest(tmp_path, kind="bench").path == second.path
    assert Run.latest(tmp_path, kind="discover") is None
    assert first.path != second.path


def test_events_and_finished_units(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench")
    run.append_event("a", {"value": 1})
    run.append_event("b", {"error": "ValueError: x"}, status="error")
    run.append_event("c")

    events = Run.open(run.path).events()
    assert [(e["unit"], e["status"], e["data"]) for e in events] == [
        ("a", "ok", {"value": 1}),
        ("b", "error", {"error": "ValueError: x"}),
        ("c", "ok", {}),
    ]
    assert all(set(e) == {"unit", "status", "time", "data"} for e in events)
    assert run.finished_units() == {"a", "c"}


def test_event_after_a_torn_line_is_not_lost(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench")
    run.append_event("a", {"value": 1})
    with open(run.events_path, "a") as handle:  # what a kill in the middle of a write leaves
        handle.write('{"unit":"b","status":"o')

    Run.open(run.path).append_event("c", {"value": 3})

    assert Run.open(run.path).finished_units() == {"a", "c"}


SECRET_IN_CONFIG = "sk-config-secret-0123456789"
SECRET_IN_ENV = 'env"secret\\with-quote-42'


def test_secret_values_never_reach_any_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SILICOLAB_TEST_API_KEY", SECRET_IN_ENV)
    config = {"api_key": SECRET_IN_CONFIG, "model": "m"}
    leak = f"request failed with key {SECRET_IN_CONFIG} and {SECRET_IN_ENV}"

    with Run.create(tmp_path, kind="study", config=config) as run:
        run.append_event("u1", {"value": leak, SECRET_IN_ENV: [SECRET_IN_CONFIG]})
        run.append_event("u2", {"error": leak}, status="error")
        run.write_record({"log": [leak], "config": config})
        run.write_report(f"# Report\n{leak}\n", html=f"<p>{leak}</p>")
        run.set_status("running", note=leak)
    with pytest.raises(RuntimeError), Run.open(run.path) as again:
        again.append_event("u3", {"value": SECRET_IN_ENV})
        raise RuntimeError(leak)

    files = [p for p in run.path.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"run.json", "events.jsonl", "record.json", "report.md"}
    for path in files:
        text = path.read_text()
        assert SECRET_IN_CONFIG not in text, path.name
        assert SECRET_IN_ENV not in text and json.dumps(SECRET_IN_ENV)[1:-1] not in text
    events = Run.open(run.path).events()
    assert events[0]["data"]["value"] == "request failed with key *** and ***"
    assert Run.open(run.path).info["error"] == "RuntimeError: request failed with key *** and ***"


def test_secrets_set_or_rotated_after_creation_are_scrubbed(tmp_path: Path, monkeypatch) -> None:
    run = Run.create(tmp_path, kind="bench")
    monkeypatch.setenv("SILICOLAB_LATE_TOKEN", "late-secret-value-1")
    run.append_event("a", {"value": "late-secret-value-1"})
    monkeypatch.setenv("SILICOLAB_LATE_TOKEN", "rotated-secret-value-2")
    run.append_event("b", {"value": "rotated-secret-value-2"})
    assert [e["data"]["value"] for e in run.events()] == ["***", "***"]
