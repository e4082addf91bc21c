"""Independent draws: every call of a condition carries its unit id (condition and
replicate), so conditions whose prompts coincide never share a reply while a rerun is
served by the cache; replicates; random human names; the coordinator's decisions."""

from __future__ import annotations

import json
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from silicolab.llm import load_model
from silicolab.llm.base import run_sync
from silicolab.runs import Run
from silicolab.studies import load_example, make_design
from silicolab.studies.conduct import ConditionRun, arun_condition
from silicolab.studies.data import aggregate_replicates, column_dictionary, study_table
from silicolab.studies.design import Condition
from silicolab.studies.files import hypothesis_from_data
from silicolab.studies.names import FIRST_NAMES, random_names
from silicolab.studies.offline import offline_study_models, offline_world, truth_rows
from silicolab.studies.pipeline import StudyModels, StudyOptions
from silicolab.studies.study import run_study
from silicolab.studies.world import HiddenWorld


def _mug_pair() -> tuple[Condition, Condition]:
    """Two mug conditions whose buyer sees the same prompt: budget $13 for both, the
    seller's minimum $13 in one and $18 in the other (the buyer speaks first)."""
    design = make_design(load_example("mug"))

    def find(minimum: str) -> Condition:
        return next(
            c
            for c in design.conditions
            if c.treatments["buyer_budget"] == "$13"
            and c.treatments["seller_min_price"] == minimum
            and c.treatments["seller_attachment"] == "no emotional attachment"
        )

    return find("$13"), find("$18")


class Recorder:
    """A reply function over the hidden world that records every request and adds the
    request's sample index to each statement (so a shared draw would show)."""

    def __init__(self, world: HiddenWorld) -> None:
        self.world = world
        self.requests: list = []

    def __call__(self, request) -> str:
        self.requests.append(request)
        text = self.world(request)
        if "Write what you say next" in request.messages[-1]["content"]:
            return f"(draw {request.sample_index}) {text}"
        return text


def _condition(hypothesis, condition, model, **kw) -> ConditionRun:
    return run_sync(
        arun_condition(hypothesis, condition, subject_model=model, coordinator_model=model, **kw)
    )


def test_conditions_whose_prompts_coincide_draw_independently(tmp_path) -> None:
    hypothesis = load_example("mug")
    recorder = Recorder(offline_world(hypothesis))
    model = load_model("scripted", fn=recorder, cache_path=tmp_path / "cache.sqlite")
    a, b = _mug_pair()
    runs, per_condition = [], []
    for condition in (a, b):
        recorder.requests.clear()
        runs.append(_condition(hypothesis, condition, model))
        per_condition.append(list(recorder.requests))
    assert len(per_condition[0]) == len(per_condition[1]) > 4
    # the buyer's first prompt is the same in both conditions ...
    first = [reqs[0] for reqs in per_condition]
    assert first[0].messages == first[1].messages
    # ... yet no call of one condition (statements, coordinator, survey) repeats a call
    # of the other: each carries its condition's sample identity
    keys = [{(json.dumps(r.messages), r.sample_index) for r in reqs} for reqs in per_condition]
    assert not keys[0] & keys[1]
    assert {r.tag for r in recorder.requests} >= {"conversation", "coordinator", "survey"}
    assert runs[0].statements[0]["text"] != runs[1].statements[0]["text"]
    # a rerun of the same conditions is answered by the cache: no new request
    recorder.requests.clear()
    again = [_condition(hypothesis, c, model) for c in (a, b)]
    assert recorder.requests == []
    assert [r.to_dict() for r in again] == [r.to_dict() for r in runs]


def test_over_http_coinciding_prompts_send_two_requests_and_a_rerun_sends_none(
    tmp_path, llm_server_factory
) -> None:
    hypothesis = load_example("mug")
    world = offline_world(hypothesis)
    server = llm_server_factory(
        reply=lambda body: world(SimpleNamespace(messages=body["messages"])), log_limit=10_000
    )
    cache = tmp_path / "cache.sqlite"
    a, b = _mug_pair()

    def run_both() -> list[ConditionRun]:
        model = load_model("openai:fake-model", base_url=server.base_url, cache_path=cache)
        return [_condition(hypothesis, c, model) for c in (a, b)]

    runs = run_both()
    prompts = Counter(json.dumps(body["messages"]) for body in server.stats.requests_log)
    buyer_first = [
        body
        for body in server.stats.requests_log
        if "Conversation so far:\n(nothing has been said yet)" in body["messages"][-1]["content"]
    ]
    # the identical first prompt went to the server twice (today's code sent it once), each
    # time with its condition's sample identity as the sampling seed
    assert prompts[json.dumps(buyer_first[0]["messages"])] == 2
    assert len({b["seed"] for b in buyer_first if b["messages"] == buyer_first[0]["messages"]}) == 2
    assert all(r.error is None for r in runs)
    served = server.stats.ok
    assert served == len(server.stats.requests_log)
    rerun = run_both()
    assert server.stats.ok == served  # every call answered by the cache
    assert [r.to_dict() for r in rerun] == [r.to_dict() for r in runs]


