"""Typed survey answers, structured parsing and NA in silicolab.sim.survey."""

from __future__ import annotations

import pytest

from silicolab.core.errors import InputError
from silicolab.llm import load_model
from silicolab.sim import GenerativeAgent, Identity, RuleAgent
from silicolab.sim.entity import ActionSpec
from silicolab.sim.survey import SurveyQuestion, aask_survey, ask_survey, parse_number

CONTEXT = "Alice sold Bob a mug. Transcript:\n1. Alice: Ten dollars?\n2. Bob: Deal."


def respondent(answers: dict[str, str], parsed: dict[str, str] | None = None) -> RuleAgent:
    """Answers free-text questions from ``answers`` (keyed by a word in the question) and
    typed parse requests from ``parsed``; records every spec it gets."""

    def policy(agent: RuleAgent, spec: ActionSpec) -> str:
        agent.state.setdefault("kinds", []).append(spec.kind)
        table = answers if spec.kind == "free" else (parsed or {})
        for key, reply in table.items():
            if key in spec.call_to_action:
                return reply
        raise AssertionError(f"unexpected {spec.kind} request: {spec.call_to_action}")

    return RuleAgent("Bob", policy)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("$1,200.50", 1200.5),
        ("about 45 dollars", 45.0),
        ("-3e2", -300.0),
        (".5", 0.5),
        ("12 to 15", None),
        ("no number", None),
        ("1,2", None),
    ],
)
def test_parse_number(text: str, value: float | None) -> None:
    assert parse_number(text) == value


def test_typed_answers_parsed_directly_without_extra_calls() -> None:
    bob = respondent(
        {
            "price": "$10.50, since that was the offer.",
            "deals": "2 deals - one for each mug.",
            "deal reached": "Yes, we agreed.",
            "satisfied": "Somewhat. It was fine.",
            "role": "buyer. I paid.",
        }
    )
    questions = [
        SurveyQuestion("price", "What price was paid?", "continuous", addressee="Bob"),
        SurveyQuestion("n", "How many deals were made?", "count", addressee="Bob"),
        SurveyQuestion("deal", "Was a deal reached?", "binary", addressee="Bob"),
        SurveyQuestion(
            "sat", "How satisfied are you?", "ordinal", ("not", "somewhat", "very"), "Bob"
        ),
        SurveyQuestion("role", "What was your role?", "nominal", ("buyer", "seller"), "Bob"),
    ]
    answers = ask_survey({"Bob": bob}, questions, context=CONTEXT)
    assert [a.value for a in answers] == [10.5, 2, 1, 1, "buyer"]
    assert [a.variable for a in answers] == ["price", "n", "deal", "sat", "role"]
    assert bob.state["kinds"] == ["free"] * 5
    assert all(a.explanation and a.addressee == "Bob" for a in answers)
    assert answers[0].raw == "$10.50, since that was the offer."
    assert isinstance(answers[1].value, int)


def test_ambiguous_answers_go_through_typed_actions() -> None:
    bob = respondent(
        {"price": "Somewhere between 9 and 11 dollars.", "satisfied": "Pretty happy overall."},
        {"price": "10", "satisfied": "very"},
    )
    questions = [
        SurveyQuestion("price", "What price was paid?", "continuous", addressee="Bob"),
        SurveyQuestion("sat", "How satisfied are you?", "ordinal", ("not", "very"), "Bob"),
    ]
    answers = ask_survey({"Bob": bob}, questions, context=CONTEXT)
    assert [a.value for a in answers] == [10.0, 1]
    assert bob.state["kinds"] == ["free", "float", "free", "choice"]
    assert "mapped the answer to 'very'" in answers[1].explanation


def test_na_from_the_respondent_and_from_the_parser() -> None:
    bob = respondent(
        {"price": "NA - there was no sale.", "deals": "It is hard to say.", "mood": "Meh."},
        {"deals": "nan", "mood": "NA"},
    )
    questions = [
        SurveyQuestion("price", "What price was paid?", "continuous", addressee="Bob"),
        SurveyQuestion("n", "How many deals were made?", "count", addressee="Bob"),
        SurveyQuestion("mood", "What was your mood?", "nominal", ("happy", "sad"), "Bob"),
    ]
    answers = ask_survey({"Bob": bob}, questions, context=CONTEXT)
    assert [a.value for a in answers] == [None, None, None]
    assert all(a.is_na and a.explanation.startswith("NA") for a in answers)


def test_separate_parser_and_count_rules() -> None:
    bob = respondent({"deals": "Two and a half, roughly", "late": "minus one"})
    parser = RuleAgent(
        "Parser", lambda agent, spec: "2.5" if "half" in spec.call_to_action else "-1"
    )
    questions = [
        SurveyQuestion("n", "How many deals were made?", "count", addressee="Bob"),
        SurveyQuestion("late", "How many were late?", "count", addressee="Bob"),
    ]
    answers = ask_survey({"Bob": bob}, questions, context=CONTEXT, parser=parser)
    assert answers[0].value == 2 and "rounded" in answers[0].explanation
    assert answers[1].value is None and "negative" in answers[1].explanation
    assert bob.state["kinds"] == ["free", "free"]


async def test_addressees_and_validation() -> None:
    alice = RuleAgent("Alice", lambda agent, spec: "seller")
    coordinator = RuleAgent("coordinator", lambda agent, spec: "0")
    questions = [
        SurveyQuestion("role", "What was your role?", "nominal", ("buyer", "seller"), "Alice"),
        SurveyQuestion("n", "How many deals?", "count"),
    ]
    answers = await aask_survey(
        {"Alice": alice, "coordinator": coordinator}, questions, context=CONTEXT
    )
    assert [(a.addressee, a.value) for a in answers] == [("Alice", "seller"), ("coordinator", 0)]
    assert answers[0].to_dict()["value"] == "seller"
    with pytest.raises(InputError, match="no entity"):
        await aask_survey({"Alice": alice}, questions, context=CONTEXT)
    with pytest.raises(InputError, match="two levels"):
        SurveyQuestion("x", "?", "ordinal", ("one",))
    with pytest.raises(InputError, match="type"):
        SurveyQuestion("x", "?", "text")  # type: ignore[arg-type]
    assert SurveyQuestion("d", "?", "binary").levels == ("no", "yes")


def test_generative_agent_answers_with_scripted_model() -> None:
    model = load_model(
        "scripted",
        rules={r"What number does": '{"value": 12}', r"Which option matches": '{"choice": 2}'},
        default="Around a dozen or so, I think.",
    )
    agent = GenerativeAgent("Bob", model, [Identity("{name} bought a mug.")])
    questions = [
        SurveyQuestion("n", "How many mugs are in the shop?", "count", addressee="Bob"),
        SurveyQuestion("deal", "Was a deal reached?", "binary", addressee="Bob"),
    ]
    answers = ask_survey({"Bob": agent}, questions, context=CONTEXT)
    assert answers[0].value == 12
    assert answers[1].value == 1
    assert model.ledger.summary()["by_tag"]["survey"]["calls"] == 2
