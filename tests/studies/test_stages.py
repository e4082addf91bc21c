"""Nothing finished is lost: the main study is on disk before predictions and the
follow-on start, a failed later stage is recorded and makes the run degraded, and a resume
redoes only that stage (the conditions come from their events, kept results from theirs)."""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd

from silicolab.llm import load_model
from silicolab.runs import Run
from silicolab.studies import Hypothesis, load_example
from silicolab.studies.hypothesis import StudyVariable
from silicolab.studies.offline import offline_scientist
from silicolab.studies.pipeline import StudyModels, StudyOptions
from silicolab.studies.scripted import step_of
from silicolab.studies.study import run_study
from silicolab.studies.world import HiddenWorld

NEW = [
    StudyVariable(
        name="defendant_income",
        role="cause",
        type="continuous",
        units="dollars per year",
        description="The defendant's yearly income.",
        values=["$20000", "$60000", "$120000"],
        agent="defendant",
        attribute="your yearly income",
        visibility="public",
        public_name="the defendant's yearly income",
    ),
    StudyVariable(
        name="prosecutor_caseload",
        role="cause",
        type="count",
        units="open cases",
        description="How many open cases the prosecutor has.",
        values=["1", "5", "10"],
        agent="prosecutor",
        attribute="number of open cases you have",
    ),
]
EFFECTS = {"criminal_history": 500.0, "judge_cases_today": 0.0, "remorse": -800.0}
PREDICT_STEPS = {"predict_y", "predict_loo", "predict_beta"}


def _universe(hypothesis: Hypothesis) -> Hypothesis:
    """The bail study with two more causes: what the scientist proposes next."""
    outcome = hypothesis.outcome
    causes = outcome.causes + [v.name for v in NEW]
    variables = [outcome.model_copy(update={"causes": causes}), *hypothesis.treatments, *NEW]
    data = hypothesis.model_dump() | {"variables": [v.model_dump() for v in variables]}
    return Hypothesis.model_validate(data)


def _models(hypothesis: Hypothesis, scientist_fn, subject_calls: list[str]) -> StudyModels:
    universe = _universe(hypothesis)
    world = HiddenWorld(
        universe, {**EFFECTS, "defendant_income": -0.01}, intercept=20_000.0,
        noise_sd=2000.0, seed=1,
    )  # fmt: skip

    def subjects(request):
        subject_calls.append(request.messages[-1]["content"])
        return world(request)

    subject = load_model("scripted", fn=subjects)
    return StudyModels(load_model("scripted", fn=scientist_fn), subject, subject)


def _counting(fn, steps: Counter):
    def reply(request):
        steps[step_of(request)[0]] += 1
        return fn(request)

    return reply


def test_a_failed_follow_on_keeps_the_main_study_and_resume_redoes_only_it(tmp_path):
    hypothesis = load_example("bail").model_copy(update={"max_statements": 4})
    good = offline_scientist(hypothesis, 0, follow_on=_universe(hypothesis))

    def refuses_to_plan(request):
        if step_of(request)[0] == "causes":  # the follow-on's first scientist question
            return "I would rather not propose anything."
        return good(request)

    options = StudyOptions(conditions=24, jobs=4, predict=True, follow_on=True)
    first_steps: Counter = Counter()
    first_subjects: list[str] = []
    models = _models(hypothesis, _counting(refuses_to_plan, first_steps), first_subjects)
    with Run.create(tmp_path, kind="study", slug="bail") as run:
        first = run_study(hypothesis, options, run=run, models=models)
    # the main study and the predictions are on disk; the follow-on failure is recorded
    assert run.status == "degraded"
    on_disk = json.loads(run.record_path.read_text())
    stages = on_disk["stages"]
    assert stages["main"] == {"status": "done"} and stages["predictions"] == {"status": "done"}
    assert stages["follow_on"]["status"] == "failed"
    assert "ParseFailure" in stages["follow_on"]["reason"]
    assert "causes" in stages["follow_on"]["reason"]  # the step that failed is named
    assert on_disk["estimation"]["main"]["n"] == 24 and on_disk["fit_error"] is None
    assert on_disk["predictions"]["mse"]["loo_mechanical"] is not None
    assert len(pd.read_csv(run.path / "data.csv")) == 24
    assert (run.path / "columns.json").is_file()
    summary = Run.open(run.path).info["health_summary"]
    assert summary.startswith("DEGRADED") and "follow-on stage failed" in summary
    assert "silicolab study run --resume" in summary
    assert first_steps["causes"] >= 1 and first_steps["predict_y"] == 24
    assert first["health"]["problems"] and first["health"]["degraded"] is True

    # resume with a scientist that plans: only the follow-on runs
    second_steps: Counter = Counter()
    second_subjects: list[str] = []
    models = _models(hypothesis, _counting(good, second_steps), second_subjects)
    reopened = Run.open(run.path)
    with reopened:
        second = run_study(hypothesis, options, run=reopened, models=models)
    assert reopened.status == "finished", reopened.info.get("health_summary")
    assert {s["status"] for s in second["stages"].values()} == {"done"}
    assert not PREDICT_STEPS & set(second_steps)  # the kept predictions were not redone
    assert second_steps["causes"] == 1
    assert second["predictions"] == first["predictions"]
    assert second["estimation"]["main"] == first["estimation"]["main"]
    units = Counter(e["unit"] for e in reopened.events() if e["status"] == "ok")
    assert all(count == 1 for count in units.values())  # no condition or stage ran twice
    main_units = [u for u in units if not u.startswith(("followon/", "stage:"))]
    follow_units = [u for u in units if u.startswith("followon/")]
    assert len(main_units) == 24 and follow_units
    assert {"stage:predictions", "stage:follow_on_plan"} <= set(units)
    # every subject call of the resume was one of the follow-on's conditions' calls
    added = second["follow_on"]["plan"]["added"]
    assert added and set(added) <= {v.name for v in NEW}
    assert len(first_subjects) == sum(r["calls"] for r in first["runs"])
    assert len(second_subjects) == sum(r["calls"] for r in second["follow_on"]["runs"]) > 0
    assert len(second["follow_on"]["runs"]) == len(follow_units)


def test_a_main_model_that_cannot_be_fitted_is_degraded_and_skips_what_needs_it(tmp_path):
    options = StudyOptions(subjects="rule", conditions=4, predict=True)
    with Run.create(tmp_path, kind="study", slug="auction") as run:
        record = run_study(load_example("auction"), options, run=run)
    assert run.status == "degraded"
    assert record["estimation"] is None and "not estimable" in record["fit_error"]
    assert record["fit_problems"] and record["fit_problems"][0]["equation"] == "final_price"
    assert record["stages"]["predictions"]["status"] == "skipped"
    info = Run.open(run.path).info
    assert info["status"] == "degraded" and "could not be fitted" in info["health_summary"]
    assert json.loads(run.record_path.read_text())["fit_problems"] == record["fit_problems"]


def test_predict_without_a_scientist_runs_the_mechanical_loo(tmp_path):
    options = StudyOptions(subjects="rule", conditions=40, predict=True)
    with Run.create(tmp_path, kind="study", slug="auction") as run:
        record = run_study(load_example("auction"), options, run=run)
    assert run.status == "finished"
    predictions = record["predictions"]
    assert predictions["mse"]["loo_mechanical"] is not None
    assert predictions["mse"].get("predict_y") is None
    assert "mechanical leave-one-out" in predictions["note"]
    assert record["stages"]["predictions"] == {"status": "done", "note": predictions["note"]}
    assert record["models"]["subject"] == "rule" and record["models"]["scientist"] is None
