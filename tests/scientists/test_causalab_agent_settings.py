"""The LLM scientist's settings per fidelity: the paper's agent in faithful mode, ours in fixed.

Faithful mode must send the paper's sampling (temperature 0.1, top-p 0.95, 8192 tokens),
replay the full previous records oldest first, use the paper's prompt content, and score
roots from the exact-context re-evaluation; fixed mode keeps our settings. Every record
carries the settings it was played with. The model is the oracle of
``test_causalab_react`` (it knows the true graph), over HTTP against the local
OpenAI-compatible test server where the wire matters.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from tests.scientists.test_causalab_react import Oracle

from silicolab.envs import make
from silicolab.envs.causalab.suite import TARGET
from silicolab.llm import load_model
from silicolab.scientists.causalab import InterventionalScientist, ReactScientist, play_episode
from silicolab.scientists.causalab.episode import aplay_episode
from silicolab.scm.metrics import ancestor_roots

MEMORY = re.compile(r"memory of step (\d+)")


class Scientist(Oracle):
    """The oracle with a memory that names its step (to see the history's order), a
    final hypothesis without any edge into the target's ancestors (so that source-only
    roots are wrong), and the true roots when asked the re-evaluation question."""

    def __init__(self, lab: Any, *, hide_roots: bool = False):
        super().__init__(lab)
        self.hide_roots = hide_roots
        self.reeval_prompts: list[list[dict[str, str]]] = []

    def record(self, action: dict[str, Any], extra_edge: tuple[str, str] | None = None) -> str:
        body = json.loads(super().record(action, extra_edge).strip("`json\n"))
        body["memory"] = f"memory of step {len(self.prompts)}"
        if self.hide_roots:
            body["hypothesis"] = {"edges": [], "freq_equation": "", "coefficients": {}}
        return "```json\n" + json.dumps(body) + "\n```"

    def answer(self, messages: list[dict[str, str]]) -> str:
        if messages[0]["role"] == "system" and "root_nodes" in messages[1]["content"]:
            self.reeval_prompts.append(messages)
            roots = sorted(ancestor_roots(sorted(self.lab.config.edges), TARGET))
            formula = f"{TARGET} = {self.lab.target_frequency} + 0*{roots[0]}"
            return json.dumps({"root_nodes": roots, "frequency_formula": formula})
        return super().answer(messages)


def play(fidelity: str, **options: Any) -> tuple[Any, Scientist]:
    lab = make("causalab", suite="4nodes", index=0, seed=0, fidelity=fidelity)
    oracle = Scientist(lab, hide_roots=options.pop("hide_roots", False))
    model = load_model("scripted", fn=oracle.scripted)
    return play_episode(lab, ReactScientist(model, **options)), oracle


@pytest.mark.parametrize(
    ("fidelity", "sent"),
    [
        ("faithful", {"temperature": 0.1, "max_tokens": 8192, "top_p": 0.95}),
        ("fixed", {"temperature": 0.0, "max_tokens": 8192, "top_p": None}),
    ],
)
async def test_the_server_receives_the_modes_sampling(llm_server_factory, fidelity, sent) -> None:
    lab = make("causalab", suite="3nodes", index=1, seed=0, fidelity=fidelity)
    oracle = Scientist(lab)
    server = llm_server_factory(reply=oracle.http)
    model = load_model("openai:fake-scientist", base_url=server.base_url, timeout_s=5)
    try:
        record = await aplay_episode(lab, ReactScientist(model))
    finally:
        await model.aclose()
    assert record.success
    bodies = server.stats.requests_log
    assert bodies and len(bodies) == record.usage["calls"]
    graph = [b for b in bodies if "<final_hypothesis>" in b["messages"][0]["content"]]
    steps = [b for b in bodies if b["messages"][0]["role"] == "user" and b not in graph]
    assert len(steps) == len(record.steps)
    for body in steps:
        assert {k: body.get(k) for k in sent} == sent
    # the faithful re-evaluation (roots, then the graph): same sampling, upstream's
    # escalating token caps
    reeval = [b for b in bodies if b["messages"][0]["role"] == "system"]
    assert len(reeval) == len(graph) == (fidelity == "faithful")
    for body in reeval + graph:
        assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.1, 0.95, 1200)
    assert record.agent_settings["temperature"] == sent["temperature"]
    assert record.agent_settings["top_p"] == sent["top_p"]
    assert record.agent_settings["max_tokens"] == 8192


def test_faithful_history_replays_the_full_records_oldest_first() -> None:
    record, oracle = play("faithful")
    assert record.success
    late = oracle.prompts[4][0]["content"]
    history = late.split("History of action-observations", 1)[1].split("## Current screen")[0]
    steps = [int(n) for n in MEMORY.findall(history)]
    assert steps == [1, 2, 3, 4]  # every earlier record, oldest first
    first = history.split("Action:", 2)[1]
    for key in ('"memory"', '"thought"', '"past_data"', '"hypothesis"', '"experiment"'):
        assert key in first  # the whole record, not only its action
    assert '"action": "TALK"' in first


def test_fixed_history_keeps_the_compact_actions_newest_first() -> None:
    record, oracle = play("fixed")
    assert record.success
    late = oracle.prompts[4][0]["content"]
    history = late.split("History of action-observations", 1)[1].split("## Current screen")[0]
    assert "memory of step" not in history
    assert history.index('{"value": 50}') < history.index('{"action": "TALK", "arg1": 101}')


def test_faithful_prompt_carries_the_papers_content_without_our_hints() -> None:
    _, faithful = play("faithful")
    _, fixed = play("fixed")
    ours, paper = fixed.prompts[0][0]["content"], faithful.prompts[0][0]["content"]
    hints = ("Compare the crystal before and after", "base = freq minus the parent terms")
    assert all(h in ours for h in hints)
    assert not any(h in paper for h in hints)
    assert "Previous State" in paper and "INCREMENTAL UPDATES" in paper
    assert "c1 instead of c_pH" in paper  # the paper's worked example of wrong updates


def test_faithful_roots_come_from_the_exact_context_reevaluation() -> None:
    record, oracle = play("faithful", hide_roots=True)
    assert record.success
    assert len(oracle.reeval_prompts) == 1 and record.usage["reeval_calls"] == 1
    asked = oracle.reeval_prompts[0][1]["content"]
    screens = [p[0]["content"] for p in oracle.prompts]
    last_exploration = [s for s in screens if "CRYSTAL REACTOR" not in s][-1]
    assert "EXISTING OBSERVATIONS" in last_exploration
    assert last_exploration in asked  # the exact phase-1 context, whole
    assert record.reeval["status"] == "ok"
    assert record.metrics["root_source"] == "exact_context_reeval"
    assert record.metrics["root_f1"] == 1.0  # the model named the true roots when asked
    assert record.metrics["root_f1_source_only"] == 0.0  # its hypothesis had no edges
    assert record.metrics["reeval_formula_abs_error"] == 0.0  # evaluated on the reactor
    assert record.metrics["reeval_formula_hit"] is True


def test_fixed_roots_stay_source_only_without_an_extra_call() -> None:
    record, oracle = play("fixed", hide_roots=True)
    assert record.success and not oracle.reeval_prompts
    assert record.reeval is None and "reeval_calls" not in record.usage
    assert record.metrics["root_f1"] == 0.0


def test_every_record_carries_the_settings_used() -> None:
    faithful, _ = play("faithful")
    fixed, _ = play("fixed")
    assert faithful.to_dict()["agent_settings"] == {
        "fidelity": "faithful",
        "temperature": 0.1,
        "max_tokens": 8192,
        "top_p": 0.95,
        "history": "full_records_oldest_first",
        "prompt_variant": "paper",
        "root_reeval": True,
        "sampling_note": "",
    }
    assert fixed.agent_settings["history"] == "actions_newest_first"
    assert fixed.agent_settings["prompt_variant"] == "silicolab"
    reference = play_episode(
        make("causalab", suite="3nodes", index=0, seed=0), InterventionalScientist()
    )
    assert reference.agent_settings == {"fidelity": "fixed"}


def test_models_that_refuse_sampling_get_none_and_the_record_says_why() -> None:
    from silicolab.scientists.causalab.settings import agent_settings

    chosen = agent_settings("faithful", "gpt-5-mini")
    assert chosen.temperature is None and chosen.top_p is None and chosen.max_tokens == 8192
    assert "gpt-5-mini" in chosen.sampling_note
    assert agent_settings("faithful", "qwen3").temperature == 0.1
    assert agent_settings("fixed", "m", temperature=0.7).temperature == 0.7