def test_replicates_are_independent_draws_and_rows_carry_them(tmp_path) -> None:
    hypothesis = load_example("bail").model_copy(update={"max_statements": 8})
    recorder = Recorder(offline_world(hypothesis, seed=3))
    model = load_model("scripted", fn=recorder)
    options = StudyOptions(conditions=4, replicates=3, jobs=4, seed=3)
    with Run.create(tmp_path, kind="study", slug="bail") as run:
        record = run_study(hypothesis, options, run=run, models=StudyModels(model, model, model))
    runs = [ConditionRun.from_dict(r) for r in record["runs"]]
    assert sorted(Counter(r.condition.id for r in runs).values()) == [3, 3, 3, 3]
    assert {r.condition.replicate for r in runs} == {0, 1, 2}
    # within a condition the replicates drew apart: different first statements (sample
    # identities) and different outcomes
    by_condition: dict[str, list[ConditionRun]] = {}
    for r in runs:
        by_condition.setdefault(r.condition.id, []).append(r)
    for reps in by_condition.values():
        assert len({r.statements[0]["text"] for r in reps}) == 3
        assert len({r.values["bail_amount"] for r in reps}) == 3
    table = study_table(hypothesis, runs)
    assert list(table.columns[:2]) == ["condition_id", "replicate"]
    assert sorted(table.replicate.tolist()) == [0] * 4 + [1] * 4 + [2] * 4
    assert "replicate" in {c["column"] for c in column_dictionary(hypothesis)}
    # events are keyed by unit id, and a resumed load restores the replicate
    units = {e["unit"] for e in Run.open(run.path).events()}
    assert {f"{c}/r{k}" for c in by_condition for k in (1, 2)} <= units


def test_aggregate_replicates_equals_a_pandas_groupby() -> None:
    hypothesis = load_example("bail")
    gen = np.random.default_rng(0)
    rows = []
    for i in range(5):
        for rep in range(3):
            rows.append(
                {
                    "condition_id": f"c-{i}",
                    "replicate": rep,
                    "criminal_history": float(i),
                    "judge_cases_today": 2.0,
                    "remorse": 1.0 + i % 3,
                    "bail_amount": float(gen.normal(1000, 100)),
                    "stop_reason": ["coordinator", "cap"][int(rep == 2 and i % 2)],
                    "n_statements": int(gen.integers(2, 9)),
                }
            )
    table = pd.DataFrame(rows)
    table.loc[[1, 4, 12, 13, 14], "bail_amount"] = np.nan  # condition c-4: all NA
    out = aggregate_replicates(hypothesis, table)
    grouped = table.groupby("condition_id", sort=False)
    assert out.condition_id.tolist() == [f"c-{i}" for i in range(5)]
    np.testing.assert_allclose(out.bail_amount, grouped.bail_amount.mean().to_numpy())
    assert np.isnan(out.bail_amount.iloc[4])
    np.testing.assert_allclose(out.n_statements, grouped.n_statements.mean().to_numpy())
    assert out.replicates.tolist() == grouped.size().tolist() == [3] * 5
    assert out.criminal_history.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert out.stop_reason.tolist() == ["coordinator"] * 5  # the most frequent of 3


def test_aggregate_replicates_takes_the_mode_of_a_nominal_outcome() -> None:
    data = load_example("mug").to_dict()
    for v in data["variables"]:
        if v["name"] == "deal":
            v.update(type="nominal", levels=["no", "yes", "later"], aggregation="mode")
    hypothesis = hypothesis_from_data(data)
    answers = [["yes", "no", "yes"], ["later", None, "later"], [None, None, None], ["no"]]
    rows = [
        {"condition_id": f"c-{i}", "replicate": r, "buyer_budget": 3.0, "seller_min_price": 3.0,
         "seller_attachment": 1.0, "deal": a, "stop_reason": "coordinator", "n_statements": 2}
        for i, reps in enumerate(answers) for r, a in enumerate(reps)
    ]  # fmt: skip
    out = aggregate_replicates(hypothesis, pd.DataFrame(rows))
    expected = []
    for reps in answers:
        present = [a for a in reps if a is not None]
        expected.append(Counter(present).most_common(1)[0][0] if present else None)
    got = [None if pd.isna(v) else v for v in out.deal]
    assert got == expected and out.replicates.tolist() == [3, 3, 3, 1]


