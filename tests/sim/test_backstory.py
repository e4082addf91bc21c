"""Backstories: formative memories from one structured call, seeded into a memory."""

from __future__ import annotations

import json
import re

import pytest

from silicolab.core.errors import InputError, ParseFailure
from silicolab.llm import ScriptedModel
from silicolab.llm.types import Request
from silicolab.sim.backstory import (
    aformative_memories,
    formative_memories,
    seed_memory,
)
from silicolab.sim.memory import AssociativeMemory


def _valid_reply(request: Request) -> str:
    """Reads the requested ages from the prompt and answers one memory per age."""
    prompt = request.messages[-1]["content"]
    listed = re.search(r"these ages: ([\d, ]+)\.", prompt)
    assert listed is not None
    ages = [int(a) for a in listed.group(1).split(",")]
    # out of order on purpose: results come back in the requested order
    memories = [{"age": a, "memory": f"At {a}, Alice fixed a broken toy."} for a in ages[::-1]]
    return json.dumps({"memories": memories})


def test_one_call_one_memory_per_age_in_order() -> None:
    model = ScriptedModel(fn=_valid_reply)
    out = formative_memories(model, "Alice", traits="curious, stubborn", ages=(4, 9, 15))
    assert out == [f"At {a}, Alice fixed a broken toy." for a in (4, 9, 15)]
    assert len(model.calls) == 1
    request = model.calls[0]
    assert request.json_schema is not None
    assert request.tag == "backstory"
    prompt = request.messages[-1]["content"]
    assert "Alice" in prompt and "curious, stubborn" in prompt and "third person" in prompt


async def test_async_default_ages_and_sample_index() -> None:
    model = ScriptedModel(fn=_valid_reply)
    out = await aformative_memories(model, "Alice", traits="kind", sample_index=3, tag="bs")
    assert len(out) == 5 and out[0].startswith("At 3,") and out[-1].startswith("At 21,")
    assert model.calls[0].sample_index == 3 and model.calls[0].tag == "bs"


def test_seed_memory_times_and_importance() -> None:
    memory = AssociativeMemory()
    memories = formative_memories(ScriptedModel(fn=_valid_reply), "Alice", traits="shy")
    seed_memory(memory, memories)
    items = memory.items()
    assert [m.text for m in items] == memories
    assert [m.time for m in items] == [-5.0, -4.0, -3.0, -2.0, -1.0]
    assert all(m.importance == 0.8 for m in items)
    memory.add("Alice opens the bakery.", time=0)
    assert memory.retrieve("broken toy", k=1)[0].text in memories

    other = AssociativeMemory()
    seed_memory(other, ["a", "b"], start_time=-100, importance=0.3)
    assert [(m.time, m.importance) for m in other.items()] == [(-100.0, 0.3), (-99.0, 0.3)]


def test_invalid_reply_is_repaired_by_reprompt() -> None:
    bad = json.dumps({"memories": [{"age": 3, "memory": "x"}, {"age": 3, "memory": "y"}]})
    good = json.dumps({"memories": [{"age": 3, "memory": "x"}, {"age": 7, "memory": "y"}]})
    model = ScriptedModel(replies=[bad, good])
    assert formative_memories(model, "Bo", traits="calm", ages=[3, 7]) == ["x", "y"]
    assert len(model.calls) == 2
    assert "exactly one memory for each age" in model.calls[1].messages[-1]["content"]


@pytest.mark.parametrize(
    "reply",
    [
        "not json at all",
        json.dumps({"memories": [{"age": 3, "memory": "only one"}]}),
        json.dumps({"memories": [{"age": 3, "memory": "  "}, {"age": 7, "memory": "ok"}]}),
        json.dumps({"memories": [{"age": 3, "memory": "a"}, {"age": 8, "memory": "b"}]}),
    ],
)
def test_invalid_reply_that_stays_invalid_raises_parse_failure(reply: str) -> None:
    model = ScriptedModel(replies=[reply])
    with pytest.raises(ParseFailure) as info:
        formative_memories(model, "Bo", traits="calm", ages=[3, 7])
    assert info.value.raw == reply
    assert len(model.calls) == 3  # one call plus the structured layer's two re-prompts


def test_bad_arguments() -> None:
    model = ScriptedModel(fn=_valid_reply)
    with pytest.raises(InputError):
        formative_memories(model, "Alice", traits="kind", ages=[3, 3])
    with pytest.raises(InputError):
        formative_memories(model, "Alice", traits="kind", ages=[])
    with pytest.raises(InputError):
        formative_memories(model, "Alice", traits=" ")
    with pytest.raises(InputError):
        seed_memory(AssociativeMemory(), "one string")
    assert model.calls == []
