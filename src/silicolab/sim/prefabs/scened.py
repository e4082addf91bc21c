"""A game master that plays its episode as scenes (:mod:`silicolab.sim.prefabs.scenes`).

:class:`ScenedGameMaster` is the base of every game-master prefab: it schedules each
scene's participants, gives them the scene's action spec, records choice and number
answers into grounded variables without a model call, runs conversations and surveys, and
calls :meth:`ScenedGameMaster.round_end` after every choice or number round so a prefab
can apply its rule (a payoff matrix, a public-goods pot). Free-text attempts go through
the ordinary :class:`~silicolab.sim.game_master.GameMaster` resolution (tool, resolver,
narrator model).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from silicolab.core.errors import InputError
from silicolab.core.seeding import child_seed
from silicolab.sim.conversation import arun_conversation
from silicolab.sim.engines import aplay_actors, deliver
from silicolab.sim.entity import ActionSpec, Entity
from silicolab.sim.game_master import Attempt, GameMaster, Resolution, Resolver
from silicolab.sim.grounded import GroundedVariable
from silicolab.sim.log import EpisodeLog, StepLog
from silicolab.sim.prefabs.scenes import SceneParams, recorded, scene_at, total_rounds
from silicolab.sim.survey import SurveyQuestion, aask_survey

_COORDINATED = ("coordinator_before", "coordinator_after")


class ScenedGameMaster(GameMaster):
    """A game master whose episode is a list of scenes (see the module docstring)."""

    def __init__(
        self, *, scenes: Sequence[SceneParams], resolver: Resolver | None = None, **options: Any
    ):
        def resolve(gm: GameMaster, attempt: Attempt) -> Resolution | str | None:
            answer = self.resolve_answer(attempt)
            if answer is None and resolver is not None:
                return resolver(gm, attempt)
            return answer

        super().__init__(
            schedule=lambda gm, entities, step: self._participants(entities, step),
            action_spec=lambda gm, name: self._spec(name),
            resolver=resolve,
            **options,
        )
        if not scenes:
            raise InputError("a scened game master needs at least one scene")
        self.scenes = list(scenes)
        self._current = 0
        for scene in self.scenes:
            self._ensure_record(scene)

    @property
    def total_steps(self) -> int:
        """The number of steps the scenes take (the episode's natural length)."""
        return total_rounds(self.scenes)

    def _ensure_record(self, scene: SceneParams) -> None:
        """Declare the grounded variable a scene records into, when the file did not."""
        name = scene.record or (scene.name if scene.kind == "survey" else None)
        if name is None or name in self.state:
            return
        start: dict[str, Any] = {o: 0 for o in scene.options} if scene.rule == "tally" else {}
        self.state.add(GroundedVariable(name, start, kind=dict))

    def scene(self, step: int) -> tuple[SceneParams, int]:
        """The scene playing at ``step`` and its round."""
        found = scene_at(self.scenes, step)
        if found is None:
            raise InputError(f"step {step} is past the last scene ({self.total_steps} steps)")
        return found

    def _participants(self, entities: Sequence[Entity], step: int) -> list[Entity]:
        scene, _ = self.scene(step)
        if scene.participants is None:
            return [e for e in entities if e.name != scene.coordinator]
        by_name = {e.name: e for e in entities}
        return [by_name[n] for n in scene.participants if n in by_name]

    def _spec(self, name: str) -> ActionSpec:
        scene, _ = self.scene(self._current)
        if scene.kind != "act":
            return scene.spec()
        tools = "".join(f"\n- {t.usage()}" for t in self.tools.values())
        extra = f" You may use these tools (write name(arg=value)):{tools}" if tools else ""
        spec = scene.spec()
        return ActionSpec(spec.call_to_action + extra, tag=spec.tag, max_tokens=spec.max_tokens)

    def check_participants(self, names: Sequence[str]) -> None:
        """Refuse scenes naming someone who is not an entity of the simulation."""
        for scene in self.scenes:
            named = {*(scene.participants or ()), scene.coordinator, scene.central} - {None}
            unknown = sorted(set(named) - set(names))  # type: ignore[arg-type]
            if unknown:
                raise InputError(
                    f"scene {scene.name!r} names {unknown} who are not "
                    f"entities (entities: {', '.join(names)})"
                )

    # -- playing one step --------------------------------------------------------------
    async def aplay(
        self, step: int, entities: Sequence[Entity], log: EpisodeLog, *, simultaneous: bool
    ) -> None:
        """Play ``step``: one round of its scene."""
        self._current = step
        scene, rnd = self.scene(step)
        actors = self._participants(entities, step)
        if rnd == 0 and scene.announce:
            self.broadcast(scene.announce, [a.name for a in actors])
            deliver(self, actors, log, step)
        if scene.kind == "conversation":
            await self._converse(scene, actors, step, log, entities)
        elif scene.kind == "survey":
            await self._interview(scene, actors, step, log)
        else:
            done = await aplay_actors(self, actors, step, log, simultaneous=simultaneous)
            if scene.kind in ("choice", "float"):
                answers = {a.actor: a.action for a, r in done if not r.rejected}
                self.round_end(scene, rnd, answers, step)

    def resolve_answer(self, attempt: Attempt) -> Resolution | None:
        """The rule resolution of a choice or number answer (no model call), or ``None``
        for a free-text attempt (the narrator resolves it)."""
        scene, _ = self.scene(attempt.step)
        if scene.kind not in ("choice", "float"):
            return None
        verb = "chose" if scene.kind == "choice" else "answered"
        event = f"{attempt.actor} {verb} {attempt.action}."
        observers = (attempt.actor,) if scene.secret else None
        if scene.record is None:
            return Resolution(event, observers=observers)
        new = recorded(scene, self.state[scene.record], attempt.actor, attempt.action)
        return Resolution(event, updates={scene.record: new}, observers=observers)

    def round_end(
        self, scene: SceneParams, rnd: int, answers: Mapping[str, str], step: int
    ) -> None:
        """After a choice or number round: a prefab's rule (default: nothing)."""

    async def _converse(
        self,
        scene: SceneParams,
        actors: Sequence[Entity],
        step: int,
        log: EpisodeLog,
        entities: Sequence[Entity],
    ) -> None:
        opening = "\n\n".join(p for p in (self.premise, scene.announce, self._recent()) if p)
        coordinator: Entity | None = self if scene.protocol in _COORDINATED else None
        if scene.coordinator is not None:
            coordinator = next(e for e in entities if e.name == scene.coordinator)
        conv = await arun_conversation(
            [a for a in actors if a.name != scene.coordinator],
            protocol=scene.protocol,
            opening=opening,
            coordinator=coordinator,
            central=scene.central,
            max_statements=scene.max_statements,
            seed=child_seed(self.seed, "conversation", step) or 0,
            statement_tokens=scene.max_tokens,
        )
        for entry in conv.log.steps:
            log.add(StepLog(step, entry.who, entry.kind, entry.output, entry.context, entry.event))
        listeners = {a.name for a in actors} | {scene.coordinator}
        others = [n for n in self.entity_names if n not in listeners]
        for s in conv.statements:
            self.events.append(f"{s.speaker}: {s.text}")
            self.broadcast(f"{s.speaker} said: {s.text}", others)

    async def _interview(
        self, scene: SceneParams, actors: Sequence[Entity], step: int, log: EpisodeLog
    ) -> None:
        questions = [
            SurveyQuestion(q.variable, q.text, q.type, tuple(q.levels), addressee=a.name)  # type: ignore[arg-type]
            for a in actors
            for q in scene.questions
        ]
        context = "\n\n".join(p for p in (self.premise, scene.announce, self._recent()) if p)
        answers = await aask_survey({a.name: a for a in actors}, questions, context=context)
        name = scene.record or scene.name
        table = {k: dict(v) for k, v in self.state[name].items()}
        for a in answers:
            table.setdefault(a.addressee, {})[a.variable] = a.value
            context_of = {"question": a.question}
            event = f"{a.variable} = {a.value!r} ({a.explanation})"
            log.add(StepLog(step, a.addressee, "survey", a.raw, context_of, event=event))
        self.state.apply({name: table}, step=step, cause=f"survey {scene.name}")
        self.memo.setdefault("survey", []).extend(
            {**a.to_dict(), "scene": scene.name, "step": step} for a in answers
        )

    def _recent(self) -> str:
        recent = self.events[-self.history_window :]
        return "What has happened:\n" + "\n".join(f"- {e}" for e in recent) if recent else ""