def test_random_names_are_seeded_distinct_and_valid() -> None:
    ids = ["judge", "prosecutor", "defense_attorney", "defendant"]
    names = random_names(ids, seed=0, unit_id="c-1")
    assert names == random_names(ids, seed=0, unit_id="c-1")
    assert list(names) == ids and len(set(names.values())) == 4
    assert set(names.values()) <= set(FIRST_NAMES) and len(set(FIRST_NAMES)) == len(FIRST_NAMES)
    draws = {tuple(random_names(ids, seed=s, unit_id=u).values()) for s in (0, 1)
             for u in ("c-1", "c-2", "c-1/r1")}  # fmt: skip
    assert len(draws) == 6  # seed and unit both change the draw


def test_random_names_are_spoken_recorded_and_the_world_recovers_its_effects(tmp_path) -> None:
    hypothesis = load_example("bail").model_copy(update={"max_statements": 8})
    world = offline_world(hypothesis, seed=4)
    models = offline_study_models(hypothesis, seed=4, world=world)
    options = StudyOptions(agent_names="random", seed=4, jobs=8)
    with Run.create(tmp_path, kind="study", slug="bail") as run:
        record = run_study(hypothesis, options, run=run, models=models)
    assert run.status == "finished" and record["data"]["na_counts"] == {"bail_amount": 0}
    ids = [a.name for a in hypothesis.agents]
    for r in record["runs"]:
        names = r["names"]
        assert names == random_names(ids, seed=4, unit_id=r["condition_id"])
        speakers = [s["speaker"] for s in r["statements"]]
        assert set(speakers) <= set(names.values()) and speakers[0] == names["judge"]
        assert speakers[0::2] == [names["judge"]] * len(speakers[0::2])  # central: the judge
        assert r["survey"][0]["addressee"] == "judge"  # questions still go to agent ids
    assert len({tuple(r["names"].values()) for r in record["runs"]}) > 100
    rows = truth_rows(record["estimation"], world.truth())
    assert [row["covered"] for row in rows] == [True] * 4, rows


def test_coordinator_decisions_and_discarded_drafts_reach_the_record(tmp_path) -> None:
    hypothesis = load_example("lawyer").model_copy(update={"protocol": "coordinator_after"})
    models = offline_study_models(hypothesis, seed=1)
    with Run.create(tmp_path, kind="study", slug="lawyer") as run:
        record = run_study(
            hypothesis, StudyOptions(conditions=4, agent_names="random", seed=1), run=run,
            models=models,
        )  # fmt: skip
    for r in record["runs"]:
        turns = r["coordination"]
        names = r["names"]
        said = [s["text"] for s in r["statements"]]
        assert [t["turn"] for t in turns] == list(range(len(turns)))
        # each turn: both agents (by name) drafted, the coordinator realized one
        assert set(turns[0]["options"]) == set(names.values())
        realized = [d["text"] for t in turns for d in t["drafts"] if d["realized"]]
        assert realized == said
        assert any(not d["realized"] for t in turns for d in t["drafts"])
        assert turns[-1]["decision"] == "STOP"
        restored = ConditionRun.from_dict(json.loads(json.dumps(r)))
        assert restored.coordination == turns and restored.names == names


def test_old_events_without_replicate_names_or_coordination_still_load() -> None:
    hypothesis = load_example("lawyer")
    condition = make_design(hypothesis).conditions[0]
    old = {
        "condition_id": condition.id, "index": condition.index,
        "treatments": condition.treatments, "statements": [], "stop_reason": "cap",
        "survey": [], "values": {"hired": 1.0},
    }  # fmt: skip
    run = ConditionRun.from_dict(old)
    assert run.condition == condition and run.names == {} and run.coordination == []
    assert run.to_dict()["replicate"] == 0


def test_unknown_agent_names_setting_is_refused() -> None:
    hypothesis = load_example("lawyer")
    model = load_model("scripted")
    condition = make_design(hypothesis).conditions[0]
    with pytest.raises(Exception, match="agent_names must be one of roles, random, got 'famous'"):
        _condition(hypothesis, condition, model, agent_names="famous")
    with pytest.raises(Exception, match="survey must be one of at_once, in_turn, got 'random'"):
        _condition(hypothesis, condition, model, survey="random")
