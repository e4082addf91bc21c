"""MAC meta-debate and single-agent baseline, end to end with deterministic agents.

The agents are played by :class:`tests.discovery.mac_fakes.Oracle`, which knows the Auto
MPG ground truth and reads the numbered questions from each prompt; everything else (the
batching, the rounds, the structured verdicts, the graph, the ledger) is the real code,
once through the scripted model and once over HTTP against the local OpenAI-compatible
test server with an injected fault.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from tests.discovery.mac_fakes import Oracle

from silicolab.discovery.datasets import load
from silicolab.discovery.knowledge import Knowledge
from silicolab.discovery.mac import ameta_debate, meta_debate, single_agent
from silicolab.discovery.registry import discover
from silicolab.llm import load_model
from silicolab.scm import CausalGraph, PartialGraph

KEY_ENV = "SILICOLAB_TEST_MAC_KEY"


@pytest.fixture(scope="module")
def auto():
    return load("auto_mpg")


def run(auto, oracle: Oracle, **kw):
    model = load_model("scripted", fn=oracle.scripted)
    kw.setdefault("description", auto.description)
    kw.setdefault("variables", auto.variables)
    return model, meta_debate(auto.data, model=model, **kw)


def test_meta_debate_recovers_the_truth_with_n_batched_debates(auto) -> None:
    oracle = Oracle(auto.truth.edges)
    model, result = run(auto, oracle)
    assert isinstance(result.graph, CausalGraph)
    assert result.graph == auto.truth
    assert result.method == "mac_meta_debate"
    debates = result.raw["debates"]
    nodes = list(auto.data.columns)
    assert [d["source"] for d in debates] == nodes  # one debate per source variable
    for debate in debates:
        effects = [q["effect"] for q in debate["questions"]]
        assert effects == [v for v in nodes if v != debate["source"]]  # n - 1 questions
        assert [r["round"] for r in debate["rounds"]] == [1]
        assert debate["final"] is None
    # every judge prompt listed exactly the n - 1 questions of its source
    judge_prompts = oracle.prompts("judge")
    assert len(judge_prompts) == 5
    assert all(p.count("directly cause") == 4 for p in judge_prompts)
    # the negative debater saw the affirmative's argument
    assert all("[affirmative debater, round 1]" in p for p in oracle.prompts("negative"))
    by_tag = model.ledger.summary()["by_tag"]
    assert {t: v["calls"] for t, v in by_tag.items()} == {
        "mac/meta/affirmative": 5,
        "mac/meta/negative": 5,
        "mac/meta/judge": 5,
    }
    usage = result.usage
    assert usage["total"]["calls"] == 15
    assert usage["by_module"]["meta"]["input_tokens"] == usage["total"]["input_tokens"] > 0
    assert set(usage["by_role"]) == {"affirmative", "negative", "judge"}
    assert result.params["n_debates"] == 5 and result.params["n_questions"] == 20
    assert result.runtime_s > 0
    assert "no transpose" in result.notes[0]
    json.dumps(result.raw), json.dumps(result.to_dict())  # JSON-ready


def test_follow_up_round_asks_the_judges_question(auto) -> None:
    oracle = Oracle(auto.truth.edges, follow_up_rounds=1)
    _, result = run(auto, oracle, max_rounds=3)
    assert result.graph == auto.truth
    for debate in result.raw["debates"]:
        assert [r["round"] for r in debate["rounds"]] == [1, 2]
        assert debate["rounds"][1]["open"] == [1, 2, 3, 4]
        assert debate["final"] is None
    second_round = [p for p in oracle.prompts("affirmative") if "Round 2" in p]
    assert len(second_round) == 5
    assert all("What confounds q1?" in p for p in second_round)
    assert result.params["rounds_run"] == 10 and result.params["forced_verdicts"] == 0


def test_max_rounds_bound_then_forced_final_verdict(auto) -> None:
    oracle = Oracle(auto.truth.edges, follow_up_rounds=99)
    model, result = run(auto, oracle, max_rounds=2)
    assert result.graph == auto.truth  # decided by the forced yes/no call
    for debate in result.raw["debates"]:
        assert len(debate["rounds"]) == 2
        assert debate["final"]["forced"] == [1, 2, 3, 4]
    assert result.params["forced_verdicts"] == 20
    calls = {t: v["calls"] for t, v in model.ledger.summary()["by_tag"].items()}
    assert calls == {"mac/meta/affirmative": 10, "mac/meta/negative": 10, "mac/meta/judge": 15}


def test_invalid_judge_is_recorded_and_leaves_questions_undecided(auto) -> None:
    oracle = Oracle(auto.truth.edges, judge_text="I cannot decide.")
    _, result = run(auto, oracle, max_rounds=2)
    assert not result.graph.edges  # nothing invented
    assert len(result.params["undecided"]) == 20
    assert any("undecided" in note for note in result.notes)
    debate = result.raw["debates"][0]
    assert debate["rounds"][0]["judge_error"]["raw"] == "I cannot decide."
    assert debate["final"]["raw"] == "I cannot decide."


def test_knowledge_pairs_are_not_debated_and_both_ways_is_undirected() -> None:
    data = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [2.0, 1, 4, 3], "c": [0.0, 1, 0, 1]})
    oracle = Oracle([("a", "b"), ("b", "a")])
    model = load_model("scripted", fn=oracle.scripted)
    knowledge = Knowledge(required=[("c", "a")], forbidden=[("a", "c")])
    result = meta_debate(data, model=model, knowledge=knowledge)
    asked = "".join(oracle.prompts("judge"))
    assert "Does c directly cause a?" not in asked and "Does a directly cause c?" not in asked
    assert isinstance(result.graph, PartialGraph)
    assert result.graph.undirected_edges() == (("a", "b"),)
    assert result.graph.directed_edges() == (("c", "a"),)
    assert any("both directions" in note for note in result.notes)


def test_cache_reuse_and_replicates(auto, tmp_path) -> None:
    oracle = Oracle(auto.truth.edges)
    model = load_model("scripted", fn=oracle.scripted, cache_path=tmp_path / "c.sqlite")
    first = meta_debate(auto.data, model=model)
    again = meta_debate(auto.data, model=model)
    other = meta_debate(auto.data, model=model, replicate=1)
    assert first.usage["total"]["cache_hits"] == 0
    assert again.usage["total"]["calls"] == again.usage["total"]["cache_hits"] == 15
    assert again.usage["total"]["input_tokens"] == 0
    assert other.usage["total"]["cache_hits"] == 0
    assert again.graph == first.graph == other.graph == auto.truth


def test_usage_excludes_earlier_calls_of_a_shared_model(auto) -> None:
    oracle = Oracle(auto.truth.edges)
    model = load_model("scripted", fn=oracle.scripted)
    single_agent(auto.data, model=model)
    result = discover(auto.data, "mac_meta_debate", model=model)
    assert result.usage["total"]["calls"] == 15
    assert "single" not in result.usage["by_module"]


def test_single_agent_baseline(auto) -> None:
    oracle = Oracle(auto.truth.edges)
    model = load_model("scripted", fn=oracle.scripted)
    result = single_agent(auto.data, model=model, variables=auto.variables)
    assert result.graph == auto.truth
    assert result.usage["by_role"]["agent"]["calls"] == 5
    assert set(model.ledger.summary()["by_tag"]) == {"mac/single/agent"}
    assert len(result.raw["calls"]) == 5


async def test_meta_debate_over_http_with_a_retried_fault(auto, llm_server_factory, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-mac")
    oracle = Oracle(auto.truth.edges, follow_up_rounds=1)
    server = llm_server_factory(reply=oracle.http, faults=["500"])
    model = load_model(
        "openai:fake-model", base_url=server.base_url, api_key_env=KEY_ENV, timeout_s=5
    )
    try:
        result = await ameta_debate(auto.data, model=model, max_rounds=2, jobs=2, tag_prefix="x")
    finally:
        await model.aclose()
    assert result.graph == auto.truth
    stats = server.stats
    assert stats.faults_by_kind == {"500": 1}
    assert result.usage["total"]["retries"] == 1
    assert result.usage["total"]["calls"] == 30  # 2 rounds x 3 roles x 5 debates
    assert result.usage["total"]["input_tokens"] == stats.prompt_tokens
    assert set(result.usage["by_role"]) == {"affirmative", "negative", "judge"}
