"""MAC hybrids end to end: Coding-Debating and Debating-Coding with scripted agents.

Checks the information flow the reviewers asked about: the coding graph reaches every
debate question in words and in the right direction, and the debate verdicts reach the
coding phase as constraints (prompt, executor code, fallback).
"""

from __future__ import annotations

import json
import re

import pytest
from tests.discovery.mac_fakes import NAME_ERROR, PC_GOOD, PC_WITH_KNOWLEDGE, Oracle

from silicolab.discovery import statistical
from silicolab.discovery.datasets import load
from silicolab.discovery.health import discovery_health
from silicolab.discovery.knowledge import Knowledge
from silicolab.discovery.mac import (
    adebating_then_coding,
    coding_then_debating,
    debating_then_coding,
    verdicts_to_knowledge,
)
from silicolab.discovery.mac.coding import fallback_of
from silicolab.llm import load_model

KEY_ENV = "SILICOLAB_TEST_MAC_KEY"


@pytest.fixture(scope="module")
def auto():
    return load("auto_mpg")


def test_coding_then_debating_puts_the_coding_graph_into_each_question(auto) -> None:
    oracle = Oracle(auto.truth.edges, executor=(PC_GOOD,))
    model = load_model("scripted", fn=oracle.scripted)
    result = coding_then_debating(auto.data, model=model, description=auto.description)
    pc_graph = statistical.pc(auto.data).graph
    # PC on Auto MPG: Mpg -> Horsepower (directed), Horsepower -- Weight (undirected)
    assert ("Mpg", "Horsepower") in pc_graph.directed_edges()
    prompts = "\n".join(oracle.prompts("judge"))
    assert (
        "Q2: Does Mpg directly cause Horsepower? (Evidence: PC on the data: it found a direct "
        "causal relationship from Mpg to Horsepower)" in prompts
    )
    assert (
        "Does Horsepower directly cause Mpg? (Evidence: PC on the data: it found a direct "
        "relationship in the other direction, Mpg to Horsepower)" in prompts
    )
    assert "could not tell its direction" in prompts  # the undirected Horsepower -- Weight
    assert "Each question carries what the PC algorithm found" in prompts
    assert result.graph == auto.truth  # the judges follow the truth, not the evidence
    assert result.method == "mac_coding_debating"
    assert result.raw["order"] == ["coding", "meta"]
    assert result.raw["evidence_algorithm"] == "pc"
    assert set(result.usage["by_module"]) == {"coding", "meta"}
    assert result.usage["total"]["calls"] == 4 + 15
    assert result.params["coding"]["algorithm"] == "pc"
    assert fallback_of(result) is None and not discovery_health(result.raw).degraded
    json.dumps(result.raw), json.dumps(result.to_dict())


def test_coding_then_debating_with_failed_code_is_degraded_but_keeps_its_debate_graph(
    auto,
) -> None:
    oracle = Oracle(auto.truth.edges, executor=(NAME_ERROR,))
    model = load_model("scripted", fn=oracle.scripted)
    result = coding_then_debating(auto.data, model=model, max_repairs=0, algorithms=("pc",))
    assert fallback_of(result) == ("pc", False)  # the evidence was PC's, the graph the debate's
    assert result.graph == auto.truth
    health = discovery_health(result.raw)
    assert health.degraded and "coding executor" in health.summary_line()


def _executor_with_constraints(messages) -> str:
    task = messages[1]["content"]
    required = re.search(r"^required = .*$", task, re.M).group(0)
    forbidden = re.search(r"^forbidden = .*$", task, re.M).group(0)
    return PC_WITH_KNOWLEDGE.replace("REQUIRED", required).replace("FORBIDDEN", forbidden)


def test_debating_then_coding_passes_verdicts_as_knowledge(auto) -> None:
    oracle = Oracle(auto.truth.edges, executor=_executor_with_constraints)
    model = load_model("scripted", fn=oracle.scripted)
    result = debating_then_coding(auto.data, model=model, variables=auto.variables)
    task = oracle.prompts("executor")[0]
    assert "Weight directly causes Mpg (required edge)" in task
    assert "Mpg does not directly cause Weight (forbidden edge)" in task
    assert "add_required_by_node" in task and 'required = [["' in task
    plan_prompt = oracle.prompts("plan-affirmative")[0]
    assert "Prior knowledge about the graph" in plan_prompt
    prior = Knowledge.from_dict(result.raw["prior_knowledge"])
    assert set(prior.required) == set(auto.truth.edges)
    assert len(prior.forbidden) == 20 - 5
    assert result.params["coding"]["fallback"] is False
    # PC with the complete verdicts as background knowledge recovers the truth
    assert result.graph == statistical.pc(auto.data, knowledge=prior).graph == auto.truth
    assert result.params["coding"]["knowledge_violations"] == []
    assert result.method == "mac_debating_coding"
    assert set(result.usage["by_module"]) == {"coding", "meta"}


def test_verdicts_to_knowledge_drops_both_ways_and_cycles() -> None:
    verdicts = {("a", "b"): True, ("b", "a"): True, ("b", "c"): True, ("c", "d"): True}
    verdicts |= {("d", "b"): True, ("a", "c"): False, ("c", "a"): None}
    knowledge, notes = verdicts_to_knowledge(verdicts, Knowledge(required=[("d", "a")]))
    assert ("a", "b") not in knowledge.required and ("b", "a") not in knowledge.required
    assert not {("b", "c"), ("c", "d"), ("d", "b")} & set(knowledge.required)
    assert knowledge.required == (("d", "a"),)
    assert knowledge.forbidden == (("a", "c"),)
    assert len(notes) == 2
    knowledge.validate(["a", "b", "c", "d"])


async def test_debating_then_coding_over_http_falls_back_with_knowledge(
    auto, llm_server_factory, monkeypatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-mac")
    oracle = Oracle(auto.truth.edges, executor=(NAME_ERROR,))
    server = llm_server_factory(reply=oracle.http, faults=["500"])
    model = load_model(
        "openai:fake-model", base_url=server.base_url, api_key_env=KEY_ENV, timeout_s=5
    )
    try:
        result = await adebating_then_coding(
            auto.data, model=model, max_repairs=0, max_rounds=1, algorithms=("pc",)
        )
    finally:
        await model.aclose()
    assert result.params["coding"]["fallback"] is True
    assert any("FALLBACK" in note for note in result.notes)
    assert fallback_of(result) == ("pc", True)  # the graph is the fallback's
    assert discovery_health(result.raw).degraded
    assert result.graph == auto.truth  # the fallback PC used the debate's knowledge
    assert server.stats.faults_by_kind == {"500": 1}
    assert result.usage["total"]["retries"] == 1
    assert result.usage["total"]["calls"] == 15 + 4
