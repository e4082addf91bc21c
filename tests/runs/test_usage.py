"""Process accounting in ``run.json``: time and language-model calls summed over every
process that worked on a run, never in its record (so a resumed run's record is the
uninterrupted one's)."""

from __future__ import annotations

import json
from pathlib import Path

from silicolab.llm import load_model
from silicolab.llm.base import run_sync
from silicolab.runs import Run
from silicolab.runs.usage import add_ledgers


def _model() -> object:
    return load_model("scripted", fn=lambda request: "yes")


def _ask(model: object, times: int, tag: str = "survey") -> None:
    for i in range(times):
        run_sync(model.agenerate([{"role": "user", "content": f"q{i}"}], tag=tag))  # type: ignore[attr-defined]


def _info(run: Run) -> dict:
    return json.loads((run.path / "run.json").read_text())


def test_each_process_adds_its_calls_and_time_to_run_json(tmp_path: Path) -> None:
    first = _model()
    with Run.create(tmp_path, kind="study") as run:
        run.track_usage(lambda: {"subject": first.ledger.summary()})  # type: ignore[attr-defined]
        _ask(first, 3)
        run.write_record({"answer": 42})
    stored = _info(run)
    assert stored["llm_ledger"]["subject"]["calls"] == 3 and stored["runtime_s"] >= 0

    second = _model()  # a resume: a new process, a new model and ledger
    with Run.open(run.path) as again:
        again.track_usage(lambda: {"subject": second.ledger.summary()})  # type: ignore[attr-defined]
        _ask(second, 2, tag="statement")
        assert again.info["llm_ledger"]["subject"]["calls"] == 5  # already, before the write
    info = _info(again)
    subject = info["llm_ledger"]["subject"]
    assert subject["calls"] == 5 and subject["by_tag"]["survey"]["calls"] == 3
    assert subject["by_tag"]["statement"]["calls"] == 2
    assert info["runtime_s"] >= stored["runtime_s"]
    assert again.read_record() == {"schema_version": "1", "answer": 42}  # no accounting


def test_an_interrupted_process_keeps_its_share(tmp_path: Path) -> None:
    model = _model()
    run = Run.create(tmp_path, kind="study")
    try:
        with run:
            run.track_usage(lambda: {"scientist": model.ledger.summary()})  # type: ignore[attr-defined]
            _ask(model, 4)
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    info = _info(run)
    assert info["status"] == "interrupted"
    assert info["llm_ledger"]["scientist"]["calls"] == 4


def test_timings_are_kept_by_name_and_a_rerun_step_replaces_its_own(tmp_path: Path) -> None:
    with Run.create(tmp_path, kind="demo") as run:
        run.note_timing("discovery/pc", 0.51234)
        run.note_timing("discovery/exact", 0.01)
    with Run.open(run.path) as again:
        again.note_timing("discovery/pc", 0.4)
    assert _info(again)["timings"] == {"discovery/exact": 0.01, "discovery/pc": 0.4}


def test_ledgers_add_role_by_role() -> None:
    one = {"calls": 2, "cache_hits": 1, "cost": 0.5, "by_tag": {"a": {"calls": 2}}}
    two = {"calls": 1, "errors": 1, "by_tag": {"b": {"calls": 1, "errors": 1}}}
    total = add_ledgers({"subject": one}, {"subject": two, "scientist": two})
    assert total["subject"]["calls"] == 3 and total["subject"]["cost"] == 0.5
    assert total["subject"]["errors"] == 1 and total["subject"]["cache_hits"] == 1
    assert set(total["subject"]["by_tag"]) == {"a", "b"}
    assert total["scientist"]["calls"] == 1
