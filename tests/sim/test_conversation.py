"""Turn-taking protocols, stopping rules and call counts of silicolab.sim.conversation."""

from __future__ import annotations

import itertools
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from silicolab.core.errors import InputError
from silicolab.llm import load_model
from silicolab.sim import GenerativeAgent, Identity, RuleAgent
from silicolab.sim.conversation import (
    PROTOCOLS,
    STOP,
    Conversation,
    arun_conversation,
    run_conversation,
)
from silicolab.sim.entity import ActionSpec

OPENING = "A seller and some buyers meet at a market stall to trade a mug."


def speaker_policy(agent: RuleAgent, spec: ActionSpec) -> str:
    """Say a numbered line and remember every prompt seen."""
    agent.state.setdefault("prompts", []).append(spec.call_to_action)
    return f"{agent.name}: line {len(agent.state['prompts'])}"


def make_agents(n: int) -> list[RuleAgent]:
    return [RuleAgent(f"A{i}", speaker_policy) for i in range(n)]


def make_coordinator(seed: int, stop_p: float = 0.0) -> RuleAgent:
    """A coordinator choosing at random, stopping with probability ``stop_p``."""
    gen = random.Random(seed)

    def policy(agent: RuleAgent, spec: ActionSpec) -> str:
        agent.state["calls"] = agent.state.get("calls", 0) + 1
        stop = gen.random() < stop_p
        if spec.options == ("continue", "stop"):
            return "stop" if stop else "continue"
        if STOP in spec.options and stop:
            return STOP
        return gen.choice([o for o in spec.options if o != STOP])

    return RuleAgent("Coordinator", policy)


def entity_calls(agents: list[RuleAgent], coordinator: RuleAgent | None) -> int:
    return sum(a.step for a in agents) + (coordinator.step if coordinator else 0)


@settings(max_examples=120, deadline=None)
@given(
    protocol=st.sampled_from(PROTOCOLS),
    n=st.integers(2, 5),
    cap=st.integers(1, 12),
    seed=st.integers(0, 10_000),
    with_coordinator=st.booleans(),
    stop_p=st.sampled_from([0.0, 0.2]),
)
def test_protocol_invariants(
    protocol: str, n: int, cap: int, seed: int, with_coordinator: bool, stop_p: float
) -> None:
    agents = make_agents(n)
    needs = protocol.startswith("coordinator")
    coordinator = make_coordinator(seed, stop_p) if (needs or with_coordinator) else None
    central = "A1" if protocol.startswith("central") else None
    order = [a.name for a in reversed(agents)]
    conv = run_conversation(
        agents,
        protocol=protocol,
        opening=OPENING,
        coordinator=coordinator,
        central=central,
        order=order,
        max_statements=cap,
        seed=seed,
    )
    speakers = [s.speaker for s in conv.statements]
    assert [s.index for s in conv.statements] == list(range(len(speakers)))
    # never the same speaker twice in a row; the coordinator never speaks
    assert all(a != b for a, b in itertools.pairwise(speakers))
    assert "Coordinator" not in speakers
    # the cap counts agents' statements only
    assert len(speakers) <= cap
    if conv.stop_reason == "cap":
        assert len(speakers) == cap
    else:
        assert conv.stop_reason == "coordinator" and stop_p > 0
    if stop_p == 0.0:
        assert conv.stop_reason == "cap"
    if protocol == "ordered":
        assert speakers == [order[i % n] for i in range(len(speakers))]
    if protocol.startswith("central"):
        assert all((s == "A1") == (i % 2 == 0) for i, s in enumerate(speakers))
    if protocol == "central_ordered":
        others = [o for o in order if o != "A1"]
        assert speakers[1::2] == [others[i % len(others)] for i in range(len(speakers[1::2]))]
    if protocol == "coordinator_after":
        realized = [d for d in conv.drafts if d.realized]
        assert [(d.speaker, d.text) for d in realized] == [
            (s.speaker, s.text) for s in conv.statements
        ]
        for turn in {d.turn for d in conv.drafts}:
            assert sum(d.realized for d in conv.drafts if d.turn == turn) <= 1
    else:
        assert conv.drafts == []
    assert conv.llm_calls == entity_calls(agents, coordinator)


