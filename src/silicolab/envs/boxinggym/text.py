"""The prompt text every BoxingGym goal shares, and JSON-ready values for records."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np


def observe_instruction(choice: str = "experiment") -> str:
    """How the scientist writes an experiment: its reasoning in ``<thought>`` tags and the
    ``choice`` (the experiment, a time, a patient ID, ...) in ``<observe>`` tags."""
    return (
        f"Write your reasoning inside <thought></thought> tags and the {choice} you choose "
        "inside <observe></observe> tags."
    )


def answer_instruction(content: str) -> str:
    """How the scientist answers a question: ``content`` (e.g. "only 0 or 1") inside
    ``<answer>`` tags."""
    return f"When asked a question, reply inside <answer></answer> tags with {content}"


OBSERVE_FORMAT = observe_instruction()
ANSWER_FORMAT = (
    "When you are asked a question, reply inside <answer></answer> tags with only the answer "
    "in the format requested."
)
NAIVE_KNOWLEDGE_HEADER = "Here is what you know about the environment:\n"


def communication_prompt(word_limit: int = 200, extra: str = "") -> str:
    """The request for an explanation a novice can predict from (discovery protocol).

    Paraphrases the published request: the novice has no prior knowledge, cannot experiment,
    and predicts only from the explanation, which is limited to ``word_limit`` words.
    """
    text = (
        "Now explain what you have learned about the environment to someone who knows nothing "
        "about it and will not be able to run any experiments before making predictions. They "
        "will predict using only your explanation, so be as specific and quantitative as you "
        "can; you cannot pass on your own experiments or observations. "
        f"Use at most {word_limit} words."
    )
    return f"{text} {extra}".strip() if extra else text


def naive_message(task: str, answer_format: str = ANSWER_FORMAT) -> str:
    """A novice's system message: the task and answer format, then the knowledge header to
    which the scientist's explanation is appended."""
    parts = [p.strip() for p in (task, answer_format) if p and p.strip()]
    return "\n".join(parts) + "\n" + NAIVE_KNOWLEDGE_HEADER


def to_jsonable(value: Any) -> Any:
    """``value`` with numpy scalars/arrays, tuples and dataclasses (designs) turned into
    JSON-ready Python objects."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    return value
