"""Game master: grounded validation, observation routing, tools, engines, LLM resolution."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from silicolab.core.errors import InputError
from silicolab.llm.backends.scripted import ScriptedModel
from silicolab.sim.agents import RuleAgent
from silicolab.sim.engines import run_sequential, run_simultaneous
from silicolab.sim.entity import ActionSpec, Entity
from silicolab.sim.game_master import Attempt, GameMaster, Resolution, Tool, parse_tool_call
from silicolab.sim.grounded import GroundedState, GroundedVariable, at_least


class Sleeper(Entity):
    """Answers after ``delay`` seconds, so concurrent acts complete in a chosen order."""

    def __init__(self, name: str, delay: float):
        self.name = name
        self.delay = delay
        self.seen: list[str] = []

    def observe(self, text: str) -> None:
        self.seen.append(text)

    async def aact(self, spec: ActionSpec) -> str:
        await asyncio.sleep(self.delay)
        return f"{self.name} waves"


def wallet(**money: float) -> GroundedState:
    return GroundedState.of(
        *(
            GroundedVariable(f"money:{n}", float(v), float, validator=at_least(0, f"{n}'s money"))
            for n, v in money.items()
        )
    )


def pay(gm: GameMaster, actor: str, to: str, amount: float) -> Resolution:
    """Pay another person some money."""
    src, dst = f"money:{actor}", f"money:{to}"
    return Resolution(
        f"{actor} pays {to} {amount:g}.",
        {src: gm.state[src] - amount, dst: gm.state[dst] + amount},
        observers=(actor, to),
    )


def test_grounded_state_checks_a_batch_atomically() -> None:
    state = wallet(alice=10, bob=0)
    assert state.check({"money:alice": 5.0, "money:bob": 5.0}) is None
    message = state.check({"money:alice": -5.0, "money:bob": 15.0})
    assert message and "alice's money cannot go below 0" in message
    assert state.check({"money:carol": 1.0}) == "unknown grounded variable(s): money:carol"
    assert "must be a float" in (state.check({"money:bob": "lots"}) or "")
    with pytest.raises(InputError):
        state.apply({"money:alice": -1.0})
    assert state.snapshot() == {"money:alice": 10.0, "money:bob": 0.0}
    state.apply({"money:alice": 4.0}, step=3, cause="spent")
    assert state.history[-1].old == 10.0 and state.history[-1].step == 3
    assert state.text() == "money:alice: 4.0\nmoney:bob: 0.0"
    with pytest.raises(InputError, match="initial value"):
        GroundedVariable("x", -1.0, validator=at_least(0))


def test_impossible_action_is_rejected_with_a_message_and_costs_nothing() -> None:
    model = ScriptedModel(default="Alice buys the moon.")
    gm = GameMaster(
        state=wallet(alice=3, bob=0),
        model=model,
        tools=[pay],
        validator=lambda gm, a: "you cannot buy the moon" if "moon" in a.action else None,
    )
    alice, bob = Sleeper("alice", 0), Sleeper("bob", 0)
    gm.begin([alice, bob])
    res = gm.resolve(Attempt("alice", "I buy the moon"))
    assert res.rejected and res.event == "you cannot buy the moon"
    over = gm.resolve(Attempt("alice", "pay(to='bob', amount=5)"))  # would go negative
    assert over.rejected and "alice's money cannot go below 0" in over.event
    assert model.calls == [] and gm.llm_calls == 0
    assert gm.state.snapshot() == {"money:alice": 3.0, "money:bob": 0.0}
    assert gm.events == [] and len(gm.rejections) == 2
    assert gm.pending("alice") == [
        "Your action was not possible: you cannot buy the moon",
        f"Your action was not possible: {over.event}",
    ]
    assert gm.pending("bob") == []


def test_observations_are_routed_to_who_perceives_them() -> None:
    def resolver(gm: GameMaster, attempt: Attempt) -> Resolution:
        return Resolution(
            f"{attempt.actor} whispers to bob.",
            observers=(attempt.actor, "bob"),
            private={"carol": "You hear a murmur."},
        )

    gm = GameMaster(resolver=resolver, premise="A quiet room.")
    people = [Sleeper(n, 0) for n in ("alice", "bob", "carol")]
    log = run_sequential(gm, people, max_steps=1)
    alice, bob, carol = people
    assert alice.seen == bob.seen == ["A quiet room.", "alice whispers to bob."]
    assert carol.seen == ["A quiet room.", "You hear a murmur."]
    assert [s.who for s in log.steps if s.kind == "action"] == ["alice"]


def test_tool_invocation_from_an_intent() -> None:
    gm = GameMaster(state=wallet(alice=10, bob=0), tools=[pay])
    gm.begin([Sleeper("alice", 0), Sleeper("bob", 0)])
    assert gm.tools["pay"].usage() == "pay(to: str, amount: float) - Pay another person some money."
    res = gm.resolve(Attempt("alice", "I think I'll pay(to='bob', amount=4) now."))
    assert res.event == "alice pays bob 4." and gm.state["money:bob"] == 4.0
    res = gm.resolve(Attempt("bob", 'Sure: {"tool": "pay", "args": {"to": "alice", "amount": 1}}'))
    assert res.event == "bob pays alice 1." and gm.state["money:alice"] == 7.0
    bad = gm.resolve(Attempt("alice", "pay(amount=1)"))
    assert bad.rejected and "Usage: pay(to: str, amount: float)" in bad.event
    assert gm.resolve(Attempt("alice", "I just pay attention.")).event.startswith("alice:")
    with pytest.raises(InputError, match="literal"):
        parse_tool_call("pay(to=open('x'), amount=1)", gm.tools)
    with pytest.raises(InputError, match="docstring"):
        Tool.from_function(lambda: "x")
    # The default action spec tells agents which tools exist.
    assert "pay(to: str, amount: float)" in gm.spec_for("alice").call_to_action


def test_llm_resolver_makes_one_call_per_event() -> None:
    model = ScriptedModel(
        replies=[
            "Alice opens the door.",
            '{"tool": "pay", "args": {"to": "alice", "amount": 2}}',
            "Bob nods.",
        ]
    )
    gm = GameMaster(state=wallet(alice=5, bob=5), model=model, tools=[pay], premise="A shop.")
    people = [
        RuleAgent("alice", lambda a, s: "I open the door"),
        RuleAgent("bob", lambda a, s: "I nod"),
    ]
    log = run_sequential(gm, people, max_steps=3)
    assert len(model.calls) == gm.llm_calls == 3
    assert gm.events == ["Alice opens the door.", "bob pays alice 2.", "Bob nods."]
    assert gm.state["money:alice"] == 7.0 and gm.state["money:bob"] == 3.0
    prompt = model.calls[1].messages[-1]["content"]
    assert "Attempted action: I nod" in prompt and "- Alice opens the door." in prompt
    assert "money:alice: 5.0" in prompt and "pay(to: str" in prompt
    assert [s.event for s in log.steps if s.kind == "action"] == gm.events
    assert people[0].observations[-1] == people[1].observations[-1] == "Bob nods."


def test_simultaneous_engine_orders_events_by_initiative_not_completion() -> None:
    def once(delays: Sequence[float], seed: int) -> list[str]:
        people = [Sleeper(f"p{i}", d) for i, d in enumerate(delays)]
        gm = GameMaster()
        run_simultaneous(gm, people, max_steps=2, seed=seed)
        return gm.events

    slow_first = once([0.03, 0.02, 0.01, 0.0], seed=1)
    fast_first = once([0.0, 0.01, 0.02, 0.03], seed=1)
    expected = [f"p{i}: p{i} waves" for i in range(4)] * 2
    assert slow_first == fast_first == expected


def test_seeded_schedules_are_reproducible_in_both_engines() -> None:
    def shuffled(gm: GameMaster, entities: Sequence[Entity], step: int) -> list[Entity]:
        return gm.rng.sample(list(entities), 2)

    def once(seed: int, simultaneous: bool) -> list[str]:
        people = [Sleeper(f"p{i}", 0.001 * (5 - i)) for i in range(5)]
        gm = GameMaster(schedule=shuffled, terminator=lambda g: len(g.events) >= 12)
        run = run_simultaneous if simultaneous else run_sequential
        run(gm, people, max_steps=50, seed=seed)
        return gm.events

    for simultaneous in (False, True):
        first = once(7, simultaneous)
        assert first == once(7, simultaneous) and len(first) == 12
        assert any(once(s, simultaneous) != first for s in (8, 9, 10))


def test_sequential_round_robin_clock_and_termination() -> None:
    gm = GameMaster(terminator=lambda g: len(g.events) == 3)
    people = [Sleeper("a", 0), Sleeper("b", 0)]
    run_sequential(gm, people, max_steps=10)
    assert gm.events == ["a: a waves", "b: b waves", "a: a waves"]
    assert gm.clock.steps == 3 and gm.clock.text() == "2024-01-01 09:30"
    assert gm.clock.from_state(gm.clock.state_dict()) == gm.clock
    with pytest.raises(InputError):
        run_sequential(GameMaster(), [Sleeper("a", 0), Sleeper("a", 0)], max_steps=1)


def test_simultaneous_llm_resolution_is_one_call_per_event_in_initiative_order() -> None:
    model = ScriptedModel(fn=lambda r: r.messages[-1]["content"].split("Actor: ")[1][:2] + " ok")
    gm = GameMaster(model=model)
    run_simultaneous(gm, [Sleeper("p0", 0.02), Sleeper("p1", 0.0)], max_steps=2)
    assert gm.llm_calls == len(model.calls) == 4
    assert gm.events == ["p0 ok", "p1 ok", "p0 ok", "p1 ok"]
