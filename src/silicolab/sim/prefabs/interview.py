"""Game-master prefabs for questionnaires and experiments.

* ``interviewer`` — administers one questionnaire (a ``survey`` scene it builds itself), so
  a file names only the questions;
* ``psychology_experiment`` — a between-subjects experiment: each participant is assigned
  to ``treatment`` or ``control`` with the game master's seeded RNG (stored in the
  grounded variable ``condition``, so a resumed run keeps it), then a pre questionnaire,
  the manipulation told privately per condition, an optional task and a post
  questionnaire. The answers land in the grounded variables ``pre`` and ``post``, so the
  outcome's ``per_entity`` rows carry ``condition``, ``pre.<question>`` and
  ``post.<question>`` side by side and the effect reads straight off the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field, model_validator

from silicolab.core.errors import InputError
from silicolab.sim.engines import deliver
from silicolab.sim.entity import Entity
from silicolab.sim.grounded import GroundedVariable
from silicolab.sim.log import EpisodeLog
from silicolab.sim.prefabs.base import BuildContext, Params, Prefab, register
from silicolab.sim.prefabs.game_masters import VariableParams, grounded_state
from silicolab.sim.prefabs.scened import ScenedGameMaster
from silicolab.sim.prefabs.scenes import QuestionParams, SceneParams

CONDITIONS = ("treatment", "control")


class InterviewParams(Params):
    """An interviewer's questionnaire: ``questions``, who answers (``participants``,
    default every entity), an ``announce`` told first and the grounded variable the
    answers fill (``record``)."""

    questions: list[QuestionParams] = Field(..., min_length=1)
    participants: list[str] | None = None
    announce: str = ""
    record: str = Field("answers", min_length=1)
    variables: list[VariableParams] = Field(default_factory=list)
    history: int = Field(20, ge=1)


def _options(name: str, params: Any, ctx: BuildContext, scenes: list[SceneParams]) -> dict:
    """The keyword arguments of a :class:`ScenedGameMaster` whose scenes a prefab built."""
    return {
        "scenes": scenes,
        "state": grounded_state(params.variables),
        "clock": ctx.clock,
        "premise": ctx.premise,
        "name": name,
        "history_window": params.history,
        "model": ctx.gm_model,
    }


def _scene(**fields: Any) -> SceneParams:
    """A scene the prefab builds itself, checked like one written in a file."""
    return SceneParams.model_validate(fields)


@register
class Interviewer(Prefab):
    name = "interviewer"
    kind = "game_master"
    description = "administers one questionnaire (a survey scene) to the participants"
    Params = InterviewParams

    @classmethod
    def build(cls, name: str, params: InterviewParams, ctx: BuildContext) -> ScenedGameMaster:
        scene = _scene(
            name=params.record,
            kind="survey",
            questions=params.questions,
            participants=params.participants,
            announce=params.announce,
        )
        return ScenedGameMaster(**_options(name, params, ctx, [scene]))


class ExperimentParams(Params):
    """A between-subjects experiment (see the module docstring). ``post`` defaults to
    ``pre``; ``task`` is the call to action of an act scene between the manipulation and
    the post questionnaire; ``remind`` repeats each participant's text in the post
    questionnaire's context (as an anchoring question comes right before the estimate)."""

    pre: list[QuestionParams] = Field(..., min_length=1)
    manipulation: str = Field(..., min_length=1, description="told to the treated group")
    control: str = Field("", description="told to the control group (may be empty)")
    treated_share: float = Field(0.5, ge=0.0, le=1.0)
    post: list[QuestionParams] | None = None
    task: str | None = None
    participants: list[str] | None = None
    remind: bool = True
    variables: list[VariableParams] = Field(default_factory=list)
    history: int = Field(20, ge=1)

    @model_validator(mode="after")
    def _free_names(self) -> ExperimentParams:
        taken = {"condition", "pre", "post"} & {v.name for v in self.variables}
        if taken:
            raise ValueError(f"variables {sorted(taken)} are the experiment's own; rename them")
        return self


