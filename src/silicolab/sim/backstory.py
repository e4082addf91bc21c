"""Backstories from formative memories.

:func:`aformative_memories` asks a model, in **one** structured call, for one short
third-person memory per requested age that fits a character's traits; :func:`seed_memory`
stores them in an :class:`~silicolab.sim.memory.AssociativeMemory` with timestamps before
the episode starts (``-n, ..., -1``), so they are retrieved like any other memory but never
look more recent than what happens in the simulation.

The reply is validated against a schema built for the requested ages (each age exactly
once, each memory non-empty); an invalid reply is re-prompted with the validation error by
:func:`silicolab.llm.astructured` and raises :class:`~silicolab.core.errors.ParseFailure`
when it stays invalid.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model, field_validator, model_validator

from silicolab.core.errors import InputError
from silicolab.core.sync import sync_twin
from silicolab.llm.base import LanguageModel
from silicolab.llm.structured import astructured
from silicolab.sim.memory import AssociativeMemory

__all__ = [
    "DEFAULT_AGES",
    "aformative_memories",
    "formative_memories",
    "formative_memories_prompt",
    "seed_memory",
]

DEFAULT_AGES: tuple[int, ...] = (3, 7, 12, 16, 21)

_SYSTEM = (
    "You write the backstories of characters in a social simulation. You invent concrete, "
    "plausible childhood and youth episodes that explain who a person became."
)


class _Memory(BaseModel):
    """One formative memory (the age field is narrowed per call)."""

    age: int
    memory: str = Field(min_length=1, description="two or three sentences, third person")

    @field_validator("memory")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the memory must not be blank")
        return value.strip()


@functools.lru_cache(maxsize=64)
def _schema(ages: tuple[int, ...]) -> type[BaseModel]:
    """A pydantic model for exactly one memory per age in ``ages`` (cached per ages)."""
    age_type = Literal[ages]  # type: ignore[valid-type]
    item = create_model(
        "FormativeMemory",
        __base__=_Memory,
        age=(age_type, Field(description="the character's age at the time")),
    )

    def _one_per_age(self: Any) -> Any:
        got = sorted(m.age for m in self.memories)
        if got != sorted(ages):
            raise ValueError(f"give exactly one memory for each age {list(ages)}; got ages {got}")
        return self

    n = len(ages)
    return create_model(
        "FormativeMemories",
        memories=(list[item], Field(min_length=n, max_length=n)),  # type: ignore[valid-type]
        __validators__={"one_per_age": model_validator(mode="after")(_one_per_age)},
    )


def _check_ages(ages: Sequence[int]) -> tuple[int, ...]:
    out = tuple(int(a) for a in ages)
    if not out:
        raise InputError("ages must name at least one age")
    if any(a < 0 for a in out):
        raise InputError(f"ages must be non-negative, got {list(out)}")
    if len(set(out)) != len(out):
        raise InputError(f"ages must not repeat, got {list(out)}")
    return out


def formative_memories_prompt(name: str, traits: str, ages: Sequence[int]) -> list[dict[str, str]]:
    """The chat messages :func:`aformative_memories` sends (useful to inspect or reuse)."""
    listed = ", ".join(str(a) for a in ages)
    user = (
        f"Write the formative memories of {name}, whose traits are: {traits.strip()}\n\n"
        f"Give exactly one memory for each of these ages: {listed}. For each one:\n"
        f"- describe one specific event in two or three sentences;\n"
        f"- write in the third person (call them {name} or he/she/they), never 'I';\n"
        f"- show how the event shaped the traits above, without naming the traits "
        f"outright;\n"
        f"- keep places, people and events consistent across the memories.\n"
        'Answer with JSON: {"memories": [{"age": <age>, "memory": "<text>"}, ...]}, '
        "in order of age."
    )
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


async def aformative_memories(
    model: LanguageModel,
    name: str,
    *,
    traits: str,
    ages: Sequence[int] = DEFAULT_AGES,
    sample_index: int = 0,
    tag: str = "backstory",
) -> list[str]:
    """One memory per age in ``ages`` (in that order), from one structured model call.

    ``sample_index`` selects a different cached sample for the same character. Raises
    :class:`~silicolab.core.errors.InputError` for bad arguments and
    :class:`~silicolab.core.errors.ParseFailure` when the reply stays invalid after the
    structured layer's re-prompts.
    """
    if not name.strip():
        raise InputError("name must not be empty")
    if not traits.strip():
        raise InputError("traits must describe the character, e.g. 'shy, curious, stubborn'")
    wanted = _check_ages(ages)
    answer = await astructured(
        model,
        formative_memories_prompt(name, traits, wanted),
        _schema(wanted),
        tag=tag,
        sample_index=sample_index,
    )
    by_age = {m.age: m.memory for m in answer.memories}  # type: ignore[attr-defined]
    return [by_age[a] for a in wanted]


formative_memories = sync_twin(aformative_memories)


def seed_memory(
    memory: AssociativeMemory,
    memories: Sequence[str],
    *,
    start_time: float | None = None,
    importance: float = 0.8,
) -> None:
    """Add ``memories`` in order at times ``start_time, start_time + 1, ...``.

    ``start_time`` defaults to ``-len(memories)``, so the last memory is at ``-1``, just
    before an episode whose clock starts at 0.
    """
    if isinstance(memories, str):
        raise InputError("seed_memory() takes a sequence of memories, not a single string")
    t0 = -len(memories) if start_time is None else float(start_time)
    for i, text in enumerate(memories):
        memory.add(text, time=t0 + i, importance=importance)
