"""Pydantic schemas of the MAC agents' structured replies.

Judges (and the single agent) answer in JSON so that their verdicts are read
deterministically; debaters and the executor answer in free text. Decisions are
``Literal`` enums and strings carry ``max_length``: grammar-constrained servers
(llama.cpp) enforce enums and string lengths, though not numeric bounds. The batched
schemas have one required field per question (``q1``, ``q2`` ... by question number), so a
reply cannot skip a question or answer one twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, create_model

#: Longest "thought" a judge may write per question (characters).
THOUGHT_CHARS = 400
#: Longest follow-up question (characters).
FOLLOW_UP_CHARS = 300
#: Longest plan step (characters) and most steps in a plan.
STEP_CHARS = 300
MAX_STEPS = 12

Thought = Annotated[str, Field(max_length=THOUGHT_CHARS, description="brief reasoning first")]


class QuestionVerdict(BaseModel):
    """The judge's verdict on one question of a debate round."""

    model_config = ConfigDict(extra="forbid")

    thought: Thought
    decision: Literal["yes", "no", "follow_up"]
    follow_up: str = Field(
        max_length=FOLLOW_UP_CHARS,
        description="the question for the debaters when decision is follow_up, else empty",
    )


class QuestionAnswer(BaseModel):
    """A yes/no answer with its reasoning (the single agent's reply per question)."""

    model_config = ConfigDict(extra="forbid")

    thought: Thought
    answer: Literal["yes", "no"]


def question_key(number: int) -> str:
    """The JSON field of question ``number``: ``q1``, ``q2`` ..."""
    return f"q{number}"


def _batched(name: str, numbers: Sequence[int], item: Any) -> type[BaseModel]:
    fields: dict[str, Any] = {question_key(n): (item, ...) for n in numbers}
    return create_model(name, __config__=ConfigDict(extra="forbid"), **fields)


def judge_round_schema(numbers: Sequence[int]) -> type[BaseModel]:
    """A judge's round reply: a :class:`QuestionVerdict` per open question."""
    return _batched("DebateRoundVerdicts", numbers, QuestionVerdict)


def judge_final_schema(numbers: Sequence[int]) -> type[BaseModel]:
    """The forced final verdict: ``"yes"``/``"no"`` per still-open question, nothing else
    (enum-only, so even a weak model's constrained reply parses)."""
    return _batched("DebateFinalVerdicts", numbers, Literal["yes", "no"])


def single_agent_schema(numbers: Sequence[int]) -> type[BaseModel]:
    """The single agent's reply: a :class:`QuestionAnswer` per question."""
    return _batched("CausalAnswers", numbers, QuestionAnswer)


Step = Annotated[str, StringConstraints(max_length=STEP_CHARS)]


def plan_verdict_schema(algorithms: Sequence[str], *, allow_follow_up: bool) -> type[BaseModel]:
    """The plan judge's reply: winner, algorithm (one of ``algorithms``), the plan steps,
    and, in a round that may continue, ``decision``/``follow_up``."""
    fields: dict[str, Any] = {"thought": (Thought, ...)}
    if allow_follow_up:
        fields["decision"] = (Literal["decide", "follow_up"], ...)
        fields["follow_up"] = (
            str,
            Field(max_length=FOLLOW_UP_CHARS, description="question to the debaters, or empty"),
        )
    fields["winner"] = (Literal["affirmative", "negative"], ...)
    fields["algorithm"] = (Literal[tuple(algorithms)], ...)
    fields["plan"] = (list[Step], Field(min_length=1, max_length=MAX_STEPS))
    name = "PlanRoundVerdict" if allow_follow_up else "PlanFinalVerdict"
    return create_model(name, __config__=ConfigDict(extra="forbid"), **fields)
