"""A simulation as a value: entities, a game master, an engine, a clock and a length, all
named by prefab and parameters, so one object runs, checkpoints, resumes and round-trips
through a human-editable YAML file (:mod:`silicolab.sim.sim_file`).

>>> from silicolab.sim.simulation import Simulation
>>> sim = Simulation.model_validate({
...     "name": "hello", "premise": "Two neighbours meet.",
...     "entities": [{"name": "Ann", "prefab": "minimal"}, {"name": "Bo", "prefab": "minimal"}],
...     "game_master": {"prefab": "generic", "params": {"scenes": [{"name": "meet"}]}},
...     "offline": {"rules": [{"match": "What does (\\\\w+) do", "reply": "\\\\1 waves."}]},
... })
>>> outcome = sim.run(seed=0)
>>> [step["event"] for step in outcome.log.to_list() if step["kind"] == "action"]
['Ann: Ann waves.', 'Bo: Bo waves.']

Without a model every language-model call goes to the file's ``offline`` script (the
``scripted`` test double: regex rules on the last user message, then ``default``); a game
master narrating an attempt the rules do not cover reports it as ``actor: attempt``.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from silicolab.core.errors import InputError
from silicolab.core.sync import sync_twin
from silicolab.llm.base import LanguageModel
from silicolab.sim.engines import Episode
from silicolab.sim.entity import Entity
from silicolab.sim.game_master import Clock, GameMaster
from silicolab.sim.log import keep_log
from silicolab.sim.outcome import SimulationOutcome, outcome_of
from silicolab.sim.prefabs import BuildContext, find_prefab

_TICK = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd])\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
_ATTEMPT = re.compile(r"Actor: (.+)\nAttempted action: ([^\n]*)")


def narrator_echo(match: re.Match[str]) -> str:
    """The offline narrator's last rule: an attempt no file rule covers becomes its event
    (prefixed with the actor unless it already starts with the actor's name)."""
    actor, action = match.group(1), match.group(2)
    return action if action.startswith(actor) else f"{actor}: {action}"


class Played(NamedTuple):
    """A played simulation: its outcome and the game master and entities it left."""

    outcome: SimulationOutcome
    gm: GameMaster
    entities: list[Entity]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EntitySpec(_Spec):
    """One entity: its unique ``name``, a ``prefab`` and the prefab's ``params``."""

    name: str = Field(..., min_length=1)
    prefab: str = "basic"
    params: dict[str, Any] = Field(default_factory=dict)


class GameMasterSpec(_Spec):
    """The game master: a game-master ``prefab``, its ``params`` and ``name``."""

    name: str = "Game Master"
    prefab: str = "generic"
    params: dict[str, Any] = Field(default_factory=dict)


class InitializerSpec(_Spec):
    """Work done once before the first step (e.g. ``formative_memories``)."""

    prefab: str
    params: dict[str, Any] = Field(default_factory=dict)


class ClockSpec(_Spec):
    """Simulated time: ``start`` (ISO date and time) plus ``tick`` per step (``10m``,
    ``1h``, ``1d``, ``30s``)."""

    start: str = "2024-01-01 09:00"
    tick: str = "10m"

    @model_validator(mode="after")
    def _parses(self) -> ClockSpec:
        self.clock()
        return self

    def clock(self) -> Clock:
        """The :class:`~silicolab.sim.game_master.Clock` this spec describes."""
        try:
            start = datetime.fromisoformat(self.start)
        except ValueError:
            raise ValueError(
                f"start {self.start!r} is not an ISO date, e.g. 2024-01-01 09:00"
            ) from None
        match = _TICK.match(self.tick)
        if match is None:
            raise ValueError(f"tick {self.tick!r} must be a number and s, m, h or d, e.g. 10m")
        return Clock(start, timedelta(**{_UNITS[match.group(2)]: float(match.group(1))}))


class OfflineRule(_Spec):
    """A scripted reply: ``reply`` (``\\1`` groups expand) when ``match`` (a regex) is found
    in the last user message of a model call."""

    match: str
    reply: str

    @model_validator(mode="after")
    def _compiles(self) -> OfflineRule:
        try:
            re.compile(self.match)
        except re.error as err:
            raise ValueError(f"match {self.match!r} is not a regular expression: {err}") from None
        return self


class OfflineSpec(_Spec):
    """The offline script every model call answers from when no model is given."""

    rules: list[OfflineRule] = Field(default_factory=list)
    default: str = "OK"
    responder: str | None = Field(
        None, description="a name in silicolab.sim.prefabs.base.RESPONDERS, used instead"
    )


class Simulation(_Spec):
    """A whole simulation as data (see the module docstring); build it with
    :meth:`build`, play it with :meth:`run` / :meth:`arun`."""

    name: str = Field(..., min_length=1)
    description: str = ""
    premise: str = ""
    engine: Literal["sequential", "simultaneous"] = "sequential"
    clock: ClockSpec = Field(default_factory=ClockSpec)
    max_steps: int | None = Field(None, ge=0)
    entities: list[EntitySpec] = Field(..., min_length=1)
    game_master: GameMasterSpec
    initializer: InitializerSpec | None = None
    offline: OfflineSpec = Field(default_factory=OfflineSpec)

    @model_validator(mode="after")
    def _prefabs(self, info: ValidationInfo) -> Simulation:
        names = [e.name for e in self.entities]
        if len(set(names)) != len(names):
            raise ValueError(f"entity names must be unique, got {names}")
        if self.game_master.name in names:
            raise ValueError(f"the game master's name {self.game_master.name!r} is an entity's")
        if (info.context or {}).get("skip_prefabs"):
            return self
        problems = prefab_problems(self)
        if problems:
            raise ValueError("; ".join(f"{'.'.join(map(str, loc))}: {m}" for loc, m in problems))
        return self

    # -- building and running ------------------------------------------------------------
    def offline_model(self) -> LanguageModel:
        """The scripted model of the file's ``offline`` script (plus the narrator echo)."""
        from silicolab.llm import load_model
        from silicolab.sim.prefabs.base import RESPONDERS

        name = self.offline.responder
        if name is not None:
            if name not in RESPONDERS:
                known = ", ".join(sorted(RESPONDERS)) or "none"
                raise InputError(f"offline.responder {name!r} is not registered; known: {known}")
            return load_model("scripted", fn=RESPONDERS[name])
        rules = [(r.match, r.reply) for r in self.offline.rules] + [(_ATTEMPT, narrator_echo)]
        return load_model("scripted", rules=rules, default=self.offline.default)

    def build(
        self,
        *,
        model: LanguageModel | str | None = None,
        gm_model: LanguageModel | str | None = None,
        seed: int = 0,
        sample_key: str | None = None,
    ) -> tuple[GameMaster, list[Entity]]:
        """Fresh game master and entities: ``model`` for the people, ``gm_model`` for the
        game master (default ``model``; without either, the offline script).
        ``sample_key`` (default: the name and the seed) names the draws: two plays with
        different keys sample independently even when their prompts coincide."""
        people = _model(model) or self.offline_model()
        ctx = BuildContext(
            model=people,
            gm_model=_model(gm_model) or people,
            seed=seed,
            entity_names=tuple(e.name for e in self.entities),
            sample_key=sample_key or f"{self.name}/seed={seed}",
            premise=self.premise,
            clock=self.clock.clock(),
        )
        entities = [_built(e.prefab, "entity", e.name, e.params, ctx) for e in self.entities]
        gm_spec = self.game_master
        gm = _built(gm_spec.prefab, "game_master", gm_spec.name, gm_spec.params, ctx)
        check = getattr(gm, "check_participants", None)
        if check is not None:
            check(list(ctx.entity_names))
        gm.build_context = ctx  # type: ignore[attr-defined]
        return gm, entities

    def steps(self, gm: GameMaster) -> int:
        """The episode's length: ``max_steps``, else the game master's scenes."""
        if self.max_steps is not None:
            return self.max_steps
        return int(getattr(gm, "total_steps", 10))

    async def arun(
        self,
        *,
        model: LanguageModel | str | None = None,
        gm_model: LanguageModel | str | None = None,
        seed: int = 0,
        checkpoint: str | Path | None = None,
        resume: bool = False,
        sample_key: str | None = None,
    ) -> SimulationOutcome:
        """Play the simulation once and return its outcome. With ``checkpoint`` the
        episode is saved after every step; ``resume=True`` continues from that file (the
        initializer is not run again). ``sample_key``: see :meth:`build`."""
        played = await self.aplay(
            model=model, gm_model=gm_model, seed=seed, checkpoint=checkpoint, resume=resume,
            sample_key=sample_key,
        )  # fmt: skip
        return played.outcome

    run = sync_twin(arun)

    async def aplay(
        self,
        *,
        model: LanguageModel | str | None = None,
        gm_model: LanguageModel | str | None = None,
        seed: int = 0,
        checkpoint: str | Path | None = None,
        resume: bool = False,
        sample_key: str | None = None,
    ) -> Played:
        """:meth:`arun`, also returning the game master and entities as the episode left
        them (to question them afterwards, as a study's survey does)."""
        gm, entities = self.build(model=model, gm_model=gm_model, seed=seed, sample_key=sample_key)
        restored = resume and checkpoint is not None and Path(checkpoint).exists()
        if self.initializer is not None and not restored:
            init = find_prefab(self.initializer.prefab, "initializer")
            await init.run(init.check(self.initializer.params), gm, entities)  # type: ignore[attr-defined]
        episode = Episode(
            gm,
            entities,
            self.engine,
            {"max_steps": self.steps(gm), "seed": seed, "checkpoint": checkpoint, "resume": resume},
        )
        play = getattr(gm, "aplay", None)
        simultaneous = self.engine == "simultaneous"
        try:
            for step in episode.steps():
                if play is None:
                    from silicolab.sim.engines import aplay_actors

                    actors = gm.next_acting(entities, step, simultaneous=simultaneous)
                    await aplay_actors(gm, actors, step, episode.log, simultaneous=simultaneous)
                else:
                    await play(step, entities, episode.log, simultaneous=simultaneous)
        except Exception as err:
            keep_log(err, episode.log)  # the episode so far is not lost
            raise
        return Played(outcome_of(self.name, seed, gm, entities, episode.log), gm, entities)

    # -- files -----------------------------------------------------------------------------
    def to_yaml(self) -> str:
        """The simulation as YAML (see :func:`silicolab.sim.sim_file.dump_simulation`)."""
        from silicolab.sim.sim_file import dump_simulation

        return dump_simulation(self)

    @classmethod
    def from_yaml(cls, text: str, source: str = "<string>") -> Simulation:
        """Parse YAML text; a bad edit is refused naming ``source``, line and field."""
        from silicolab.sim.sim_file import parse_simulation

        return parse_simulation(text, source)

    @classmethod
    def load(cls, path: str | Path) -> Simulation:
        """Read a simulation file."""
        from silicolab.sim.sim_file import load_simulation

        return load_simulation(path)

    def save(self, path: str | Path) -> Path:
        """Write the simulation to ``path`` as YAML (atomically)."""
        from silicolab.core.files import atomic_write_text

        return atomic_write_text(Path(path), self.to_yaml())


def _model(model: LanguageModel | str | None) -> LanguageModel | None:
    if model is None or isinstance(model, LanguageModel):
        return model
    from silicolab.llm import load_model

    return load_model(model)


def _built(prefab: str, kind: Any, name: str, params: dict[str, Any], ctx: BuildContext) -> Any:
    found = find_prefab(prefab, kind)
    return found.build(name, found.check(params), ctx)


def prefab_problems(sim: Simulation) -> list[tuple[tuple[Any, ...], str]]:
    """Every unknown prefab and bad parameter, as (location in the file, message)."""
    problems: list[tuple[tuple[Any, ...], str]] = []
    parts: list[tuple[tuple[Any, ...], str, Any, dict[str, Any]]] = [
        (("entities", i), "entity", e.prefab, e.params) for i, e in enumerate(sim.entities)
    ]
    parts.append((("game_master",), "game_master", sim.game_master.prefab, sim.game_master.params))
    if sim.initializer is not None:
        parts.append(
            (("initializer",), "initializer", sim.initializer.prefab, sim.initializer.params)
        )
    for loc, kind, prefab, params in parts:
        try:
            found = find_prefab(prefab, kind)
        except InputError as err:
            problems.append(((*loc, "prefab"), str(err)))
            continue
        try:
            found.check(params)
        except ValidationError as err:
            for e in err.errors():
                problems.append(((*loc, "params", *e["loc"]), e["msg"]))
    return problems
