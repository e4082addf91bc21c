"""One scientist protocol, and the families that pair environments with their scientists.

A scientist is any object with ``agent`` (its registered name) and ``model_label`` (the
model it uses, ``""`` without one) plus the hooks its family's episode player calls. Each
environment family publishes one :class:`Family` (registered on the environment's spec as
a lazy ``"module:FAMILY"`` path): its scientists by name, the same three names in every
family (``reference`` needs no LLM, ``random`` designs at random, ``llm`` is driven by a
language model), and ``play``, the coroutine that plays one episode and returns the
family's record. :func:`silicolab.scientists.run_episode` wraps that record in the one
:class:`~silicolab.scientists.EpisodeRecord` shape.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from silicolab.core.errors import InputError

#: The scientist names every family offers.
SCIENTISTS: tuple[str, ...] = ("reference", "random", "llm")


@runtime_checkable
class Scientist(Protocol):
    """What every scientist has, whatever its family (the hooks are the family's)."""

    agent: str
    model_label: str


class FamilyRecord(Protocol):
    """What :func:`~silicolab.scientists.run_episode` needs of a family's episode record."""

    def to_dict(self) -> dict[str, Any]: ...

    def summary(self) -> dict[str, Any]:
        """``{"steps", "scores" (name -> float), "health" (UnitHealth counters), "usage",
        "runtime_s"}`` of the episode."""
        ...


@dataclass(frozen=True, kw_only=True)
class Family:
    """An environment family's scientists and episode player (see the module docstring).

    ``scientists`` maps a name to ``factory(*, model, seed, **options)``; ``aliases`` maps
    an old name to its current one (accepted with a :class:`DeprecationWarning`);
    ``play(env, scientist, **options)`` is a coroutine returning a :class:`FamilyRecord`;
    ``record_type`` rebuilds one from its ``to_dict()``.
    """

    name: str
    scientists: Mapping[str, Callable[..., Any]]
    play: Callable[..., Awaitable[Any]]
    record_type: Any = None
    aliases: Mapping[str, str] = field(default_factory=dict)
    needs_model: frozenset[str] = frozenset({"llm"})

    def canonical(self, name: str) -> str:
        """The current name of scientist ``name`` (old names warn), or an InputError."""
        if name in self.aliases:
            new = self.aliases[name]
            warnings.warn(
                f"the {self.name} scientist {name!r} is now called {new!r}",
                DeprecationWarning,
                stacklevel=3,
            )
            name = new
        if name not in self.scientists:
            raise InputError(
                f"unknown {self.name} agent {name!r}; choose from {list(self.scientists)}"
            )
        return name

    def make(self, name: str, *, model: Any = None, seed: int | None = 0, **options: Any) -> Any:
        """The scientist called ``name`` (``model``: a spec or a loaded model, required
        by the LLM scientist; ``options`` go to its class)."""
        name = self.canonical(name)
        if name in self.needs_model and model is None:
            raise InputError(
                f"the {name} scientist needs model= (a spec such as 'openai:gpt-4o-mini')"
            )
        return self.scientists[name](model=model, seed=seed, **options)


def family_of(env: Any) -> Family:
    """The :class:`Family` of an environment, an environment id, or a family name."""
    from silicolab.envs import registry

    if isinstance(env, Family):
        return env
    if isinstance(env, str):
        by_name = [s for s in registry.specs() if env in (s.id, s.family) and s.scientists]
        if not by_name:
            raise InputError(
                f"no scientists are registered for {env!r}; environments: "
                f"{list(registry.registered())}"
            )
        return registry.resolve(by_name[0].scientists)
    made = getattr(env, "spec", None)
    if made is None or not made.scientists:
        raise InputError(
            f"{type(env).__name__} was not built by silicolab.envs.make with a registered "
            "family, so its scientists are unknown"
        )
    return registry.resolve(made.scientists)


def make_scientist(
    env: Any, name: str, *, model: Any = None, seed: int | None = 0, **options: Any
) -> Any:
    """The scientist called ``name`` for ``env`` (an environment, an id or a family name)."""
    return family_of(env).make(name, model=model, seed=seed, **options)


__all__ = ["SCIENTISTS", "Family", "FamilyRecord", "Scientist", "family_of", "make_scientist"]
