"""The BoxingGym episode protocol with an LLM scientist: scripted, and over local HTTP."""

from __future__ import annotations

import json
from typing import Any

import jinja2
import pytest
from tests.scientists.boxinggym_episodes import episode

from silicolab.core.errors import InputError
from silicolab.llm import load_model
from silicolab.scientists.boxinggym import (
    COMM_LIMIT,
    MAX_TRIES,
    BoxingRecord,
    LLMScientist,
    RandomDesigner,
    make_env,
)
from silicolab.scientists.boxinggym.llm import extract_tag, render, truncate_words

EXPLANATION = " ".join(f"word{i}" for i in range(250))
NOVICE_ANSWER = "<answer>20</answer>"


class Scientist:
    """A scripted scientist for the death process: its first reply has no tags, every
    step's first design (5) is out of range, the retry after the env's message is valid;
    answers are 12; the explanation is 250 words long."""

    def __init__(self, always_invalid: bool = False) -> None:
        self.always_invalid = always_invalid
        self.steps = 0
        self.seen: list[list[dict[str, str]]] = []

    def reply(self, messages: list[dict[str, Any]], tag: str) -> str:
        self.seen.append([dict(m) for m in messages])
        last = messages[-1]["content"]
        if tag == "novice":
            return NOVICE_ANSWER
        if "<answer>your answer</answer>" in last:
            return "<thought>hm</thought><answer>12</answer>"
        if "explain" in last.lower():
            return EXPLANATION
        if "not accepted" in last:  # the env's message came back
            design = "5" if self.always_invalid else f"{0.2 + 0.1 * self.steps:.1f}"
            return f"<thought>fix it</thought> <observe>{design}</observe>"
        if "no usable <observe>" in last:
            return "<observe>5</observe>"
        self.steps += 1
        if self.steps == 1:
            return "Let me think about it without tags."
        return "<thought>late times</thought> <observe>5</observe>"

    def scripted(self, request: Any) -> str:
        return self.reply(list(request.messages), request.tag)

    def http(self, body: dict[str, Any]) -> str:
        system = body["messages"][0]["content"]
        tag = "novice" if "Here is what you know" in system else "scientist"
        return self.reply(body["messages"], tag)


def play(script: Scientist, **kw: Any) -> tuple[BoxingRecord, Any]:
    model = load_model("scripted:gpt-4o-double", fn=script.scripted)
    scientist = LLMScientist(model)
    options = {"seed": 3, "regret": False, "communicate": True} | kw
    return episode("death_process", scientist, **options), (model, scientist)


def test_scripted_episode_end_to_end() -> None:
    script = Scientist()
    record, (model, scientist) = play(script, regret=True, regret_random=10, regret_nmc=(200, 200))
    assert record.checkpoints == [0, 1, 3, 5, 7, 10]
    assert [s.n_experiments for s in record.scores] == [0, 1, 3, 5, 7, 10]
    assert all(s.n == 10 and s.n_missing == 0 for s in record.scores)
    assert all(p == 12 for s in record.scores for p in s.predictions)
    assert record.scores[1].truths == record.scores[-1].truths  # the same questions each time
    # every step: one rejected design with the env's exact message, then an accepted one
    assert len(record.designs) == 20 and not record.skipped_steps
    first = record.designs[0]
    assert first.format_retries == 1 and first.design == "5" and not first.ok
    assert first.message == "Error: The input must be less than 2."
    assert all(d.ok == (d.attempt == 1) for d in record.designs)
    assert [o.step for o in record.outcomes] == list(range(10))
    assert record.outcomes[0].design == "0.3" and record.outcomes[0].parsed == 0.3
    assert [o.value for o in record.outcomes] == [v for _, v in record.truth["data"]]
    # the env's message is what the scientist saw next; evaluation turns left no trace
    retry_prompt = next(m for m in scientist.messages if "not accepted" in m["content"])
    assert retry_prompt["content"].startswith("Error: The input must be less than 2.")
    assert not any("<answer>" in m["content"] for m in scientist.messages[1:])
    # explanation cut to 200 words and recorded as cut
    assert record.explanation_words == 250 and record.explanation_truncated
    assert len(record.explanation.split()) == COMM_LIMIT
    # the novice sees the goal text and the explanation, never the scientist's data
    assert record.novice is not None and record.novice.predictions == [20] * 10
    assert record.novice_system.endswith(record.explanation)
    assert "Your goal is to predict" in record.novice_system
    usage = model.ledger.summary()["by_tag"]
    assert usage["novice"]["calls"] == 10 == record.usage["novice"]["calls"]
    assert usage["scientist"]["calls"] == record.usage["scientist"]["calls"]
    # EI regret replays the 10 accepted designs and their recorded outcomes
    assert len(record.regret) == 10 and record.regret_mean == pytest.approx(sum(record.regret) / 10)
    assert record.regret_detail["estimator"] == "fixed"
    assert record.regret_detail["eigs"] and all(e >= 0 for e in record.regret_detail["eigs"])
    assert json.loads(json.dumps(record.to_dict()))["schema_version"] == "1"
    assert BoxingRecord.from_dict(record.to_dict()).to_dict() == record.to_dict()


