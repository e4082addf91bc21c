"""The scripted test double, structured answers and their repair loop (no network)."""

from __future__ import annotations

import json
from typing import Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

from silicolab.core.errors import InputError, ParseFailure
from silicolab.llm import (
    ScriptedModel,
    achoose,
    astructured,
    choose,
    example_from_schema,
    extract_json,
    load_model,
    number,
    structured,
)


class Person(BaseModel):
    name: str
    age: int = Field(ge=0, le=120)
    mood: Literal["happy", "sad"]
    tags: list[str] = Field(min_length=2)


def test_rules_fn_and_replies_select_answers_in_documented_order() -> None:
    model = load_model(
        "scripted",
        rules=[(r"capital of (\w+)", r"The capital of \1 is known."), ("weather", "rain")],
        replies=["first", "second"],
    )
    assert model.generate("capital of France?").text == "The capital of France is known."
    assert model.generate("tell me the weather").text == "rain"
    assert [model.generate("x").text for _ in range(3)] == ["first", "second", "first"]
    fn_model = load_model("scripted", fn=lambda req: req.messages[-1]["content"].upper())
    assert fn_model.generate("shout").text == "SHOUT"


def test_scripted_usage_counts_words_and_honours_stop_and_max_tokens() -> None:
    model = load_model("scripted", default="one two three four five")
    c = model.generate(
        [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi there"}]
    )
    assert (c.usage.input_tokens, c.usage.output_tokens) == (4, 5)
    assert model.generate("hi", max_tokens=2).text == "one two"
    assert model.generate("hi", stop=["three"]).text == "one two "


def test_example_from_schema_is_valid_for_nested_pydantic_schema() -> None:
    import numpy as np

    class Team(BaseModel):
        lead: Person
        members: list[Person] = Field(min_length=1)
        size: int = Field(gt=0, lt=5)
        score: float | None = Field(default=None, ge=-1, le=1)

    for seed in range(20):
        value = example_from_schema(Team.model_json_schema(), np.random.default_rng(seed))
        Team.model_validate(value)  # raises if invalid


def test_structured_returns_validated_object_from_schema_example() -> None:
    model = load_model("scripted")
    person = structured(model, "Invent a person.", Person)
    assert isinstance(person, Person)
    again = structured(model, "Invent a person.", Person)
    assert again == person  # deterministic for the same request


def test_structured_repairs_after_invalid_reply_with_error_in_prompt() -> None:
    good = {"name": "Ada", "age": 36, "mood": "happy", "tags": ["a", "b"]}
    scripted = ScriptedModel(
        replies=[
            "not json at all",
            json.dumps({**good, "age": 500}),
            "```json\n" + json.dumps(good) + "\n```",
        ]
    )
    model = load_model(scripted)
    person = structured(model, "Invent a person.", Person, retries=2)
    assert person == Person(**good)
    # second and third calls carried the previous bad reply and the validation error
    second, third = scripted.calls[1], scripted.calls[2]
    assert second.messages[-2] == {"role": "assistant", "content": "not json at all"}
    assert "not valid" in second.messages[-1]["content"]
    assert "age" in third.messages[-1]["content"]
    assert model.ledger.summary()["calls"] == 3


def test_structured_raises_parse_failure_with_raw_text_when_repairs_fail() -> None:
    model = load_model("scripted", rules=[(".", "still not json")])
    with pytest.raises(ParseFailure) as info:
        structured(model, "Invent a person.", Person, retries=1)
    assert info.value.raw == "still not json"
    assert info.value.attempts == 2


def test_structured_rejects_non_model_schema() -> None:
    with pytest.raises(InputError, match="pydantic BaseModel"):
        structured(load_model("scripted"), "x", dict)  # type: ignore[arg-type]


def test_choose_and_number() -> None:
    model = load_model(
        "scripted", rules=[("Which fruit", '{"choice": 2}'), ("How many", '{"value": 3}')]
    )
    assert choose(model, "Which fruit is red?", ["banana", "cherry", "lime"]) == 1
    assert number(model, "How many legs?", lo=0, hi=10, integer=True) == 3
    out_of_range = load_model("scripted", rules=[(".", '{"choice": 9}')])
    with pytest.raises(ParseFailure):
        choose(out_of_range, "Which?", ["a", "b"], retries=0)


async def test_async_twins_and_sync_twins_inside_a_running_loop() -> None:
    model = load_model("scripted", rules=[(".", '{"choice": 1}')])
    assert await achoose(model, "Which?", ["a", "b"]) == 0
    assert choose(model, "Which?", ["a", "b"]) == 0  # the sync twin works here too (Jupyter)
    person = await astructured(load_model("scripted"), "x", Person)
    assert isinstance(person, Person)
    assert model.generate("inside a loop").text == '{"choice": 1}'


def test_extract_json_variants() -> None:
    assert json.loads(extract_json('Sure! {"a": 1} hope that helps')) == {"a": 1}
    assert json.loads(extract_json("```json\n[1, 2]\n```")) == [1, 2]
    assert extract_json("plain") == "plain"


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"temperature": 3.0}, "temperature"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"sample_index": -1}, "sample_index"),
    ],
)
def test_bad_generation_arguments_are_input_errors(kwargs: dict, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        load_model("scripted").generate("x", **kwargs)


def test_bad_messages_are_input_errors() -> None:
    model = load_model("scripted")
    with pytest.raises(InputError, match="role"):
        model.generate([{"role": "wizard", "content": "x"}])
    with pytest.raises(InputError, match="'role' and 'content'"):
        model.generate([{"text": "x"}])
    with pytest.raises(InputError, match="no messages"):
        model.generate([])


def test_pydantic_validation_error_is_not_swallowed_for_valid_models() -> None:
    with pytest.raises(ValidationError):
        Person.model_validate({"name": "x"})
