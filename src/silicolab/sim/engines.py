"""Episode loops that drive a :class:`~silicolab.sim.game_master.GameMaster` and entities.

Each step: stop if the game master says so; deliver every entity's queued observations;
ask the scheduled entities to act; resolve each attempt into an event.

* :func:`run_sequential` — one actor per step (round robin unless the GM schedules).
* :func:`run_simultaneous` — the scheduled actors act concurrently; their attempts are
  resolved **in initiative order** (the order of ``entities``), never in completion order,
  so the same seed gives the same events however fast each entity answers.

All three accept ``checkpoint=path, checkpoint_every=n, resume=False``: the episode state is
written atomically to ``path`` after every ``n`` completed steps and at the end, and
``resume=True`` continues from that file in freshly built objects
(see :mod:`silicolab.sim.checkpoint`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Required, TypedDict, Unpack

from silicolab.core.errors import InputError
from silicolab.core.sync import sync_twin
from silicolab.sim.checkpoint import restore, save_checkpoint
from silicolab.sim.entity import Entity
from silicolab.sim.game_master import Attempt, GameMaster, Resolution
from silicolab.sim.log import EpisodeLog, StepLog
from silicolab.sim.nested import nested_context


class EpisodeOptions(TypedDict, total=False):
    """The options every engine takes, defined once: ``max_steps`` (required), ``seed``
    (default 0), ``checkpoint`` (a path, default none), ``checkpoint_every`` (default 1)
    and ``resume`` (default ``False``)."""

    max_steps: Required[int]
    seed: int
    checkpoint: str | Path | None
    checkpoint_every: int
    resume: bool


def _check(entities: Sequence[Entity], max_steps: int) -> None:
    if max_steps < 0:
        raise InputError(f"max_steps={max_steps} must be >= 0")
    if not entities:
        raise InputError("an episode needs at least one entity")


def deliver(gm: GameMaster, entities: Sequence[Entity], log: EpisodeLog, step: int) -> None:
    """Give each entity its queued observations, logging each."""
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
            context={"call_to_action": spec_text, **nested_context(res)},
            event=res.event,
        )
    )


class Episode:
    """One episode's frame, shared by both engines: start or resume it, then for every
    step deliver the queued observations first and afterwards advance the clock and
    write the checkpoints at the requested cadence; the engine plays the step."""

    def __init__(
        self,
        gm: GameMaster,
        entities: Sequence[Entity],
        engine: str,
        options: EpisodeOptions,
    ):
        unknown = sorted(set(options) - set(EpisodeOptions.__annotations__))
        if unknown or "max_steps" not in options:
            raise TypeError(
                f"an episode takes max_steps= and optionally seed=, checkpoint=, "
                f"checkpoint_every=, resume= (got {sorted(options)})"
            )
        max_steps, every = options["max_steps"], options.get("checkpoint_every", 1)
        _check(entities, max_steps)
        if every < 1:
            raise InputError(f"checkpoint_every={every} must be >= 1")
        self.gm, self.entities, self.engine = gm, entities, engine
        self.seed, self.path = options.get("seed", 0), options.get("checkpoint")
        self.every, self.max_steps = every, max_steps
        self.first, self.log = self._start(options.get("resume", False))

    def _start(self, resume: bool) -> tuple[int, EpisodeLog]:
        """(first step, log so far): from the checkpoint when resuming and it exists."""
        if resume:
            if self.path is None:
                raise InputError("resume=True needs a checkpoint path")
            if Path(self.path).exists():
                return restore(
                    self.path, self.gm, self.entities, engine=self.engine, seed=self.seed
                )
        self.gm.begin(self.entities, seed=self.seed)
        return 0, EpisodeLog()

    def steps(self) -> Iterator[int]:
        """The steps to play, until ``max_steps`` or the game master ends the episode;
        after the last, the final observations and checkpoint."""
        for step in range(self.first, self.max_steps):
            if self.gm.terminated():
                break
            deliver(self.gm, self.entities, self.log, step)
            yield step
            self.gm.clock.advance()
            self._save(step + 1)
        deliver(self.gm, self.entities, self.log, self.gm.clock.steps)
        self._save(self.gm.clock.steps, force=True)

    def _save(self, done_steps: int, *, force: bool = False) -> None:
        """Write a checkpoint after ``done_steps`` steps if due (or ``force``)."""
        if self.path is not None and (force or done_steps % self.every == 0):
            save_checkpoint(
                self.path,
                step=done_steps,
                engine=self.engine,
                seed=self.seed,
                gm=self.gm,
                entities=self.entities,
                log=self.log,
            )


def run_sequential(
    gm: GameMaster, entities: Sequence[Entity], **options: Unpack[EpisodeOptions]
) -> EpisodeLog:
    """Run up to ``max_steps`` steps with one actor per step (synchronous)."""
    episode = Episode(gm, entities, "sequential", options)
    for step in episode.steps():
        for entity in gm.next_acting(entities, step, simultaneous=False):
            spec = gm.spec_for(entity.name)
            attempt = Attempt(entity.name, spec.validate(entity.act(spec)), step)
            _record(episode.log, attempt, spec.call_to_action, gm.resolve(attempt))
            if gm.terminated():
                break
    return episode.log


async def arun_simultaneous(
    gm: GameMaster, entities: Sequence[Entity], **options: Unpack[EpisodeOptions]
) -> EpisodeLog:
    """Run up to ``max_steps`` steps in which the scheduled entities act concurrently."""
    episode = Episode(gm, entities, "simultaneous", options)
    for step in episode.steps():
        actors = gm.next_acting(entities, step, simultaneous=True)
        await aplay_actors(gm, actors, step, episode.log, simultaneous=True)
    return episode.log


async def aplay_actors(
    gm: GameMaster,
    actors: Sequence[Entity],
    step: int,
    log: EpisodeLog,
    *,
    simultaneous: bool,
) -> list[tuple[Attempt, Resolution]]:
    """Let ``actors`` act once each at ``step`` and resolve every attempt, in initiative
    order. Simultaneous: all act concurrently on what they knew at the step's start.
    Otherwise one after another, each first receiving what happened before its turn."""
    done: list[tuple[Attempt, Resolution]] = []
    if simultaneous:
        specs = [gm.spec_for(e.name) for e in actors]
        # gather returns results in argument order, whatever order they complete in.
        answers = await asyncio.gather(*(e.aact(s) for e, s in zip(actors, specs, strict=True)))
        for entity, spec, answer in zip(actors, specs, answers, strict=True):
            attempt = Attempt(entity.name, spec.validate(answer), step)
            done.append((attempt, await gm.aresolve(attempt)))
            _record(log, attempt, spec.call_to_action, done[-1][1])
        return done
    for entity in actors:
        deliver(gm, [entity], log, step)
        spec = gm.spec_for(entity.name)
        attempt = Attempt(entity.name, spec.validate(await entity.aact(spec)), step)
        done.append((attempt, await gm.aresolve(attempt)))
        _record(log, attempt, spec.call_to_action, done[-1][1])
        if gm.terminated():
            break
    return done


run_simultaneous = sync_twin(arun_simultaneous)
