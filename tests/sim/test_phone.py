"""The phone game master: calendar and messages apps executed as code, the phone world."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from silicolab.llm import load_model
from silicolab.sim.game_master import Attempt, GameMaster
from silicolab.sim.prefabs.game_masters import TOOLSETS
from silicolab.sim.prefabs.phone import PHONE_INSTRUCTIONS, parse_day, parse_time
from silicolab.sim.simulation import Simulation

WORLD = Path(__file__).parents[2] / "src/silicolab/sim/worlds/phone.yaml"
PEOPLE = ("Ana", "Ben", "Cleo")


def phone_sim(prefab: str = "phone", params: dict[str, Any] | None = None) -> Simulation:
    return Simulation.model_validate(
        {
            "name": "phone-test",
            "entities": [{"name": n, "prefab": "minimal"} for n in PEOPLE],
            "game_master": {
                "prefab": prefab,
                "params": {"scenes": [{"name": "day"}], **(params or {})},
            },
        }
    )


def started(model: Any = None, prefab: str = "phone", **params: Any) -> GameMaster:
    gm, entities = phone_sim(prefab, params).build(gm_model=model)
    gm.begin(entities, seed=0)
    for name in PEOPLE:
        gm.pending(name)  # drop the (empty) premise queue so tests see only the phone's
    return gm


def use(gm: GameMaster, actor: str, call: str) -> Any:
    return gm.resolve(Attempt(actor, call, step=0))


def test_the_apps_are_registered_tool_sets() -> None:
    assert [f.__name__ for f in TOOLSETS["calendar"]()] == [
        "add_event",
        "list_events",
        "cancel_event",
    ]
    assert [f.__name__ for f in TOOLSETS["messages"]()] == ["send_message", "read_messages"]


def test_send_message_fills_only_the_recipients_inbox() -> None:
    gm = started()
    res = use(gm, "Ana", "send_message(to='Ben', text='Lunch on Friday?')")
    assert not res.rejected
    expected = {"from": "Ana", "text": "Lunch on Friday?", "time": gm.clock.text(), "read": False}
    assert gm.state["inbox"] == {"Ana": [], "Ben": [expected], "Cleo": []}
    assert gm.pending("Ben") == ['New message from Ana: "Lunch on Friday?"']
    assert gm.pending("Cleo") == []
    assert gm.pending("Ana") == ['Ana texted Ben: "Lunch on Friday?"']
    change = gm.state.history[-1]
    assert (change.name, change.cause) == ("inbox", 'Ana texted Ben: "Lunch on Friday?"')


def test_an_unknown_recipient_is_rejected_naming_the_problem() -> None:
    gm = started()
    res = use(gm, "Ana", "send_message(to='Dave', text='hi')")
    assert res.rejected
    assert "to='Dave'" in res.event and "Ana, Ben, Cleo" in res.event
    assert gm.state["inbox"] == {n: [] for n in PEOPLE}
    assert gm.state.history == []
    assert gm.rejections[-1][0].actor == "Ana"
    assert gm.pending("Ben") == [] and gm.pending("Cleo") == []
    assert gm.pending("Ana") == [f"Your action was not possible: {res.event}"]


def test_read_messages_lists_new_messages_privately_and_marks_them_read() -> None:
    gm = started()
    use(gm, "Ana", "send_message(to='Cleo', text='Dinner?')")
    use(gm, "Ben", "send_message(to='cleo', text='Yes, dinner!')")  # any case finds Cleo
    gm.pending("Cleo")
    res = use(gm, "Cleo", "read_messages()")
    assert res.event == "Cleo read 2 new message(s)."
    assert [m["read"] for m in gm.state["inbox"]["Cleo"]] == [True, True]
    listing = gm.pending("Cleo")[-1]
    assert 'from Ana: "Dinner?"' in listing and 'from Ben: "Yes, dinner!"' in listing
    assert gm.pending("Ana") == ['Ana texted Cleo: "Dinner?"']  # nothing of Cleo's reading
    again = use(gm, "Cleo", "read_messages()")
    assert again.event == "Cleo read 0 new message(s)." and not again.updates


def test_add_event_shares_it_with_the_people_invited() -> None:
    gm = started()
    res = use(gm, "Ana", "add_event(title='Dinner', day='friday', time='7:30', with_whom='Ben')")
    assert not res.rejected
    event = {
        "title": "Dinner",
        "day": "Friday",
        "time": "07:30",
        "with": ["Ben"],
        "organizer": "Ana",
    }
    assert gm.state["calendar"] == {"Ana": [event], "Ben": [event], "Cleo": []}
    assert gm.pending("Ben") == [
        "Ana invited you to 'Dinner' on Friday at 07:30; it is in your calendar."
    ]
    assert gm.pending("Cleo") == []


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        ("add_event(title='Dinner', day='Fryday', time='19:00')", "day='Fryday'"),
        ("add_event(title='Dinner', day='Friday', time='7pm')", "time='7pm'"),
        ("add_event(title='Dinner', day='Friday', time='19:00', with_whom='Dave')", "'Dave'"),
        ("add_event(title=' ', day='Friday', time='19:00')", "needs a title"),
        ("add_event(title='Dinner', day='Friday')", "Usage: add_event("),
    ],
)
def test_bad_calendar_calls_are_rejected(call: str, problem: str) -> None:
    gm = started()
    res = use(gm, "Ana", call)
    assert res.rejected and problem in res.event
    assert gm.state["calendar"] == {n: [] for n in PEOPLE}


def test_a_double_booking_is_refused() -> None:
    gm = started()
    use(gm, "Cleo", "add_event(title='Yoga', day='Friday', time='19:00')")
    res = use(
        gm, "Ana", "add_event(title='Dinner', day='Friday', time='19:00', with_whom='Ben, Cleo')"
    )
    assert res.rejected and "Cleo is already busy on Friday at 19:00 ('Yoga')" in res.event
    assert gm.state["calendar"]["Ana"] == [] and gm.state["calendar"]["Ben"] == []
    # The grounded variable itself refuses a double booking, whoever proposes it.
    booked = gm.state["calendar"]["Cleo"] * 2
    assert "Cleo is already busy" in (gm.state.check({"calendar": {"Cleo": booked}}) or "")
    malformed = gm.state.check({"calendar": {"Cleo": [{"title": "Yoga"}]}})
    assert malformed == "Cleo's calendar must be a list of events with title, day and time"


def test_list_events_shows_the_calendar_to_its_owner_only() -> None:
    gm = started()
    use(
        gm,
        "Ana",
        "add_event(title='Dinner', day='2024-05-17', time='19:00', with_whom='Ben and Cleo')",
    )
    for name in PEOPLE:
        gm.pending(name)
    changes = len(gm.state.history)
    res = use(gm, "Ben", "list_events()")
    assert not res.updates and len(gm.state.history) == changes
    assert gm.pending("Ben") == [
        "Ben checked the calendar.",
        "Your calendar:\n- 'Dinner' on 2024-05-17 at 19:00 with Ana and Cleo (organised by Ana)",
    ]
    assert gm.pending("Ana") == [] and gm.pending("Cleo") == []


def test_cancel_event_by_organizer_and_by_guest() -> None:
    gm = started()
    use(gm, "Ana", "add_event(title='Dinner', day='Friday', time='19:00', with_whom='Ben, Cleo')")
    use(gm, "Ana", "add_event(title='Lunch', day='Saturday', time='12:00', with_whom='Ben')")
    for name in PEOPLE:
        gm.pending(name)
    res = use(gm, "Ben", "cancel_event(title='lunch')")  # a guest leaves only their own copy
    assert not res.rejected
    assert [e["title"] for e in gm.state["calendar"]["Ben"]] == ["Dinner"]
    assert [e["title"] for e in gm.state["calendar"]["Ana"]] == ["Dinner", "Lunch"]
    assert gm.pending("Ana") == ["Ben will not come to 'Lunch' on Saturday at 12:00."]
    use(gm, "Ana", "cancel_event(title='Dinner')")  # the organiser cancels it for everyone
    assert {n: [e["title"] for e in v] for n, v in gm.state["calendar"].items()} == {
        "Ana": ["Lunch"],
        "Ben": [],
        "Cleo": [],
    }
    assert gm.pending("Cleo") == ["Ana cancelled 'Dinner' on Friday at 19:00."]
    missing = use(gm, "Cleo", "cancel_event(title='Dinner')")
    assert missing.rejected and "Cleo has no event titled 'Dinner'" in missing.event


def test_the_narrators_json_tool_call_runs_the_tool() -> None:
    reply = '{"tool": "send_message", "args": {"to": "Ben", "text": "Lunch on Friday?"}}'
    model = load_model("scripted", rules=[(r"Attempted action: I text Ben", reply)])
    gm = started(model)
    action = "I text Ben to ask him to lunch on Friday"
    messages = gm.prompt(Attempt("Ana", action))
    assert PHONE_INSTRUCTIONS in messages[0]["content"]
    assert messages[-1]["content"].endswith(f"Actor: Ana\nAttempted action: {action}")
    res = use(gm, "Ana", action)
    assert gm.llm_calls == 1 and not res.rejected
    assert [m["text"] for m in gm.state["inbox"]["Ben"]] == ["Lunch on Friday?"]
    assert gm.pending("Cleo") == []


def test_the_generic_narrator_with_phone_tools_needs_the_variables() -> None:
    gm = started(prefab="generic", toolsets=["messages"])
    res = use(gm, "Ana", "send_message(to='Ben', text='hi')")
    assert res.rejected and "no grounded variable 'inbox'" in res.event
    gm = started(
        prefab="generic",
        toolsets=["messages"],
        variables=[{"name": "inbox", "value": {n: [] for n in PEOPLE}}],
    )
    assert not use(gm, "Ana", "send_message(to='Ben', text='hi')").rejected


def test_only_the_installed_apps_and_their_variables() -> None:
    gm = started(apps=["messages"])
    assert sorted(gm.tools) == ["read_messages", "send_message"]
    assert "calendar" not in gm.state and "inbox" in gm.state


@pytest.mark.parametrize(
    ("day", "expected"),
    [("fri", "Friday"), (" Monday ", "Monday"), ("2024-05-17", "2024-05-17"), ("Fryday", None)],
)
def test_parse_day(day: str, expected: str | None) -> None:
    assert parse_day(day) == expected


@pytest.mark.parametrize(
    ("time", "expected"), [("7:05", "07:05"), ("19:00", "19:00"), ("24:00", None), ("7pm", None)]
)
def test_parse_time(time: str, expected: str | None) -> None:
    assert parse_time(time) == expected


# -- the world ---------------------------------------------------------------------------------
def test_the_phone_world_plans_the_dinner_offline() -> None:
    outcome = Simulation.load(WORLD).run(seed=0)
    dinner = {
        "title": "Dinner",
        "day": "Friday",
        "time": "19:00",
        "with": ["Ben", "Cleo"],
        "organizer": "Ana",
    }
    assert outcome.final_state["calendar"] == {n: [dinner] for n in ("Ben", "Cleo", "Ana")}
    texts = {
        n: [(m["from"], m["read"]) for m in v] for n, v in outcome.final_state["inbox"].items()
    }
    assert texts == {"Ben": [("Ana", True)], "Cleo": [("Ana", True)], "Ana": [("Ben", True)]}
    assert [(r["actor"], r["step"]) for r in outcome.rejected] == [("Ben", 3), ("Cleo", 3)]
    assert "day='Fryday'" in outcome.rejected[0]["reason"]
    assert "to='Dave'" in outcome.rejected[1]["reason"]
    rows = {r["entity"]: r for r in outcome.per_entity}
    assert rows["Cleo"]["calendar"] == [dinner] and len(rows["Ana"]["inbox"]) == 1
    # Every phone use went through the narrator model once (15 attempts, 5 days x 3).
    assert outcome.gm_llm_calls == 15
    assert "Cleo cancelled 'Yoga' on Friday at 19:00." in outcome.events


def test_the_phone_world_is_deterministic_per_seed() -> None:
    sim = Simulation.load(WORLD)
    for seed in (0, 3):
        assert sim.run(seed=seed).to_dict() == sim.run(seed=seed).to_dict()


def test_the_phone_world_round_trips_through_yaml() -> None:
    sim = Simulation.load(WORLD)
    assert Simulation.from_yaml(sim.to_yaml()) == sim


def test_checkpoint_and_resume_equal_an_uninterrupted_run(tmp_path: Path) -> None:
    sim = Simulation.load(WORLD)
    path = tmp_path / "phone.json"
    sim.model_copy(update={"max_steps": 2}).run(seed=1, checkpoint=path)
    assert json.loads(path.read_text())["step"] == 2
    model = sim.offline_model()
    resumed = sim.run(model=model, seed=1, checkpoint=path, resume=True)
    # Only the last 3 of 5 days are played again: 3 people and 3 narrations a day.
    assert len(model.calls) == 3 * 6
    assert resumed.to_dict() == sim.run(seed=1).to_dict()