def test_fixed_mode_hides_the_last_observation_from_the_novice() -> None:
    script = Scientist()
    fixed, _ = play(script)
    novice_prompts = [m for m in script.seen if m[0]["content"] == fixed.novice_system]
    assert len(novice_prompts) == 10
    assert all(len(p) == 2 for p in novice_prompts)  # system + one question, no history
    last_obs = fixed.outcomes[-1].text
    assert all("last result" not in p[-1]["content"] for p in novice_prompts)
    script = Scientist()
    faithful, _ = play(script, fidelity="faithful")
    novice_prompts = [m for m in script.seen if m[0]["content"] == faithful.novice_system]
    last_obs = faithful.outcomes[-1].text
    assert all(f"The last result was: {last_obs}" in p[-1]["content"] for p in novice_prompts)


def test_a_step_is_skipped_after_three_rejected_tries() -> None:
    script = Scientist(always_invalid=True)
    record, _ = play(script, steps=3, checkpoints=(0, 3), communicate=False)
    assert record.skipped_steps == [0, 1, 2] and not record.outcomes
    assert len(record.designs) == 3 * MAX_TRIES and not any(d.ok for d in record.designs)
    assert record.novice is None and record.explanation is None
    # the checkpoint after the skipped steps shows the last error message
    assert record.scores[-1].n_experiments == 3
    asked = [m for m in script.seen if "<answer>your answer" in m[-1]["content"]]
    assert "Error: The input must be less than 2." in asked[-1][-1]["content"]


def test_unparseable_answers_are_missing_not_coerced() -> None:
    """A reply that never has an <answer> block ends as None after 3 re-prompts."""
    model = load_model("scripted", fn=lambda r: "<observe>0.5</observe> no answer")
    record = episode(
        "death_process", LLMScientist(model), seed=1, steps=1, checkpoints=(1,), regret=False
    )
    score = record.scores[0]
    assert score.n_missing == 10 and score.predictions == [None] * 10
    assert score.format_retries == 30
    assert model.ledger.summary()["calls"] == 1 + 10 * 4


def test_parsing_rules_and_word_limit() -> None:
    assert extract_tag("<observe>\n [0.5, 1] \n</observe>", "observe") == "[0.5, 1]"
    assert extract_tag("<observe>nowhere</observe>", "observe") is None  # no digit
    assert extract_tag("<observe>done 3</observe>", "observe") is None
    assert extract_tag("<answer>1</answer><answer>2</answer>", "answer") == "1"
    assert truncate_words("a b  c", 2) == ("a b", 3, True)
    assert truncate_words(" a b ", 2) == ("a b", 2, False)
    with pytest.raises(jinja2.UndefinedError):
        render("question.j2", prefix="x")


def test_bad_arguments_are_input_errors() -> None:
    with pytest.raises(InputError, match="novice"):
        episode("death_process", RandomDesigner(), communicate=True)
    with pytest.raises(InputError, match="checkpoints"):
        episode("death_process", RandomDesigner(), steps=2)
    with pytest.raises(InputError, match="fidelity"):
        episode("death_process", RandomDesigner(), fidelity="exact")  # type: ignore[arg-type]


async def test_same_protocol_over_http(llm_server_factory) -> None:

    from silicolab.scientists.boxinggym import aplay_episode

    script = Scientist()
    server = llm_server_factory(reply=script.http)
    model = load_model("openai:fake-scientist", base_url=server.base_url, timeout_s=5)
    try:
        record = await aplay_episode(
            make_env("death_process", seed=2),
            LLMScientist(model),
            steps=3,
            checkpoints=(0, 3),
            communicate=True,
            regret=False,
        )
    finally:
        await model.aclose()
    assert len(record.outcomes) == 3 and record.designs[0].format_retries == 1
    assert record.novice is not None and record.novice.predictions == [20] * 10
    calls = record.usage["scientist"]["calls"] + record.usage["novice"]["calls"]
    assert calls == server.stats.requests
    tokens = record.usage["scientist"]["input_tokens"] + record.usage["novice"]["input_tokens"]
    assert tokens == server.stats.prompt_tokens
