"""Entities, components and agents: prompt assembly, logging, one call per act, state."""

from __future__ import annotations

import asyncio
import json

import pytest

from silicolab.core.errors import InputError, ParseFailure
from silicolab.llm import ScriptedModel, load_model
from silicolab.llm.types import Request
from silicolab.sim import (
    ActionSpec,
    AssociativeMemory,
    Attributes,
    Component,
    Constraint,
    EpisodeLog,
    GenerativeAgent,
    Goal,
    Identity,
    MemoryRetrieval,
    Observation,
    Plan,
    RuleAgent,
    StepLog,
    repair_choice,
    stable_sample_index,
)


class Mood(Component):
    """The ~10-line user component shown in docs/sim.md."""

    key = "mood"

    def __init__(self, mood: str = "calm"):
        self.mood = mood

    def context(self, spec, agent):
        return f"{agent.name} feels {self.mood}."

    def update(self, observation):
        if "insult" in observation:
            self.mood = "annoyed"


def system_of(request: Request) -> str:
    return next(m["content"] for m in request.messages if m["role"] == "system")


def make_agent(model, memory=None) -> GenerativeAgent:
    return GenerativeAgent(
        "Alice",
        model,
        [
            Identity("{name} is a baker in a small town."),
            Goal("Sell all the bread."),
            Constraint("Never lie.", "Be polite."),
            Attributes({"age": 41}),
            Plan("Open the shop at dawn."),
            Mood(),
            MemoryRetrieval(k=2),
            Observation(n=2),
        ],
        memory=memory if memory is not None else AssociativeMemory(),
    )


def test_action_spec_validation():
    with pytest.raises(InputError):
        ActionSpec("pick", kind="choice", options=("a",))
    with pytest.raises(InputError):
        ActionSpec("pick", kind="choice", options=("a", "a"))
    with pytest.raises(InputError):
        ActionSpec("x", kind="poem")  # type: ignore[arg-type]
    spec = ActionSpec("pick", kind="choice", options=["a", "b"])  # type: ignore[arg-type]
    assert spec.options == ("a", "b")
    assert spec.validate("a") == "a"
    with pytest.raises(InputError):
        spec.validate("c")


def test_context_assembly_and_per_component_log():
    model = ScriptedModel(default="Good morning!")
    alice = make_agent(model)
    alice.observe("Bob walks in.")
    alice.observe("Bob shouts an insult about the bread.")
    alice.observe("Carol asks for a loaf.")
    out = alice.act(ActionSpec("What does {name} say?", tag="speech", max_tokens=20))
    assert out == "Good morning!"
    (request,) = model.calls
    system = system_of(request)
    assert "Alice is a baker" in system and "Sell all the bread." in system
    assert "- Never lie." in system and "age: 41" in system
    assert "Open the shop at dawn." in system and "Alice feels annoyed." in system
    # Observation keeps the last two; the first fell out of the window
    assert "Carol asks for a loaf." in system
    assert system.index("Identity:") < system.index("Goal:") < system.index("Recent observations")
    assert request.messages[-1]["content"] == "What does Alice say?"
    assert request.tag == "speech" and request.max_tokens == 20

    log = alice.last_log
    assert log is not None and log.who == "Alice" and log.kind == "free" and log.step == 0
    assert list(log.context) == [
        "identity",
        "goal",
        "constraint",
        "attributes",
        "plan",
        "mood",
        "memory",
        "observation",
        "call_to_action",
    ]
    assert (
        log.context["observation"]
        == "Bob shouts an insult about the bread.\nCarol asks for a loaf."
    )
    assert log.context["mood"] == "Alice feels annoyed."
    assert "Bob walks in." in log.context["memory"] or "loaf" in log.context["memory"]
    # the action itself is remembered
    assert any(m.text == "Alice: Good morning!" for m in alice.memory.items())


def test_exactly_one_call_per_act_for_every_kind():
    def fn(request: Request) -> str:
        if request.json_schema is None:
            return "I will bake."
        if "choice" in request.json_schema.get("properties", {}):
            return '{"choice": 2}'
        return '{"value": 3.5}'

    model = ScriptedModel(fn=fn)
    alice = make_agent(model)
    assert alice.act(ActionSpec("Plan?")) == "I will bake."
    assert len(model.calls) == 1
    assert alice.act(ActionSpec("Say", kind="statement")) == "I will bake."
    assert len(model.calls) == 2
    assert alice.act(ActionSpec("Pick", kind="choice", options=("rye", "wheat"))) == "wheat"
    assert len(model.calls) == 3
    assert alice.act(ActionSpec("Price?", kind="float")) == "3.5"
    assert len(model.calls) == 4
    assert [s.step for s in alice.log.steps] == [0, 1, 2, 3]
    assert len({r.sample_index for r in model.calls}) == 4


def test_choice_answers_are_always_options_with_schema_examples():
    model = ScriptedModel()  # schema-valid random examples
    alice = make_agent(model)
    options = ("cooperate", "defect", "abstain")
    for _ in range(20):
        assert alice.act(ActionSpec("Choose", kind="choice", options=options)) in options


