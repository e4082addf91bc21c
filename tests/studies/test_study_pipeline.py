"""Whole studies: the auction with rule-based bidders against theory, a study on the
scripted hidden-SCM world (offline and over real HTTP), degraded runs, and resume."""

from __future__ import annotations

import itertools
import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from silicolab.llm import load_model
from silicolab.runs import Run
from silicolab.studies import load_example, make_design
from silicolab.studies.pipeline import StudyModels, StudyOptions
from silicolab.studies.study import run_study
from silicolab.studies.world import HiddenWorld


def _theory_price(budgets: list[float], rule: str, increment: float = 50.0) -> float:
    """Second-highest budget (the second bidder's last accepted clock price on this
    grid), or one increment above it capped at the highest budget."""
    ordered = sorted(budgets)
    second, highest = ordered[-2], ordered[-1]
    return second if rule == "second_dropout" else min(second + increment, highest)


@pytest.mark.parametrize("rule", ["second_dropout", "next_increment"])
def test_auction_rule_based_fit_equals_theory_fit(tmp_path, rule):
    hypothesis = load_example("auction")
    options = StudyOptions(subjects="rule", rule_options={"price_rule": rule})
    with Run.create(tmp_path, kind="study", slug="auction") as run:
        record = run_study(hypothesis, options, run=run)
    assert run.status == "finished" and len(record["runs"]) == 343
    # theory prices and their OLS fit, computed here independently of the pipeline
    design = make_design(hypothesis)
    budgets = np.array(
        [
            [float(c.treatments[f"budget_{k}"].strip("$")) for k in (1, 2, 3)]
            for c in design.conditions
        ]
    )
    prices = np.array([_theory_price(list(row), rule) for row in budgets])
    observed = {r["condition_id"]: r["values"]["final_price"] for r in record["runs"]}
    assert [observed[c.id] for c in design.conditions] == list(prices)
    ols = sm.OLS(prices, sm.add_constant(budgets)).fit()
    n, k = len(prices), 4
    ml_se = ols.bse * np.sqrt((n - k) / n)  # lavaan's ML standard errors
    main = record["estimation"]["main"]
    paths = {p["rhs"]: p for p in main["params"] if p["op"] == "~"}
    intercept = next(p for p in main["params"] if p["op"] == "~1")
    for j, name in enumerate(("budget_1", "budget_2", "budget_3"), start=1):
        assert abs(paths[name]["est"] - ols.params[j]) < 1e-9
        assert abs(paths[name]["se"] - ml_se[j]) < 1e-9
    assert abs(intercept["est"] - ols.params[0]) < 1e-9
    assert abs(main["r2"]["final_price"] - ols.rsquared) < 1e-9
    # the second-highest budget explains the second-dropout price exactly: that model is
    # a perfect fit, not estimable, and no test is computed from it
    tests = record["estimation"]["tests"]
    assert len(tests) == 2
    alternatives = record["estimation"]["alternatives"]
    if rule == "second_dropout":
        assert "final_price ~ second_highest_budget" not in alternatives
        assert all("perfect_fit" in t["skipped"] for t in tests)
        assert all("p" not in t for t in tests)
    else:
        assert alternatives["final_price ~ second_highest_budget"]["r2"]["final_price"] < 1
    assert (run.path / "data.csv").is_file()


BAIL_EFFECTS = {"criminal_history": 500.0, "judge_cases_today": 0.0, "remorse": -800.0}


def _world_models(world: HiddenWorld, cache_path) -> StudyModels:
    model = load_model("scripted", fn=world, cache_path=cache_path)
    return StudyModels(model, model, model)


