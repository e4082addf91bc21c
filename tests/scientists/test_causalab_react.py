"""The LLM ReAct scientist end to end; only the model is replaced.

The model is played by :class:`Oracle`, which reads the true graph from the lab's config
and answers each prompt with a valid DSL record carrying out a correct plan (one
intervention, then the reactor with the true equation). Variants inject an invalid first
record (repair loop), an invalid action (the environment's message, no budget spent) and
check the verification step. The same flow also runs once over HTTP against the local
OpenAI-compatible test server.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from silicolab.envs import make
from silicolab.envs.causalab.suite import TARGET
from silicolab.llm import load_model
from silicolab.scientists.causalab import ReactScientist, play_episode
from silicolab.scientists.causalab.episode import aplay_episode
from silicolab.scientists.causalab.react import render


class Oracle:
    """Answers from the true config: a valid DSL record whose action follows the screen."""

    def __init__(self, lab: Any, *, bad_first: bool = False, bad_action: bool = False):
        self.lab = lab
        self.bad_first = bad_first
        self.bad_action = bad_action
        self.prompts: list[list[dict[str, str]]] = []

    def record(self, action: dict[str, Any], extra_edge: tuple[str, str] | None = None) -> str:
        config = self.lab.config
        weights = config.freq_weights()
        edges = [{"from": a, "to": b} for a, b in config.edges]
        if extra_edge:
            edges.append({"from": extra_edge[0], "to": extra_edge[1]})
        equation = f"{TARGET} = base + " + " + ".join(f"c_{p}*{p}" for p in weights)
        coefficients = {"base": config.base_freq, **{f"c_{p}": w for p, w in weights.items()}}
        body = {
            "memory": "I know the graph.",
            "thought": "Follow the plan.",
            "past_data": [],
            "hypothesis": {"edges": edges, "freq_equation": equation, "coefficients": coefficients},
            "experiment": {},
            **action,
        }
        return "```json\n" + json.dumps(body) + "\n```"

    def next_action(self, screen: str) -> dict[str, Any]:
        lab = self.lab
        if "PROPERTY MANIPULATOR" in screen:
            if "Value Setting" in screen:
                return {"value": 50}
            if lab.budget_used == 0:
                return {"chosen_dialog_option_int": 1}
            return {"chosen_dialog_option_int": len(lab.config.controllable) + 1}  # Exit
        if "CRYSTAL REACTOR" in screen:
            if "Enter the frequency" in screen:
                props = lab.reactor_properties()
                weights = lab.config.freq_weights()
                return {
                    "value": lab.config.base_freq + sum(w * props[p] for p, w in weights.items())
                }
            return {"chosen_dialog_option_int": 1}
        if (
            self.bad_action
            and lab.budget_used == 0
            and not any("ADJUST" in m["content"] for p in self.prompts[:-1] for m in p)
        ):
            return {"action": "ADJUST", "arg1": TARGET, "arg2": 5}
        return {"action": "TALK", "arg1": 102 if lab.budget_used else 101}

    def answer(self, messages: list[dict[str, str]]) -> str:
        if "<final_hypothesis>" in messages[0]["content"]:  # the graph re-evaluation (Task-2)
            return self.restate(messages[0]["content"])
        self.prompts.append(messages)
        screen = messages[0]["content"].split("## Current screen", 1)[1]
        action = self.next_action(screen)
        if self.bad_first and len(self.prompts) == 1:
            return self.record(action, extra_edge=("viscosity", TARGET))
        return self.record(action)

    def restate(self, prompt: str) -> str:
        """Task-2's answer: the final hypothesis shown, unchanged (as it asks)."""
        shown = prompt.split("<final_hypothesis>", 1)[1].split("</final_hypothesis>", 1)[0]
        return json.dumps(json.loads(shown))

    def scripted(self, request: Any) -> str:
        return self.answer(list(request.messages))

    def http(self, body: dict[str, Any]) -> str:
        return self.answer(body["messages"])


def play(suite: str = "4nodes", index: int = 0, **options: Any) -> tuple[Any, Oracle, Any]:
    lab = make("causalab", suite=suite, index=index, seed=0)
    oracle = Oracle(
        lab, bad_first=options.pop("bad_first", False), bad_action=options.pop("bad_action", False)
    )
    model = load_model("scripted", fn=oracle.scripted)
    record = play_episode(lab, ReactScientist(model, **options), index=index)
    return record, oracle, model


