"""Nested games: a game master hands control to a sub-game for one attempt.

As in the Concordia paper's nested games (a negotiation scene inside a market day), a
resolver or a :class:`~silicolab.sim.game_master.Tool` may answer an attempt with
``Resolution(event, nested=NestedGame(...))``. Before the parent commits that resolution,
:func:`play_nested`:

1. builds the sub-game with ``build(parent_gm, attempt) -> (sub_gm, entities)``;
2. runs it to its end (termination or ``max_steps``) with its own engine and a seed
   derived from the parent's seed, the step and the actor
   (:func:`silicolab.core.seeding.child_seed`), so a parent seed fixes every sub-game;
3. turns it into the parent's outcome: ``summarize(sub_gm) -> Resolution | str``
   (default: the sub-game's last event). The parent's event is the requesting event
   followed by the summary; updates, observers and private texts of the summary are merged
   over the request's. The parent GM then checks the updates against its grounded state as
   usual, so an outcome that would violate it rejects the attempt like any impossible action.

The sub-game's :class:`~silicolab.sim.log.EpisodeLog` travels back in
``Resolution.nested`` as a :class:`NestedOutcome` and the engines attach it to the parent's
:class:`~silicolab.sim.log.StepLog` (``context["nested"]``, JSON), rejected or not.

A nested game runs atomically inside one parent step: parent checkpoints are taken before
or after it, never inside it, and the sub-game itself is never checkpointed. Resuming a
parent re-runs an interrupted step, sub-game included, with the same derived seed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from silicolab.core.errors import InputError
from silicolab.core.files import dumps
from silicolab.core.seeding import child_seed
from silicolab.core.sync import run_sync
from silicolab.sim.entity import Entity
from silicolab.sim.game_master import Attempt, GameMaster, Resolution
from silicolab.sim.grounded import encode_value
from silicolab.sim.log import EpisodeLog

Build = Callable[[GameMaster, Attempt], tuple[GameMaster, Sequence[Entity]]]
Summarize = Callable[[GameMaster], "Resolution | str"]


@dataclass(frozen=True)
class NestedGame:
    """A request to play a sub-game for one parent attempt (put it in ``Resolution.nested``).

    ``build(parent_gm, attempt)`` returns a fresh sub game master and its entities.
    ``engine`` is ``"sequential"`` or ``"simultaneous"``. ``max_steps`` bounds the sub-game.
    ``summarize(sub_gm)`` gives the outcome for the parent (default: the last event).
    """

    build: Build
    engine: Literal["sequential", "simultaneous"] = field(default="sequential", kw_only=True)
    max_steps: int = field(kw_only=True)
    summarize: Summarize | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if self.engine not in ("sequential", "simultaneous"):
            raise InputError(
                f"nested engine must be sequential or simultaneous, not {self.engine!r}"
            )
        if self.max_steps < 1:
            raise InputError(f"a nested game needs max_steps >= 1, got {self.max_steps}")


@dataclass(frozen=True)
class NestedOutcome:
    """What a played sub-game leaves in ``Resolution.nested``: its log, seed and final state."""

    engine: str
    seed: int | None
    log: EpisodeLog
    events: tuple[str, ...]
    state: Mapping[str, Any]

    def to_json(self) -> str:
        """The outcome as strict JSON (engine, seed, steps run, events, final state, full
        log); a non-finite number in the state (an ask of ``inf``) is written ``null``."""
        return dumps(
            {
                "engine": self.engine,
                "seed": self.seed,
                "events": list(self.events),
                "state": {k: encode_value(v) for k, v in self.state.items()},
                "log": self.log.to_list(),
            },
            default=None,  # an unknown value is an error here, not its str()
        )


def nested_seed(parent: GameMaster, attempt: Attempt) -> int | None:
    """The sub-game seed: derived from the parent's seed, the step and the actor."""
    return child_seed(getattr(parent, "seed", 0), "nested", attempt.step, attempt.actor)


def _run(game: NestedGame, sub_gm: GameMaster, entities: Sequence[Entity], seed: int) -> EpisodeLog:
    """Run the sub-game to its end with its engine (works inside a running event loop)."""
    from silicolab.sim.engines import arun_simultaneous, run_sequential

    if game.engine == "sequential":
        return run_sequential(sub_gm, entities, max_steps=game.max_steps, seed=seed)
    # Inside the parent's loop, run_sync runs the sub-game's own loop on a worker thread.
    return run_sync(arun_simultaneous(sub_gm, entities, max_steps=game.max_steps, seed=seed))


def default_summary(sub_gm: GameMaster) -> str:
    """The sub-game's last event, or a note that nothing happened."""
    return sub_gm.events[-1] if sub_gm.events else "The nested game ended without any event."


def play_nested(parent: GameMaster, attempt: Attempt, request: Resolution) -> Resolution:
    """Play ``request.nested`` and return the parent's resolution (not yet committed)."""
    game = request.nested
    if not isinstance(game, NestedGame):
        raise InputError(f"Resolution.nested must be a NestedGame, got {game!r}")
    sub_gm, entities = game.build(parent, attempt)
    seed = nested_seed(parent, attempt)
    log = _run(game, sub_gm, list(entities), 0 if seed is None else seed)
    summary = (game.summarize or default_summary)(sub_gm)
    if isinstance(summary, str):
        summary = Resolution(summary)
    elif not isinstance(summary, Resolution):
        raise InputError(f"summarize must return a str or Resolution, got {summary!r}")
    outcome = NestedOutcome(game.engine, seed, log, tuple(sub_gm.events), sub_gm.state.snapshot())
    event = f"{request.event} {summary.event}".strip() if request.event else summary.event
    return Resolution(
        event,
        {**request.updates, **summary.updates},
        observers=summary.observers if summary.observers is not None else request.observers,
        private={**request.private, **summary.private},
        terminate=request.terminate or summary.terminate,
        rejected=summary.rejected,
        nested=outcome,
    )


def nested_context(res: Resolution) -> dict[str, str]:
    """``{"nested": json}`` for a resolution that played a sub-game, else ``{}``."""
    return {"nested": res.nested.to_json()} if isinstance(res.nested, NestedOutcome) else {}
