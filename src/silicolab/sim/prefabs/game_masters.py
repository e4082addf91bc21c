"""Game-master prefabs built on :class:`~silicolab.sim.prefabs.scened.ScenedGameMaster`.

* ``generic`` — a narrator: its model turns each free-text attempt into an event
  statement and may change the grounded variables it is allowed to (``narrated``), every
  change checked in Python; tool calls (``toolsets``) run as code without the model;
* ``dialogic`` — scenes of conversation and surveys only: the statements are the events,
  so the game master never calls a model to resolve them.

Grounded variables are declared in the file (``variables``: name, value, description and
an optional ``minimum`` that every number in the value must respect).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import Field, model_validator

from silicolab.core.errors import InputError
from silicolab.sim.grounded import GroundedState, GroundedVariable
from silicolab.sim.prefabs.base import BuildContext, Params, Prefab, register
from silicolab.sim.prefabs.scened import ScenedGameMaster
from silicolab.sim.prefabs.scenes import SceneParams

TOOLSETS: dict[str, Callable[[], list[Callable[..., Any]]]] = {}
"""Named sets of digital actions a game master can offer: name -> factory() -> functions
(each documented: its docstring is the agents' manual)."""


def toolset(name: str) -> Callable[[Callable[[], list[Callable[..., Any]]]], Any]:
    """Decorator registering a tool set factory under ``name``."""

    def add(factory: Callable[[], list[Callable[..., Any]]]) -> Any:
        TOOLSETS[name] = factory
        return factory

    return add


class VariableParams(Params):
    """A grounded variable: its start ``value``, a ``description`` and an optional
    ``minimum`` for every number in it (money that cannot go negative)."""

    name: str = Field(..., min_length=1)
    value: Any
    description: str = ""
    minimum: float | None = None


def _numbers(value: Any) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, Mapping):
        return [n for v in value.values() for n in _numbers(v)]
    if isinstance(value, list | tuple):
        return [n for v in value for n in _numbers(v)]
    return []


def _minimum(name: str, bound: float) -> Callable[[Any, Mapping[str, Any]], str | None]:
    def check(value: Any, _proposed: Mapping[str, Any]) -> str | None:
        low = [n for n in _numbers(value) if n < bound]
        return f"{name} cannot go below {bound:g} (it would be {min(low):g})" if low else None

    return check


def grounded_state(variables: list[VariableParams]) -> GroundedState:
    """The grounded state a file's ``variables`` declare."""
    state = GroundedState()
    for v in variables:
        validator = None if v.minimum is None else _minimum(v.name, v.minimum)
        state.add(GroundedVariable(v.name, v.value, description=v.description, validator=validator))
    return state


class ScenedParams(Params):
    """What every scened game master takes: ``scenes``, ``variables`` and how many recent
    events its prompts show (``history``)."""

    scenes: list[SceneParams] = Field(..., min_length=1)
    variables: list[VariableParams] = Field(default_factory=list)
    history: int = Field(20, ge=1)

    @model_validator(mode="after")
    def _unique(self) -> ScenedParams:
        names = [s.name for s in self.scenes]
        if len(set(names)) != len(names):
            raise ValueError(f"scene names must be unique, got {names}")
        variables = [v.name for v in self.variables]
        if len(set(variables)) != len(variables):
            raise ValueError(f"variable names must be unique, got {variables}")
        return self


class NarratorParams(ScenedParams):
    narrated: list[str] = Field(
        default_factory=list, description="variables the narrator may change"
    )
    toolsets: list[str] = Field(default_factory=list, description="names in TOOLSETS")


def scened_options(name: str, params: ScenedParams, ctx: BuildContext) -> dict[str, Any]:
    """The keyword arguments every scened prefab passes to :class:`ScenedGameMaster`."""
    return {
        "scenes": params.scenes,
        "state": grounded_state(params.variables),
        "clock": ctx.clock,
        "premise": ctx.premise,
        "name": name,
        "history_window": params.history,
    }


def tools_of(names: list[str]) -> list[Callable[..., Any]]:
    """The functions of the named tool sets; an unknown name is refused."""
    tools: list[Callable[..., Any]] = []
    for set_name in names:
        factory = TOOLSETS.get(set_name)
        if factory is None:
            raise InputError(
                f"unknown tool set {set_name!r}; known: {', '.join(sorted(TOOLSETS)) or 'none'}"
            )
        tools += factory()
    return tools


@register
class Generic(Prefab):
    name = "generic"
    kind = "game_master"
    description = "narrator: a model resolves free-text actions into events and state"
    Params = NarratorParams

    @classmethod
    def build(cls, name: str, params: NarratorParams, ctx: BuildContext) -> ScenedGameMaster:
        return ScenedGameMaster(
            model=ctx.gm_model,
            narrated=params.narrated,
            tools=tools_of(params.toolsets),
            **scened_options(name, params, ctx),
        )


@register
class Dialogic(Prefab):
    name = "dialogic"
    kind = "game_master"
    description = "conversations and surveys; statements are the events (no narration)"
    Params = ScenedParams

    @classmethod
    def build(cls, name: str, params: ScenedParams, ctx: BuildContext) -> ScenedGameMaster:
        free = [s.name for s in params.scenes if s.kind == "act"]
        if free:
            raise InputError(
                f"the dialogic game master plays conversation, survey, choice and float "
                f"scenes; scenes {free} are 'act' scenes: use the generic game master"
            )
        return ScenedGameMaster(model=ctx.gm_model, **scened_options(name, params, ctx))
