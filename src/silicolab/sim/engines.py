"""Episode loops that drive a :class:`~silicolab.sim.game_master.GameMaster` and entities.

Each step: stop if the game master says so; deliver every entity's queued observations;
ask the scheduled entities to act; resolve each attempt into an event.

* :func:`run_sequential` — one actor per step (round robin unless the GM schedules).
* :func:`run_simultaneous` — the scheduled actors act concurrently; their attempts are
  resolved **in initiative order** (the order of ``entities``), never in completion order,
  so the same seed gives the same events however fast each entity answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from silicolab.core.errors import InputError
from silicolab.llm.base import run_sync
from silicolab.sim.entity import Entity
from silicolab.sim.game_master import Attempt, GameMaster, Resolution
from silicolab.sim.log import EpisodeLog, StepLog


def _check(entities: Sequence[Entity], max_steps: int) -> None:
    if max_steps < 0:
        raise InputError(f"max_steps={max_steps} must be >= 0")
    if not entities:
        raise InputError("an episode needs at least one entity")


def _deliver(gm: GameMaster, entities: Sequence[Entity], log: EpisodeLog, step: int) -> None:
    for entity in entities:
        for text in gm.pending(entity.name):
            entity.observe(text)
            log.add(StepLog(step, entity.name, "observation", text))


def _record(log: EpisodeLog, attempt: Attempt, spec_text: str, res: Resolution) -> None:
    kind = "rejected" if res.rejected else "action"
    log.add(
        StepLog(
            attempt.step,
            attempt.actor,
            kind,
            attempt.action,
            context={"call_to_action": spec_text},
            event=res.event,
        )
    )


def run_sequential(
    gm: GameMaster, entities: Sequence[Entity], *, max_steps: int, seed: int = 0
) -> EpisodeLog:
    """Run up to ``max_steps`` steps with one actor per step (synchronous)."""
    _check(entities, max_steps)
    gm.begin(entities, seed=seed)
    log = EpisodeLog()
    for step in range(max_steps):
        if gm.terminated():
            break
        _deliver(gm, entities, log, step)
        for entity in gm.next_acting(entities, step, simultaneous=False):
            spec = gm.spec_for(entity.name)
            attempt = Attempt(entity.name, spec.validate(entity.act(spec)), step)
            _record(log, attempt, spec.call_to_action, gm.resolve(attempt))
            if gm.terminated():
                break
        gm.clock.advance()
    _deliver(gm, entities, log, gm.clock.steps)
    return log


async def arun_simultaneous(
    gm: GameMaster, entities: Sequence[Entity], *, max_steps: int, seed: int = 0
) -> EpisodeLog:
    """Run up to ``max_steps`` steps in which the scheduled entities act concurrently."""
    _check(entities, max_steps)
    gm.begin(entities, seed=seed)
    log = EpisodeLog()
    for step in range(max_steps):
        if gm.terminated():
            break
        _deliver(gm, entities, log, step)
        actors = gm.next_acting(entities, step, simultaneous=True)
        specs = [gm.spec_for(e.name) for e in actors]
        # gather returns results in argument order, whatever order they complete in.
        answers = await asyncio.gather(*(e.aact(s) for e, s in zip(actors, specs, strict=True)))
        for entity, spec, answer in zip(actors, specs, answers, strict=True):
            attempt = Attempt(entity.name, spec.validate(answer), step)
            _record(log, attempt, spec.call_to_action, await gm.aresolve(attempt))
        gm.clock.advance()
    _deliver(gm, entities, log, gm.clock.steps)
    return log


def run_simultaneous(
    gm: GameMaster, entities: Sequence[Entity], *, max_steps: int, seed: int = 0
) -> EpisodeLog:
    """The synchronous twin of :func:`arun_simultaneous` (refuses inside an event loop)."""
    return run_sync(arun_simultaneous(gm, entities, max_steps=max_steps, seed=seed))
