"""Interviews, experiments and social worlds: the interviewer, psychology_experiment,
situated and social_media game masters, the formative_memories initializer and the two
worlds built on them, all offline (the scripted model)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from silicolab.llm.types import Request
from silicolab.sim.game_master import Attempt
from silicolab.sim.prefabs.interview import treated_count
from silicolab.sim.simulation import Simulation

WORLDS = Path(__file__).parents[2] / "src" / "silicolab" / "sim" / "worlds"
QUESTION = {"variable": "price", "text": "How many dollars would you pay? Give a number."}


def _people(n: int) -> list[dict[str, Any]]:
    return [{"name": f"P{i}", "prefab": "minimal"} for i in range(n)]


def _experiment(n: int, share: float = 0.5, **extra: Any) -> Simulation:
    params = {
        "pre": [QUESTION],
        "manipulation": "Remember the number 90.",
        "control": "Remember the number 10.",
        "treated_share": share,
        **extra,
    }
    rules = [
        {"match": "number 90(?s:.*)Survey question", "reply": "50 dollars."},
        {"match": "number 10(?s:.*)Survey question", "reply": "12 dollars."},
        {"match": "Survey question", "reply": "20 dollars."},
    ]
    return Simulation.model_validate(
        {
            "name": "exp",
            "premise": "A lab study.",
            "entities": _people(n),
            "game_master": {"prefab": "psychology_experiment", "params": params},
            "offline": {"rules": rules},
        }
    )


# -- psychology_experiment ----------------------------------------------------------------


@pytest.mark.parametrize(("n", "share"), [(6, 0.5), (5, 0.5), (7, 0.3), (4, 1.0), (4, 0.0)])
def test_assignment_balanced_per_treated_share(n: int, share: float) -> None:
    out = _experiment(n, share).run(seed=3)
    condition = out.final_state["condition"]
    assert sorted(condition) == [f"P{i}" for i in range(n)]
    # an independent count: share * n rounded half up
    expected = int(share * n + 0.5)
    assert sum(c == "treatment" for c in condition.values()) == expected
    assert treated_count(n, share) == expected


def test_assignment_reproducible_per_seed_and_varies_across_seeds() -> None:
    sim = _experiment(8)
    first = [sim.run(seed=s).final_state["condition"] for s in range(6)]
    again = [sim.run(seed=s).final_state["condition"] for s in range(6)]
    assert first == again
    assert len({json.dumps(c, sort_keys=True) for c in first}) > 1


def test_pre_and_post_answers_land_per_entity_and_effect_is_visible() -> None:
    out = _experiment(6).run(seed=1)
    rows = {r["entity"]: r for r in out.per_entity}
    assert len(rows) == 6
    for row in rows.values():
        assert row["pre.price"] == 20.0
        assert row["condition"] in ("treatment", "control")
    # the effect computed independently from the rows
    post: dict[str, list[float]] = {"treatment": [], "control": []}
    for row in rows.values():
        post[row["condition"]].append(row["post.price"])
    mean = {c: sum(v) / len(v) for c, v in post.items()}
    assert mean == {"treatment": 50.0, "control": 12.0}
    # each participant was told only its own condition's text, privately
    told = {
        (s["who"], s["output"])
        for s in out.log.to_list()
        if s["kind"] == "observation" and "Remember" in s["output"]
    }
    expected = {
        (n, "Remember the number 90." if c == "treatment" else "Remember the number 10.")
        for n, c in out.final_state["condition"].items()
    }
    assert told == expected


def test_task_scene_runs_between_manipulation_and_post() -> None:
    sim = _experiment(2, task="What does {name} do with the note?")
    out = sim.run(seed=0)
    kinds = [(s["step"], s["kind"]) for s in out.log.to_list() if s["kind"] in ("action", "survey")]
    assert [k for _, k in kinds] == ["survey", "survey", "action", "action", "survey", "survey"]
    assert out.steps == 3


def test_checkpoint_resume_equals_uninterrupted_run(tmp_path: Path) -> None:
    sim = _experiment(6, task="What does {name} do with the note?")
    full = sim.run(seed=5).to_dict()
    path = tmp_path / "ck.json"
    sim.model_copy(update={"max_steps": 1}).run(seed=5, checkpoint=path)
    assert json.loads(path.read_text())["step"] == 1
    resumed = sim.run(seed=5, checkpoint=path, resume=True).to_dict()
    assert resumed == full


def test_interviewer_builds_its_survey_scene() -> None:
    sim = Simulation.model_validate(
        {
            "name": "poll",
            "entities": _people(3),
            "game_master": {
                "prefab": "interviewer",
                "params": {"questions": [QUESTION], "participants": ["P0", "P2"]},
            },
            "offline": {"rules": [{"match": "Survey question", "reply": "7"}]},
        }
    )
    out = sim.run(seed=0)
    assert out.final_state["answers"] == {"P0": {"price": 7.0}, "P2": {"price": 7.0}}
    assert out.steps == 1


# -- situated -----------------------------------------------------------------------------


def _situated() -> Simulation:
    return Simulation.model_validate(
        {
            "name": "town",
            "clock": {"start": "2024-01-01 09:00", "tick": "1h"},
            "entities": _people(2),
            "game_master": {
                "prefab": "situated",
                "params": {
                    "locations": ["home", "cafe", "park"],
                    "start_location": {"P1": "cafe"},
                    "scenes": [{"name": "day", "rounds": 2}],
                },
            },
            "offline": {
                "rules": [
                    {"match": "What does P0 do", "reply": "move(to='park')"},
                    {"match": "What does P1 do", "reply": "move(to='moon')"},
                ]
            },
        }
    )


def test_situated_move_tool_and_unknown_place_rejected() -> None:
    out = _situated().run(seed=0)
    assert out.final_state["location"] == {"P0": "park", "P1": "cafe"}
    reasons = [r["reason"] for r in out.rejected if r["actor"] == "P1"]
    assert reasons and all("moon is not a known place" in r for r in reasons)
    obs = [s["output"] for s in out.log.to_list() if s["kind"] == "observation"]
    assert "It is 2024-01-01 09:00 at home." in obs
    assert "It is 2024-01-01 10:00 at park." in obs
    assert "It is 2024-01-01 10:00 at cafe." in obs


def test_situated_narrator_cannot_move_to_unknown_place() -> None:
    gm, entities = _situated().build(seed=0)
    gm.begin(entities)
    res = gm.resolve(Attempt("P0", 'teleports {"tool": "move", "args": {"to": "Mars"}}'))
    assert res.rejected and "known places: home, cafe, park" in res.event
    assert gm.state["location"]["P0"] == "home"


# -- social media -------------------------------------------------------------------------


def test_social_media_post_reaches_only_followers() -> None:
    sim = Simulation.model_validate(
        {
            "name": "feed",
            "entities": _people(3),
            "game_master": {
                "prefab": "social_media",
                "params": {
                    "followers": {"P0": [], "P1": ["P0"], "P2": []},
                    "scenes": [
                        {"name": "post", "participants": ["P0"]},
                        {"name": "react", "call_to_action": "How does {name} react?"},
                    ],
                },
            },
            "offline": {
                "rules": [
                    {"match": "What does P0 do", "reply": "post(text='Cats are great')"},
                    {"match": "How does P[01] react", "reply": "like(post_id=1)"},
                    {"match": "How does P2 react", "reply": "P2 goes for a walk."},
                ]
            },
        }
    )
    out = sim.run(seed=0)
    seen = {
        s["who"]
        for s in out.log.to_list()
        if s["kind"] == "observation" and "Cats are great" in s["output"]
    }
    assert seen == {"P0", "P1"}
    (post,) = out.final_state["posts"]
    assert post["author"] == "P0" and post["likes"] == 1 and post["liked_by"] == ["P1"]
    assert out.final_state["likes_received"] == {"P0": 1, "P1": 0, "P2": 0}
    # P0's own like of its post is refused; P2's free text is narrated (offline: echoed)
    assert any(r["actor"] == "P0" and "your own post" in r["reason"] for r in out.rejected)
    assert "P2 goes for a walk." in out.events


# -- formative memories -------------------------------------------------------------------


def _memories_reply(request: Request) -> str:
    prompt = request.messages[-1]["content"]
    found = re.search(r"memories of (\w+).*these ages: ([\d, ]+)\.", prompt, re.S)
    if found is None:
        return "P waits."
    name, ages = found.group(1), [int(a) for a in found.group(2).split(",")]
    return json.dumps({"memories": [{"age": a, "memory": f"At {a}, {name} fell."} for a in ages]})


def test_formative_memories_seed_each_generative_agent(tmp_path: Path) -> None:
    from silicolab.sim.prefabs.base import RESPONDERS

    RESPONDERS["test_formative"] = _memories_reply
    sim = Simulation.model_validate(
        {
            "name": "bios",
            "entities": [
                {"name": "Ann", "prefab": "minimal"},
                {"name": "Bo", "prefab": "basic", "params": {"memories": 2}},
                {"name": "Cy", "prefab": "scripted", "params": {"lines": ["hi"]}},
            ],
            "game_master": {"prefab": "generic", "params": {"scenes": [{"name": "s"}]}},
            "initializer": {"prefab": "formative_memories", "params": {"ages": [5, 12, 18]}},
            "offline": {"responder": "test_formative"},
        }
    )
    path = tmp_path / "ck.json"
    sim.run(seed=0, checkpoint=path)
    saved = json.loads(path.read_text())["entities"]
    for name in ("Ann", "Bo"):
        items = saved[name]["memory"]["items"]
        backstory = [t for t, time, _ in items if time < 0]
        assert backstory == [f"At {a}, {name} fell." for a in (5, 12, 18)]
        assert "memory" in saved[name]["components"]
    assert "memory" not in saved["Cy"]
    # a resumed run (the initializer does not run again) rebuilds the attached memory
    sim.run(seed=0, checkpoint=path, resume=True)
    again = json.loads(path.read_text())["entities"]
    assert again["Ann"]["memory"] == saved["Ann"]["memory"]


# -- the worlds ---------------------------------------------------------------------------


@pytest.mark.parametrize("world", ["psychology_experiment", "property_dispute"])
def test_world_loads_runs_offline_deterministically(world: str, tmp_path: Path) -> None:
    sim = Simulation.load(WORLDS / f"{world}.yaml")
    assert sim.name == world and sim.description and sim.premise
    first, again = sim.run(seed=2).to_dict(), sim.run(seed=2).to_dict()
    assert first == again
    path = tmp_path / "ck.json"
    sim.model_copy(update={"max_steps": 1}).run(seed=2, checkpoint=path)
    assert sim.run(seed=2, checkpoint=path, resume=True).to_dict() == first


def test_psychology_world_shows_the_anchoring_effect() -> None:
    out = Simulation.load(WORLDS / "psychology_experiment.yaml").run(seed=0)
    by: dict[str, list[float]] = {"treatment": [], "control": []}
    for row in out.per_entity:
        assert row["pre.wine_price"] == 20.0
        by[row["condition"]].append(row["post.wine_price"] - row["pre.wine_price"])
    assert len(by["treatment"]) == len(by["control"]) == 3
    assert min(by["treatment"]) > max(by["control"])


def test_property_dispute_world_settles() -> None:
    out = Simulation.load(WORLDS / "property_dispute.yaml").run(seed=0)
    assert out.final_state["resolved"] is True
    assert out.final_state["compensation_paid"] == {"Ann": 300}
    rows = {r["entity"]: r for r in out.per_entity}
    assert rows["Ann"]["compensation_paid"] == 300
    assert {rows["Ann"]["settlement"], rows["Ben"]["settlement"]} == {"accept"}


def test_reference_shuffle_matches_assignment() -> None:
    """The assignment is the seeded shuffle, recomputed here independently."""
    out = _experiment(6).run(seed=11)
    names = [f"P{i}" for i in range(6)]
    rng = random.Random(11)
    rng.shuffle(names)
    assert {n for n, c in out.final_state["condition"].items() if c == "treatment"} == set(
        names[:3]
    )