def test_random_is_reproducible_and_seed_dependent() -> None:
    def speakers(seed: int) -> list[str]:
        conv = run_conversation(make_agents(4), protocol="random", opening=OPENING, seed=seed)
        return [s.speaker for s in conv.statements]

    assert speakers(3) == speakers(3)
    assert len({tuple(speakers(s)) for s in range(6)}) > 1


def test_speakers_see_transcript_and_remaining_count() -> None:
    agents = make_agents(2)
    conv = run_conversation(agents, protocol="ordered", opening=OPENING, max_statements=4)
    assert conv.stop_reason == "cap" and len(conv.statements) == 4
    prompts = agents[0].state["prompts"] + agents[1].state["prompts"]
    lefts = sorted(
        int(m.group(1)) for p in prompts if (m := re.search(r"(\d+) statements are left", p))
    )
    assert lefts == [2, 3, 4]
    assert any("This is the last statement" in p for p in prompts)
    last = agents[1].state["prompts"][-1]
    assert OPENING in last
    assert "1. A0: line 1" in last and "3. A0: line 2" in last
    # the echoed "A0:" prefix was stripped from the statement
    assert conv.statements[0].text == "line 1"
    # every agent observed every realized statement
    assert agents[0].observations == [f"{s.speaker}: {s.text}" for s in conv.statements]


def test_coordinator_stops_the_conversation() -> None:
    def policy(agent: RuleAgent, spec: ActionSpec) -> str:
        return "stop" if spec.call_to_action.count(": line") >= 3 else "continue"

    agents = make_agents(3)
    coordinator = RuleAgent("Coordinator", policy)
    conv = run_conversation(
        agents, protocol="random", opening=OPENING, coordinator=coordinator, seed=1
    )
    assert conv.stop_reason == "coordinator"
    assert len(conv.statements) == 3
    decisions = [s for s in conv.log.steps if s.kind == "decision"]
    assert [d.output for d in decisions] == ["continue", "continue", "stop"]
    assert all("Coordinator" not in o for a in agents for o in a.observations)


def test_coordinator_stops_false_runs_to_the_cap_without_stop_calls() -> None:
    agents = make_agents(3)
    coordinator = make_coordinator(0, stop_p=1.0)
    conv = run_conversation(
        agents,
        protocol="ordered",
        opening=OPENING,
        coordinator=coordinator,
        max_statements=5,
        coordinator_stops=False,
    )
    assert conv.stop_reason == "cap" and len(conv.statements) == 5
    assert coordinator.step == 0 and conv.llm_calls == 5


def test_coordinator_after_realizes_exactly_one_draft_and_discards_the_rest() -> None:
    def policy(agent: RuleAgent, spec: ActionSpec) -> str:
        assert "drafted a reply" in spec.call_to_action
        return "A2" if "A2" in spec.options else "A0"

    agents = make_agents(3)
    conv = run_conversation(
        agents,
        protocol="coordinator_after",
        opening=OPENING,
        coordinator=RuleAgent("Coordinator", policy),
        max_statements=4,
        coordinator_stops=False,
    )
    assert [s.speaker for s in conv.statements] == ["A2", "A0", "A2", "A0"]
    assert len(conv.drafts) == 3 + 2 + 2 + 2
    for turn in range(4):
        batch = [d for d in conv.drafts if d.turn == turn]
        assert sum(d.realized for d in batch) == 1
        assert conv.statements[turn].text == next(d.text for d in batch if d.realized)
    discarded = [f"{d.speaker}: {d.text}" for d in conv.drafts if not d.realized]
    # discarded drafts are logged but never shown to anyone
    assert {s.event for s in conv.log.steps if s.kind == "draft"} == {"realized", "discarded"}
    for agent in agents:
        seen = "\n".join(agent.observations + agent.state["prompts"])
        assert not any(t in seen for t in discarded)


