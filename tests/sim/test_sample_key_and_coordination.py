"""An agent's sample key (independent draws for simulations whose prompts coincide) and the
coordinator's per-turn decisions and drafts kept by a conversation."""

from __future__ import annotations

import hashlib

import pytest

from silicolab.core.errors import LLMError
from silicolab.llm import load_model
from silicolab.sim import GenerativeAgent, Identity, RuleAgent, stable_sample_index
from silicolab.sim.conversation import STOP, run_conversation
from silicolab.sim.entity import ActionSpec

OPENING = "Two neighbours talk over a fence about a fallen tree."


def _old_index(name: str, step: int) -> int:
    """The index agents had before sample keys existed, computed here from its definition."""
    digest = hashlib.sha256(f"{name}\x1f{step}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def test_an_empty_sample_key_keeps_the_old_index_and_a_key_changes_it() -> None:
    for name, step in [("buyer", 0), ("seller", 3), ("coordinator", 11)]:
        assert stable_sample_index(name, step) == _old_index(name, step)
        assert stable_sample_index(name, step, "") == _old_index(name, step)
        keyed = {stable_sample_index(name, step, key) for key in ("c-1", "c-2", "c-1/r1")}
        assert len(keyed) == 3 and _old_index(name, step) not in keyed


def _echo_agent(name: str, key: str, cache_path) -> GenerativeAgent:
    model = load_model("scripted", fn=lambda r: f"sample {r.sample_index}", cache_path=cache_path)
    return GenerativeAgent(name, model, [Identity("{name} lives here.")], sample_key=key)


def test_agents_with_different_keys_draw_apart_and_a_rerun_hits_the_cache(tmp_path) -> None:
    cache = tmp_path / "cache.sqlite"
    spec = ActionSpec("What does {name} say?")
    first = [_echo_agent("Ada", key, cache) for key in ("", "cond-a", "cond-b")]
    said = [a.act(spec) for a in first]
    # the same prompt three times (the agents differ only by key), three different draws
    assert len({a.log.steps[0].context["identity"] for a in first}) == 1
    assert said[0] == f"sample {_old_index('Ada', 0)}"
    assert len(set(said)) == 3
    again = [_echo_agent("Ada", key, cache) for key in ("", "cond-a", "cond-b")]
    assert [a.act(spec) for a in again] == said
    for agent in again:
        ledger = agent.model.ledger.summary()
        assert ledger["cache_hits"] == ledger["calls"] == 1


def _numbered(agent: RuleAgent, spec: ActionSpec) -> str:
    agent.state["n"] = agent.state.get("n", 0) + 1
    return f"{agent.name} draft {agent.state['n']}"


def test_coordinator_after_keeps_each_turns_decision_and_discarded_drafts() -> None:
    answers = iter(["B", "A", STOP])

    def coordinator(agent: RuleAgent, spec: ActionSpec) -> str:
        return next(answers)

    conv = run_conversation(
        [RuleAgent("A", _numbered), RuleAgent("B", _numbered), RuleAgent("C", _numbered)],
        protocol="coordinator_after",
        opening=OPENING,
        coordinator=RuleAgent("Coordinator", coordinator),
        max_statements=10,
    )
    turns = conv.coordination()
    assert [t["turn"] for t in turns] == [0, 1, 2]
    assert [t["decision"] for t in turns] == ["B", "A", STOP]
    assert turns[0]["options"] == ["A", "B", "C"]  # nobody has spoken: no STOP yet
    assert turns[1]["options"] == ["A", "C", STOP]  # B just spoke
    for turn in turns:
        drafted = {d["speaker"]: d for d in turn["drafts"]}
        assert set(drafted) == {o for o in turn["options"] if o != STOP}
        realized = [d["speaker"] for d in turn["drafts"] if d["realized"]]
        assert realized == ([] if turn["decision"] == STOP else [turn["decision"]])
    # what was said is exactly the realized drafts; the discarded ones are only kept here
    assert [s.text for s in conv.statements] == [
        next(d["text"] for d in t["drafts"] if d["realized"]) for t in turns[:2]
    ]
    assert len(conv.to_dict()["decisions"]) == 3


def test_stop_rule_decisions_are_kept_per_turn() -> None:
    answers = iter(["continue", "continue", "stop"])

    conv = run_conversation(
        [RuleAgent("A", _numbered), RuleAgent("B", _numbered)],
        protocol="ordered",
        opening=OPENING,
        coordinator=RuleAgent("Coordinator", lambda agent, spec: next(answers)),
        max_statements=10,
    )
    assert len(conv.statements) == 3 and conv.stop_reason == "coordinator"
    assert conv.coordination() == [
        {"turn": t, "options": ["continue", "stop"], "decision": d, "drafts": []}
        for t, d in [(1, "continue"), (2, "continue"), (3, "stop")]
    ]


def test_a_failed_conversation_leaves_the_decisions_so_far_on_the_error() -> None:
    answers = iter(["A", "B"])

    def coordinator(agent: RuleAgent, spec: ActionSpec) -> str:
        try:
            return next(answers)
        except StopIteration:
            raise LLMError("the coordinator's model is gone") from None

    with pytest.raises(LLMError) as caught:
        run_conversation(
            [RuleAgent("A", _numbered), RuleAgent("B", _numbered)],
            protocol="coordinator_before",
            opening=OPENING,
            coordinator=RuleAgent("Coordinator", coordinator),
            max_statements=10,
        )
    kept = caught.value.coordination  # type: ignore[attr-defined]
    assert [(t["turn"], t["decision"]) for t in kept] == [(0, "A"), (1, "B")]
    assert len(caught.value.episode_log.steps) == 4  # type: ignore[attr-defined]
