"""Initializer prefabs: work a simulation does once, before its first step.

* ``formative_memories`` — gives each generative person a backstory: one memory per age
  in ``ages`` from :func:`silicolab.sim.backstory.aformative_memories` (one structured
  call of the game master's model per person, all people concurrently), seeded into the
  person's associative memory before the episode starts. A person built without a memory
  gets one, with a :class:`~silicolab.sim.components.MemoryRetrieval` component so the
  memories reach its prompts.

An initializer prefab has no entity to build; it implements the classmethod
``async run(params, gm, entities)``, which :meth:`Simulation.arun` awaits once (not again
when a run resumes from a checkpoint: the memories are in the checkpoint).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from pydantic import Field

from silicolab.core.errors import InputError
from silicolab.sim.agents import GenerativeAgent
from silicolab.sim.backstory import aformative_memories, seed_memory
from silicolab.sim.entity import Entity
from silicolab.sim.game_master import GameMaster
from silicolab.sim.prefabs.base import BuildContext, Params, Prefab, register


class FormativeParams(Params):
    """``ages`` to remember, optional ``traits`` per entity (default: its identity) and
    the ``entities`` to give a backstory (default: every generative person)."""

    ages: list[int] = Field(default_factory=lambda: [5, 12, 18], min_length=1)
    traits: dict[str, str] = Field(default_factory=dict)
    entities: list[str] | None = None


class Initializer(Prefab):
    """Base of initializer prefabs: :meth:`run` instead of :meth:`build`."""

    kind = "initializer"

    @classmethod
    def build(cls, name: str, params: Any, ctx: BuildContext) -> Entity:
        """Initializers build nothing; they :meth:`run` before the first step."""
        raise InputError(f"{cls.name!r} is an initializer: it runs, it builds no entity")

    @classmethod
    async def run(cls, params: Any, gm: GameMaster, entities: Sequence[Entity]) -> None:
        """Prepare ``entities`` (and ``gm``) before the first step."""
        raise NotImplementedError


def _traits(agent: GenerativeAgent, given: dict[str, str]) -> str:
    """The traits a backstory should explain: given ones, else the identity's text."""
    if agent.name in given:
        return given[agent.name]
    try:
        identity = agent.get_component("identity")
    except KeyError:
        return f"{agent.name} is a person."
    return identity.context(None, agent) or f"{agent.name} is a person."  # type: ignore[arg-type]


def _targets(params: FormativeParams, entities: Sequence[Entity]) -> list[GenerativeAgent]:
    people = [e for e in entities if isinstance(e, GenerativeAgent)]
    if params.entities is None:
        chosen = people
    else:
        by_name = {e.name: e for e in people}
        missing = [n for n in params.entities if n not in by_name]
        if missing:
            raise InputError(
                f"formative_memories: entities= names {missing}, who are not generative "
                f"people (they are: {', '.join(by_name) or 'none'})"
            )
        chosen = [by_name[n] for n in params.entities]
    extra = sorted(set(params.traits) - {p.name for p in chosen})
    if extra:
        raise InputError(f"formative_memories: traits= names {extra}, who get no backstory")
    return chosen


@register
class FormativeMemories(Initializer):
    name = "formative_memories"
    description = "a backstory per person: one formative memory per age, seeded into memory"
    Params = FormativeParams

    @classmethod
    async def run(cls, params: FormativeParams, gm: GameMaster, entities: Sequence[Entity]) -> None:
        """Ask for every chosen person's memories concurrently and seed them."""
        people = _targets(params, entities)

        async def one(agent: GenerativeAgent) -> list[str]:
            model = gm.model if gm.model is not None else agent.model
            return await aformative_memories(
                model, agent.name, traits=_traits(agent, params.traits), ages=params.ages
            )

        found = await asyncio.gather(*(one(a) for a in people))
        for agent, memories in zip(people, found, strict=True):
            seed_memory(agent.attach_memory(k=len(params.ages)), memories)
