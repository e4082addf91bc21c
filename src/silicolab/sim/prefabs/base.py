"""The prefab contract and registry: named, parameterised recipes that build entities.

A prefab is how a simulation file names a kind of entity or game master: ``prefab: basic``
plus ``params`` (checked by the prefab's own pydantic model, so a misspelt or wrongly typed
parameter is refused with its field). Each prefab composes the existing pieces of
:mod:`silicolab.sim` (components, memory, the game master, scenes) and builds one
:class:`~silicolab.sim.entity.Entity` from a :class:`BuildContext`: the models, the seed
and the other entities' names. Registering is one decorator, so a user's own prefab is
usable from a simulation file as soon as its module is imported.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from silicolab.core.errors import InputError

if TYPE_CHECKING:
    from silicolab.llm.base import LanguageModel
    from silicolab.sim.entity import Entity
    from silicolab.sim.game_master import Clock

PrefabKind = Literal["entity", "game_master", "initializer"]


class Params(BaseModel):
    """Base of every prefab's parameters: unknown fields are errors, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class BuildContext:
    """What a prefab may use to build its entity.

    ``model`` is the simulated people's model and ``gm_model`` the game master's (offline
    both are the simulation's scripted model). ``entity_names`` lists every non-GM entity
    in initiative order; ``sample_key`` makes this simulation's draws independent of
    another's with the same prompts (it names the simulation and the seed).
    """

    model: LanguageModel
    gm_model: LanguageModel
    seed: int
    entity_names: tuple[str, ...]
    sample_key: str
    premise: str
    clock: Clock


class Prefab(ABC):
    """A named recipe for an entity: ``kind``, a one-line ``description``, a ``Params``
    model and :meth:`build`."""

    name: ClassVar[str]
    kind: ClassVar[PrefabKind]
    description: ClassVar[str]
    Params: ClassVar[type[Params]] = Params

    @classmethod
    @abstractmethod
    def build(cls, name: str, params: Any, ctx: BuildContext) -> Entity:
        """The entity named ``name``, built from checked ``params`` (an instance of
        ``cls.Params``)."""

    @classmethod
    def check(cls, params: Mapping[str, Any] | None) -> Any:
        """``params`` checked by ``cls.Params`` (a pydantic ``ValidationError`` if bad)."""
        return cls.Params.model_validate(dict(params or {}))


PREFABS: dict[str, type[Prefab]] = {}
"""Every registered prefab by name."""

P = TypeVar("P", bound=type[Prefab])


def register(cls: P) -> P:
    """Class decorator: make ``cls`` usable by name in simulation files."""
    if getattr(cls, "name", None) in PREFABS and PREFABS[cls.name] is not cls:
        raise InputError(f"two prefabs are named {cls.name!r}")
    PREFABS[cls.name] = cls
    return cls


def find_prefab(name: str, kind: PrefabKind) -> type[Prefab]:
    """The prefab ``name`` of ``kind``; an unknown name is refused with the known ones."""
    found = PREFABS.get(name)
    if found is None or found.kind != kind:
        known = ", ".join(sorted(n for n, p in PREFABS.items() if p.kind == kind))
        raise InputError(f"unknown {kind.replace('_', ' ')} prefab {name!r}; known: {known}")
    return found


def prefabs_of(kind: PrefabKind) -> list[type[Prefab]]:
    """The registered prefabs of ``kind``, by name."""
    return [PREFABS[n] for n in sorted(PREFABS) if PREFABS[n].kind == kind]


RESPONDERS: dict[str, Callable[..., str]] = {}
"""Named offline responders: ``request -> reply`` functions a simulation file's
``offline.responder`` may name when regex rules cannot express its scripted people."""


def responder(name: str) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """Decorator registering an offline responder under ``name``."""

    def add(fn: Callable[..., str]) -> Callable[..., str]:
        RESPONDERS[name] = fn
        return fn

    return add