def test_oracle_model_reaches_success() -> None:
    record, oracle, model = play()
    assert record.success and record.stop_reason == "success"
    assert record.agent == "llm" and record.model == "scripted"
    assert [s.action for s in record.steps][:3] == [
        {"action": "TALK", "arg1": 101},
        {"chosen_dialog_option_int": 1},
        {"value": 50},
    ]
    assert record.metrics["all_edge_f1"] == 1.0 and record.metrics["weight_f1"] == 1.0
    assert record.metrics["budget_used"] == 1 and record.metrics["consistency_all"]
    assert record.usage["calls"] == len(oracle.prompts) == len(record.steps)
    assert model.ledger.summary()["by_tag"]["scientist"]["calls"] == record.usage["calls"]
    first = oracle.prompts[0][0]["content"]
    assert "EXISTING OBSERVATIONS" in first and "Previous State" in first
    assert "Mandatory check" not in first
    # the agent's own action history is replayed, newest first
    assert '{"value": 50}' in oracle.prompts[3][0]["content"]


def test_invalid_record_gets_the_repair_message_and_recovers() -> None:
    record, oracle, _ = play(bad_first=True)
    assert record.success
    first = record.steps[0]
    assert first.retries == 1 and not first.parse_failure
    assert any("viscosity" in e for e in first.parse_errors)
    repair = oracle.prompts[1]
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]
    assert "viscosity" in repair[2]["content"] and "corrected JSON" in repair[2]["content"]


def test_persistent_parse_failure_still_executes_the_valid_action() -> None:
    lab = make("causalab", suite="3nodes", index=0, seed=0)
    oracle = Oracle(lab)
    model = load_model(
        "scripted", fn=lambda r: oracle.record({"action": "WAIT"}, ("viscosity", TARGET))
    )
    record = play_episode(lab, ReactScientist(model, max_steps=2))
    assert record.stop_reason == "step_cap" and not record.success
    assert all(s.parse_failure and s.retries == 2 and s.hypothesis is None for s in record.steps)
    assert record.steps[0].action == {"action": "WAIT"}
    assert record.usage["calls"] == 6  # 2 steps x (1 + 2 repairs)


def test_invalid_action_gets_the_environment_message_and_costs_no_budget() -> None:
    record, oracle, _ = play(bad_action=True)
    assert record.success
    refused = record.steps[0]
    assert refused.action["action"] == "ADJUST" and refused.budget_used == 0
    assert "Unknown action" in refused.observation
    assert "Unknown action" in oracle.prompts[1][0]["content"]
    assert record.metrics["budget_used"] == 1


def test_llm_call_cap_stops_the_episode() -> None:
    record, _, _ = play(max_llm_calls=3)
    assert record.stop_reason == "llm_call_cap" and record.usage["calls"] == 3


def test_before_commit_verification_inserts_one_turn_before_the_reactor() -> None:
    _, plain_oracle, _ = play()
    record, oracle, _ = play(verify="before_commit")
    assert record.success and record.verify == "before_commit"
    assert len(oracle.prompts) == len(plain_oracle.prompts) + 1
    kinds = [(s.kind, s.executed) for s in record.steps]
    assert kinds.count(("verify", True)) == 1
    held = kinds.index(("step", False))
    assert kinds[held + 1] == ("verify", True)
    assert (
        record.steps[held].action
        == record.steps[held + 1].action
        == {"action": "TALK", "arg1": 102}
    )
    assert record.steps[held].phase == "manipulator" and record.steps[held + 2].phase == "reactor"
    verify_prompts = [
        p for p in oracle.prompts if "Verification before you commit" in p[0]["content"]
    ]
    assert len(verify_prompts) == 1 and oracle.prompts.index(verify_prompts[0]) == held + 1


def test_per_step_verification_adds_the_check_to_every_prompt() -> None:
    record, oracle, _ = play(verify="per_step")
    assert record.success
    assert all("Mandatory check" in p[0]["content"] for p in oracle.prompts)


def test_templates_are_strict() -> None:
    import jinja2

    with pytest.raises(jinja2.UndefinedError):
        render("controller.j2", target=TARGET)


async def test_same_flow_over_http(llm_server_factory) -> None:
    lab = make("causalab", suite="3nodes", index=1, seed=0)
    oracle = Oracle(lab, bad_first=True)
    server = llm_server_factory(reply=oracle.http)
    model = load_model("openai:fake-scientist", base_url=server.base_url, timeout_s=5)
    try:
        record = await aplay_episode(lab, ReactScientist(model, verify="before_commit"))
    finally:
        await model.aclose()
    assert record.success and record.steps[0].retries == 1
    assert record.usage["calls"] == server.stats.requests
    assert record.usage["input_tokens"] == server.stats.prompt_tokens
