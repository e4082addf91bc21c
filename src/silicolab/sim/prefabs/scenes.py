"""Scenes: the parts of an episode a scened game master plays, one engine step per round.

A scene names its participants (default: every entity), how many rounds it lasts and what
kind of step each round is:

* ``act`` — each participant says what it tries to do (free text); the game master
  resolves every attempt into an event (its model narrates; a tool call runs as code);
* ``choice`` / ``float`` — each participant picks an option or a number; the answer is
  recorded into a grounded variable by a rule (``set``: ``var[actor] = answer``;
  ``tally``: ``var[answer] += 1``; ``add``: ``var[actor] += answer``) with no model call
  by the game master, then the game master's round-end rule runs (payoffs, the pot);
* ``conversation`` — the participants talk under one of the conversation protocols; every
  statement becomes an event. ``coordinator`` names an entity that coordinates the talk
  (reads the transcript, stops it, picks or realizes the next statement) and never speaks
  in it; without one the game master coordinates the ``coordinator_*`` protocols (and the
  others run to ``max_statements``). ``central`` names the central speaker of ``central_*``;
* ``survey`` — the game master interviews each participant with typed questions; the
  answers go into a grounded variable (``entity -> {question variable: value}``).

``announce`` is told to the participants at the start of the scene's first round.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from silicolab.scm.variables import VARIABLE_TYPES
from silicolab.sim.conversation import PROTOCOLS
from silicolab.sim.entity import ActionSpec
from silicolab.sim.prefabs.base import Params

SceneKind = Literal["act", "choice", "float", "conversation", "survey"]
RecordRule = Literal["set", "tally", "add"]


class QuestionParams(Params):
    """One survey question: the grounded ``variable`` its answers fill, its ``text`` and
    ``type`` (continuous, count, binary, ordinal, nominal) with ``levels`` if any."""

    variable: str
    text: str
    type: str = "continuous"
    levels: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _known_type(self) -> QuestionParams:
        if self.type not in VARIABLE_TYPES:
            raise ValueError(f"type must be one of {', '.join(VARIABLE_TYPES)}")
        return self


class SceneParams(Params):
    """One scene of a scened game master (see the module docstring)."""

    name: str
    kind: SceneKind = "act"
    rounds: int = Field(1, ge=1)
    participants: list[str] | None = None
    call_to_action: str = "What does {name} do next?"
    options: list[str] = Field(default_factory=list)
    announce: str = ""
    record: str | None = None
    rule: RecordRule = "set"
    secret: bool = Field(False, description="only the actor sees its choice")
    protocol: str = "ordered"
    coordinator: str | None = Field(None, description="an entity that coordinates the talk")
    central: str | None = Field(None, description="the central speaker of central_* protocols")
    max_statements: int = Field(8, ge=1)
    questions: list[QuestionParams] = Field(default_factory=list)
    max_tokens: int | None = Field(120, ge=1)

    @model_validator(mode="after")
    def _consistent(self) -> SceneParams:
        if self.kind == "choice" and len(self.options) < 2:
            raise ValueError("a choice scene needs at least two options")
        if self.rule == "tally" and self.kind != "choice":
            raise ValueError("rule 'tally' counts choices: use it in a choice scene")
        if self.kind == "survey" and not self.questions:
            raise ValueError("a survey scene needs questions")
        if self.kind == "conversation" and self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}")
        if (self.coordinator or self.central) and self.kind != "conversation":
            raise ValueError("coordinator and central apply to conversation scenes only")
        return self

    def spec(self) -> ActionSpec:
        """The action spec of an ``act``, ``choice`` or ``float`` round."""
        kind = {"act": "free", "choice": "choice", "float": "float"}[self.kind]
        return ActionSpec(
            self.call_to_action,
            kind=kind,  # type: ignore[arg-type]
            options=tuple(self.options),
            tag=f"scene:{self.name}",
            max_tokens=self.max_tokens if kind == "free" else None,
        )


def scene_at(scenes: list[SceneParams], step: int) -> tuple[SceneParams, int] | None:
    """The scene playing at ``step`` and its round (0-based), or ``None`` past the end."""
    for scene in scenes:
        if step < scene.rounds:
            return scene, step
        step -= scene.rounds
    return None


def total_rounds(scenes: list[SceneParams]) -> int:
    """The number of steps the scenes take."""
    return sum(s.rounds for s in scenes)


def recorded(scene: SceneParams, current: Any, actor: str, answer: str) -> Any:
    """The new value of a ``record`` variable after ``actor`` answered ``answer``."""
    value = dict(current) if isinstance(current, dict) else {}
    if scene.rule == "tally":
        value[answer] = value.get(answer, 0) + 1
    elif scene.kind == "float":
        number = float(answer)
        value[actor] = value.get(actor, 0.0) + number if scene.rule == "add" else number
    else:
        value[actor] = answer
    return value