def test_world_study_recovers_hidden_coefficients_within_cis(tmp_path):
    hypothesis = load_example("bail").model_copy(update={"max_statements": 8})
    world = HiddenWorld(hypothesis, BAIL_EFFECTS, intercept=20_000.0, noise_sd=2000.0, seed=1)
    models = _world_models(world, tmp_path / "cache.sqlite")
    with Run.create(tmp_path, kind="study", slug="bail") as run:
        record = run_study(hypothesis, StudyOptions(jobs=8), run=run, models=models)
    assert run.status == "finished"
    assert len(record["runs"]) == 245 and record["data"]["na_counts"] == {"bail_amount": 0}
    paths = {p["rhs"]: p for p in record["estimation"]["main"]["params"] if p["op"] == "~"}
    for cause, truth in BAIL_EFFECTS.items():
        assert paths[cause]["ci_low"] <= truth <= paths[cause]["ci_high"], cause
    first = record["runs"][0]
    assert first["stop_reason"] == "coordinator"  # the world's coordinator ends it
    assert [s["speaker"] for s in first["statements"]][:2] == ["judge", "prosecutor"]
    assert first["survey"][0]["addressee"] == "judge" and first["survey"][0]["raw"]
    # central_ordered: the judge speaks every other statement, never twice in a row
    for run_ in record["runs"]:
        speakers = [s["speaker"] for s in run_["statements"]]
        assert all(a != b for a, b in itertools.pairwise(speakers))
    assert "sk-" not in json.dumps(record)


def test_degraded_when_the_model_only_echoes(tmp_path):
    hypothesis = load_example("lawyer")
    echo = load_model("scripted", fn=lambda request: "I am not sure what you mean.")
    models = StudyModels(echo, echo, echo)
    options = StudyOptions(conditions=6, jobs=3)
    with Run.create(tmp_path, kind="study", slug="lawyer") as run:
        record = run_study(hypothesis, options, run=run, models=models)
    assert run.status == "degraded"
    assert record["health"]["degraded"] is True
    assert record["health"]["totals"]["failed_units"] >= 1
    summary = Run.open(run.path).info["health_summary"]
    # why: how many conditions, the first one, the step that failed and a sample reply
    first = record["runs"][0]
    assert summary.startswith("DEGRADED: 6 of 6 conditions unusable; first ")
    assert f"first {first['condition_id']}: the conversation failed: ParseFailure" in summary
    assert "coordinator, act 0" in summary
    assert "sample reply 'I am not sure what you mean.'" in summary
    assert "the main model could not be fitted" in summary
    assert record["health"]["problems"] and summary.endswith(record["health"]["problems"][-1])


def test_degraded_survey_names_the_unreadable_question(tmp_path):
    hypothesis = load_example("lawyer").model_copy(update={"max_statements": 4})
    world = HiddenWorld(hypothesis, {"passed_bar": 0.5}, intercept=0.2)

    def unreadable_survey(request):
        if any("Have you decided to hire" in m["content"] for m in request.messages):
            return "Banana."
        return world(request)

    model = load_model("scripted", fn=unreadable_survey)
    with Run.create(tmp_path, kind="study", slug="lawyer") as run:
        run_study(hypothesis, StudyOptions(conditions=6, jobs=3), run=run,
                  models=StudyModels(model, model, model))  # fmt: skip
    summary = Run.open(run.path).info["health_summary"]
    assert run.status == "degraded"
    assert "no survey answer could be read: hired (asked employer)" in summary
    assert "sample reply 'Banana.'" in summary


def test_resume_runs_only_unfinished_conditions(tmp_path):
    hypothesis = load_example("lawyer").model_copy(update={"max_statements": 4})
    world = HiddenWorld(hypothesis, {"passed_bar": 0.6}, intercept=0.2, noise_sd=0.0)
    calls: list[str] = []

    def counting(request):
        calls.append(request.messages[-1]["content"])
        return world(request)

    model = load_model("scripted", fn=counting)
    models = StudyModels(model, model, model)
    options = StudyOptions(jobs=4)
    run = Run.create(tmp_path, kind="study", slug="lawyer")
    # finish 20 conditions, as a killed run would have left them
    design = make_design(hypothesis)
    from silicolab.llm.base import run_sync
    from silicolab.studies.conduct import arun_condition

    for condition in design.conditions[:20]:
        done = run_sync(
            arun_condition(hypothesis, condition, subject_model=model, coordinator_model=model)
        )
        run.append_event(condition.id, done.to_dict())
    before = len(calls)
    with Run.open(run.path) as again:
        record = run_study(hypothesis, options, run=again, models=models)
    per_condition = before / 20
    assert len(calls) - before == pytest.approx(60 * per_condition, rel=0.25)
    ids = [r["condition_id"] for r in record["runs"]]
    assert len(ids) == 80 == len(set(ids))
    events = [e["unit"] for e in Run.open(run.path).events()]
    assert len(events) == len(set(events)) == 80  # every condition exactly once