def test_garbage_choice_is_repaired_when_it_names_one_option():
    model = ScriptedModel(fn=lambda r: "I think I'll Defect, honestly")
    alice = make_agent(model)
    out = alice.act(ActionSpec("Choose", kind="choice", options=("cooperate", "defect")))
    assert out == "defect"


def test_unrepairable_garbage_raises_parse_failure():
    model = ScriptedModel(fn=lambda r: "banana")
    alice = make_agent(model)
    with pytest.raises(ParseFailure) as info:
        alice.act(ActionSpec("Choose", kind="choice", options=("cooperate", "defect")))
    assert info.value.raw == "banana"
    assert "Alice" in str(info.value)
    assert alice.log.steps == []  # nothing logged for a failed act


def test_repair_choice_rules():
    assert repair_choice(' "Rye". ', ["rye", "wheat"]) == "rye"
    assert repair_choice("rye or wheat", ["rye", "wheat"]) is None
    assert repair_choice("nothing", ["rye", "wheat"]) is None


def test_sample_index_from_name_and_step_hits_cache_on_rerun(tmp_path):
    def fn(request: Request) -> str:
        return f"reply {request.sample_index}"

    def episode():
        model = load_model("scripted", fn=fn, cache_path=tmp_path / "cache.sqlite")
        agent = GenerativeAgent("Bob", model, [Identity("{name} fishes.")])
        outs = [agent.act(ActionSpec("Say something.")) for _ in range(3)]
        return outs, model.ledger.summary()

    first, s1 = episode()
    second, s2 = episode()
    assert first == second and len(set(first)) == 3  # same prompt, distinct samples
    assert first[0] == f"reply {stable_sample_index('Bob', 0)}"
    assert s1["cache_hits"] == 0 and s2["cache_hits"] == 3


def test_concurrent_acts_get_distinct_steps():
    model = ScriptedModel(fn=lambda r: str(r.sample_index))
    alice = make_agent(model)

    async def run():
        return await asyncio.gather(*(alice.aact(ActionSpec("Go")) for _ in range(4)))

    outs = asyncio.run(run())
    assert len(set(outs)) == 4
    assert sorted(s.step for s in alice.log.steps) == [0, 1, 2, 3]


def test_state_round_trip_with_memory_via_json():
    model = ScriptedModel(default="ok")
    alice = make_agent(model)
    alice.observe("an insult was heard")
    alice.observe("rain started")
    alice.act(ActionSpec("React"))
    state = json.loads(json.dumps(alice.state_dict()))

    clone = make_agent(ScriptedModel(default="ok"))
    clone.load_state(state)
    assert clone.state_dict() == alice.state_dict()
    assert clone.get_component("mood").mood == "annoyed"  # type: ignore[attr-defined]
    assert clone.memory.items() == alice.memory.items()
    # both continue identically
    a, b = alice.act(ActionSpec("Next")), clone.act(ActionSpec("Next"))
    assert a == b and alice.last_log == clone.last_log

    with pytest.raises(InputError):
        GenerativeAgent("Zed", model, [Identity("x")]).load_state(state)


def test_agent_rejects_duplicate_or_reserved_keys():
    model = ScriptedModel()
    with pytest.raises(InputError):
        GenerativeAgent("A", model, [Goal("a"), Goal("b")])
    bad = Goal("a")
    bad.key = "call_to_action"
    with pytest.raises(InputError):
        GenerativeAgent("A", model, [bad])
    with pytest.raises(KeyError):
        GenerativeAgent("A", model, [Goal("a")]).get_component("plan")


def test_rule_agent_same_interface_and_validation():
    def policy(agent: RuleAgent, spec: ActionSpec) -> str:
        agent.state["acts"] = agent.state.get("acts", 0) + 1
        if spec.kind == "choice":
            return spec.options[-1] if agent.observations else spec.options[0]
        return "42" if spec.kind == "float" else "hello"

    bob = RuleAgent("Bob", policy)
    spec = ActionSpec("Pick", kind="choice", options=("a", "b"))
    assert bob.act(spec) == "a"
    bob.observe("something happened")
    assert bob.act(spec) == "b"
    assert bob.act(ActionSpec("How many?", kind="float")) == "42"
    assert bob.state["acts"] == 3 and len(bob.log) == 3

    clone = RuleAgent("Bob", policy)
    clone.load_state(json.loads(json.dumps(bob.state_dict())))
    assert clone.state_dict() == bob.state_dict()

    liar = RuleAgent("Liar", lambda a, s: "neither")
    with pytest.raises(InputError):
        liar.act(spec)


def test_episode_log_html_escapes_and_round_trips():
    log = EpisodeLog()
    log.add(StepLog(0, "<script>alert(1)</script>", "free", "a & b < c", {"goal": "<b>x</b>"}))
    log.add(StepLog(1, "GM", "resolve", "ok", event='He said "hi" & left'))
    page = log.to_html("Test <episode>")
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "a &amp; b &lt; c" in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert "He said &quot;hi&quot; &amp; left" in page
    assert "<title>Test &lt;episode&gt;</title>" in page
    assert page.startswith("<!DOCTYPE html>") and "http" not in page  # self-contained
    rows = json.loads(json.dumps(log.to_list()))
    assert EpisodeLog.from_list(rows).steps == log.steps