def treated_count(n: int, share: float) -> int:
    """How many of ``n`` participants are treated: ``share * n`` rounded half up."""
    return int(share * n + 0.5)


class ExperimentGameMaster(ScenedGameMaster):
    """Plays pre survey -> manipulation -> optional task -> post survey (module docstring)."""

    def __init__(
        self, *, manipulation: str, control: str, treated_share: float, remind: bool, **options: Any
    ):
        super().__init__(**options)
        self.texts = {"treatment": manipulation, "control": control}
        self.treated_share = treated_share
        self.remind = remind
        self.state.add(
            GroundedVariable(
                "condition",
                {},
                kind=dict,
                description="each participant's experimental condition",
                validator=_known_conditions,
            )
        )

    def assign(self, names: Sequence[str], step: int) -> dict[str, str]:
        """Randomly assign ``names`` to the conditions with the seeded RNG (once: a
        resumed or repeated call keeps the stored assignment)."""
        if self.state["condition"]:
            return dict(self.state["condition"])
        shuffled = list(names)
        self.rng.shuffle(shuffled)
        treated = set(shuffled[: treated_count(len(shuffled), self.treated_share)])
        assignment = {n: "treatment" if n in treated else "control" for n in names}
        self.state.apply({"condition": assignment}, step=step, cause="random assignment")
        self.events.append(
            f"{len(treated)} of {len(names)} participants were assigned to the treatment."
        )
        return assignment

    async def aplay(
        self, step: int, entities: Sequence[Entity], log: EpisodeLog, *, simultaneous: bool
    ) -> None:
        """Assign at the first step, tell the manipulation when it is due, and play the
        post questionnaire per condition; other steps play as scenes."""
        self._current = step
        scene, rnd = self.scene(step)
        actors = self._participants(entities, step)
        assignment = self.assign([a.name for a in actors], step)
        if rnd == 0 and scene.name != "pre" and not self.memo.get("manipulated"):
            for actor in actors:
                text = self.texts[assignment[actor.name]]
                if text:
                    self.tell(actor.name, text)
            self.memo["manipulated"] = True
            deliver(self, actors, log, step)
        if scene.name != "post":
            await super().aplay(step, entities, log, simultaneous=simultaneous)
            return
        for condition in CONDITIONS:
            group = [a for a in actors if assignment[a.name] == condition]
            text = self.texts[condition]
            reminder = f"Earlier you were told: {text}" if self.remind and text else ""
            if group:
                await self._interview(
                    scene.model_copy(update={"announce": reminder}), group, step, log
                )


def _known_conditions(value: Any, _proposed: Any) -> str | None:
    bad = sorted({str(v) for v in value.values()} - set(CONDITIONS))
    return f"conditions must be treatment or control, not {bad}" if bad else None


@register
class PsychologyExperiment(Prefab):
    name = "psychology_experiment"
    kind = "game_master"
    description = "random assignment, pre survey, manipulation, optional task, post survey"
    Params = ExperimentParams

    @classmethod
    def build(cls, name: str, params: ExperimentParams, ctx: BuildContext) -> ScenedGameMaster:
        who = params.participants
        if who is not None and not who:
            raise InputError("participants= must name at least one entity (or be left out)")
        scenes = [_scene(name="pre", kind="survey", questions=params.pre, participants=who)]
        if params.task:
            scenes.append(_scene(name="task", call_to_action=params.task, participants=who))
        post = params.post if params.post is not None else params.pre
        scenes.append(_scene(name="post", kind="survey", questions=post, participants=who))
        return ExperimentGameMaster(
            manipulation=params.manipulation,
            control=params.control,
            treated_share=params.treated_share,
            remind=params.remind,
            **_options(name, params, ctx, scenes),
        )