def _http_world_reply(world: HiddenWorld):
    def reply(body: dict) -> str:
        return world(SimpleNamespace(messages=body["messages"]))

    return reply


def test_study_over_real_http(tmp_path, llm_server_factory):
    hypothesis = load_example("lawyer").model_copy(update={"max_statements": 4})
    world = HiddenWorld(hypothesis, {"passed_bar": 0.6}, intercept=0.2, noise_sd=0.0)
    server = llm_server_factory(reply=_http_world_reply(world))
    cache = tmp_path / "cache.sqlite"
    model = load_model(
        "openai:fake-model", base_url=server.base_url, max_concurrency=8, cache_path=cache
    )
    models = StudyModels(model, model, model)
    with Run.create(tmp_path, kind="study", slug="lawyer") as run:
        record = run_study(hypothesis, StudyOptions(conditions=12, jobs=6), run=run, models=models)
    assert run.status == "finished" and len(record["runs"]) == 12
    served = server.stats.ok
    ledger = json.loads((run.path / "run.json").read_text())["llm_ledger"]["scientist"]
    assert "llm_ledger" not in record  # process accounting lives in run.json
    assert served == ledger["calls"] - ledger["cache_hits"]
    table = pd.read_csv(run.path / "data.csv")
    assert table.hired.notna().all()
    # a rerun in a new run directory is served from the cache: no request reaches the server
    model2 = load_model("openai:fake-model", base_url=server.base_url, cache_path=cache)
    with Run.create(tmp_path, kind="study", slug="again") as run2:
        run_study(
            hypothesis,
            StudyOptions(conditions=12, jobs=6),
            run=run2,
            models=StudyModels(model2, model2, model2),
        )
    assert server.stats.ok == served


def test_offline_study_with_scientist_steps_recovers_hidden_coefficients(tmp_path):
    from silicolab.studies.offline import offline_models
    from silicolab.studies.scientist import generate_hypothesis

    target = load_example("bail").model_copy(update={"max_statements": 8})
    models = offline_models(
        target, BAIL_EFFECTS, intercept=20_000.0, noise_sd=2000.0, seed=2,
        cache_path=tmp_path / "cache.sqlite",
    )  # fmt: skip
    hypothesis = generate_hypothesis(target.scenario, models.scientist, n_causes=3)
    assert [v.name for v in hypothesis.treatments] == [v.name for v in target.treatments]
    assert hypothesis.protocol == "central_ordered" and hypothesis.central == "judge"
    options = StudyOptions(jobs=8, predict=True, predict_conditions=10)
    with Run.create(tmp_path, kind="study", slug="bail") as run:
        record = run_study(hypothesis, options, run=run, models=models)
    assert run.status == "finished"
    paths = {p["rhs"]: p for p in record["estimation"]["main"]["params"] if p["op"] == "~"}
    for cause, truth in BAIL_EFFECTS.items():
        assert paths[cause]["ci_low"] <= truth <= paths[cause]["ci_high"], cause
    assert len(record["decisions"]) > 10 and all(d["explanation"] for d in record["decisions"])
    assert record["predictions"]["mse"]["loo_mechanical"] > 0
    assert set(run.info["llm_ledger"]) == {"scientist", "subject"}