def test_coordinator_before_never_offers_the_previous_speaker() -> None:
    offered: list[tuple[str, ...]] = []

    def policy(agent: RuleAgent, spec: ActionSpec) -> str:
        offered.append(spec.options)
        return spec.options[0]

    conv = run_conversation(
        make_agents(3),
        protocol="coordinator_before",
        opening=OPENING,
        coordinator=RuleAgent("Coordinator", policy),
        max_statements=6,
    )
    speakers = [s.speaker for s in conv.statements]
    assert speakers == ["A0", "A1", "A0", "A1", "A0", "A1"]
    assert STOP not in offered[0]
    for prev, options in zip(speakers, offered[1:], strict=False):
        assert prev not in options and STOP in options


@pytest.mark.parametrize(
    ("protocol", "expected"),
    [("ordered", 2.0), ("random", 2.0), ("central_random", 2.0), ("coordinator_before", 2.0)],
)
def test_calls_per_statement(protocol: str, expected: float) -> None:
    conv = run_conversation(
        make_agents(4),
        protocol=protocol,
        opening=OPENING,
        coordinator=make_coordinator(0),
        central="A0",
        max_statements=10,
    )
    # the last statement needs no stop decision (the cap ends it)
    assert conv.llm_calls == 10 * expected - (1 if protocol != "coordinator_before" else 0)


def test_calls_per_statement_coordinator_after() -> None:
    conv = run_conversation(
        make_agents(4),
        protocol="coordinator_after",
        opening=OPENING,
        coordinator=make_coordinator(0),
        max_statements=10,
    )
    # 4 drafts + 1 pick for the first statement, then 3 drafts + 1 pick for each next one
    assert conv.llm_calls == 5 + 9 * 4


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"protocol": "shouting"}, "protocol"),
        ({"protocol": "coordinator_before"}, "coordinator"),
        ({"protocol": "central_random"}, "central"),
        ({"protocol": "ordered", "order": ["A0", "A0"]}, "order"),
        ({"protocol": "ordered", "max_statements": 0}, "max_statements"),
    ],
)
def test_bad_arguments_raise_input_error(kwargs: dict, match: str) -> None:
    with pytest.raises(InputError, match=match):
        run_conversation(make_agents(2), opening=OPENING, **kwargs)
    with pytest.raises(InputError, match="two agents"):
        run_conversation(make_agents(1), protocol="ordered", opening=OPENING)


async def test_async_twin_and_export() -> None:
    conv = await arun_conversation(
        make_agents(2), protocol="ordered", opening=OPENING, max_statements=2
    )
    assert isinstance(conv, Conversation)
    data = conv.to_dict()
    assert data["stop_reason"] == "cap" and len(data["statements"]) == 2
    assert conv.transcript().splitlines() == ["1. A0: line 1", "2. A1: line 1"]
    assert "<html" in conv.log.to_html("mug")


def test_generative_agents_over_http(llm_server_factory, monkeypatch) -> None:
    monkeypatch.setenv("SILICOLAB_TEST_SIM_KEY", "sk-test-sim")

    def reply(body: dict) -> str:
        if body.get("response_format"):
            return '{"choice": 1}'  # the coordinator: "continue"
        return "I offer five dollars."

    server = llm_server_factory(reply=reply)
    model = load_model(
        "openai:fake-model",
        base_url=server.base_url,
        api_key_env="SILICOLAB_TEST_SIM_KEY",
        timeout_s=5.0,
    )
    agents = [GenerativeAgent(n, model, [Identity("{name} trades mugs.")]) for n in ("Ann", "Bo")]
    coordinator = GenerativeAgent("Coordinator", model, [Identity("{name} runs the market.")])
    conv = run_conversation(
        agents, protocol="ordered", opening=OPENING, coordinator=coordinator, max_statements=4
    )
    assert [s.speaker for s in conv.statements] == ["Ann", "Bo", "Ann", "Bo"]
    assert all(s.text == "I offer five dollars." for s in conv.statements)
    assert conv.stop_reason == "cap"
    assert conv.llm_calls == 7 == server.stats.requests
    assert conv.calls_per_statement == pytest.approx(1.75)
    assert model.ledger.summary()["by_tag"]["conversation"]["calls"] == 4
