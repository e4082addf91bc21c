"""Environments by id: ``make("causalab", suite="4nodes", index=0)`` builds one.

Every environment id is registered one way, :func:`register` (an id, a factory and the
:class:`~silicolab.envs.base.EnvSpec` facts), and the built-in ones are listed below as
lazy ``"module:function"`` paths, imported only when someone makes one, so importing
:mod:`silicolab.envs` stays cheap (no numpy). An instance made by :func:`make` carries its
spec (with the options it was made with) as ``env.spec``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, overload

from silicolab.core.errors import InputError
from silicolab.envs.base import Env, EnvSpec, GoalSpec

if TYPE_CHECKING:  # the families' classes, for the typed overloads of make only
    from silicolab.envs.boxinggym.base import BoxingEnv
    from silicolab.envs.causalab.lab import CrystalLab

Factory = Callable[..., Any]

#: BoxingGym's ids, for type checkers (a test checks they are the registered ones).
BoxingGymId = Literal[
    "boxinggym/location_finding",
    "boxinggym/hyperbolic_temporal_discount",
    "boxinggym/death_process",
    "boxinggym/irt",
    "boxinggym/dugongs",
    "boxinggym/peregrines",
    "boxinggym/survival",
    "boxinggym/lotka_volterra",
    "boxinggym/emotion",
    "boxinggym/moral_machines",
]

_REGISTRY: dict[str, EnvSpec] = {}
_FACTORIES: dict[str, Factory] = {}


def register(
    env_id: str, factory: Factory | str, *, replace: bool = False, **facts: Any
) -> EnvSpec:
    """Make ``factory(**kw)`` available as ``make(env_id, **kw)`` and return its spec.

    ``factory`` is a callable or a lazy ``"package.module:function"`` path; ``facts`` are
    the other :class:`EnvSpec` fields (``family``, ``title``, ``goals``,
    ``participants_speak``, ``scientists``). Registering the same thing twice is a no-op;
    giving a taken id to another factory needs ``replace``.
    """
    if not isinstance(env_id, str) or not env_id.strip():
        raise InputError(f"an environment id must be a non-empty string; got {env_id!r}")
    if not (callable(factory) or (isinstance(factory, str) and ":" in factory)):
        raise InputError(
            f"the factory for {env_id!r} must be a callable or a 'module:function' path; "
            f"got {factory!r}"
        )
    facts.setdefault("family", env_id.partition("/")[0] if "/" in env_id else env_id)
    spec = EnvSpec(id=env_id, factory=factory, **facts)
    existing = _REGISTRY.get(env_id)
    if existing is not None and existing != spec and not replace:
        raise InputError(
            f"an environment named {env_id!r} is already registered; pass replace=True to "
            "override it or choose another id"
        )
    _REGISTRY[env_id] = spec
    _FACTORIES.pop(env_id, None)
    return spec


def registered(family: str | None = None) -> tuple[str, ...]:
    """The registered environment ids (of ``family`` if given), sorted."""
    return tuple(sorted(i for i, s in _REGISTRY.items() if family in (None, s.family)))


def specs(family: str | None = None) -> tuple[EnvSpec, ...]:
    """The registration records (of ``family`` if given), in the order they were registered."""
    return tuple(s for s in _REGISTRY.values() if family in (None, s.family))


def spec(env_id: str) -> EnvSpec:
    """The registration record of ``env_id`` (an :class:`InputError` naming the ids)."""
    if env_id not in _REGISTRY:
        raise InputError(
            f"unknown environment {env_id!r}; registered environments are {list(registered())}"
        )
    return _REGISTRY[env_id]


def resolve(path: Any) -> Any:
    """The object a lazy ``"module:attribute"`` path names (other values pass through)."""
    if not isinstance(path, str):
        return path
    module_name, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def _factory(env_id: str) -> Factory:
    if env_id not in _FACTORIES:
        _FACTORIES[env_id] = resolve(spec(env_id).factory)
    return _FACTORIES[env_id]


@overload
def make(env_id: Literal["causalab"], **kwargs: Any) -> CrystalLab: ...
@overload
def make(env_id: BoxingGymId, **kwargs: Any) -> BoxingEnv: ...
@overload
def make(env_id: str, **kwargs: Any) -> Any: ...
def make(env_id: str, **kwargs: Any) -> Any:
    """Build the environment registered as ``env_id`` with keyword options ``kwargs``.

    Typed as :class:`~silicolab.envs.Env` (the built-in ids as their family's class, so a
    type checker knows their actions); an option the factory does not take is refused
    with an :class:`InputError` naming it. :func:`silicolab.envs.check_env` checks what
    a new factory builds."""
    factory = _factory(env_id)
    try:
        inspect.signature(factory).bind(**kwargs)
    except TypeError as err:
        accepted = [
            n
            for n, p in inspect.signature(factory).parameters.items()
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        raise InputError(f"make({env_id!r}): {err}; it accepts {accepted}") from None
    env = factory(**kwargs)
    with contextlib.suppress(AttributeError):  # a factory may return a plain value
        env.spec = dataclasses.replace(spec(env_id), kwargs=dict(kwargs))
    return env


def remake(env: Any, **overrides: Any) -> Env:
    """A fresh instance of ``env``'s id with the options it was made with, ``overrides``
    applied (e.g. to replay an episode or estimate its regret)."""
    made = getattr(env, "spec", None)
    if not isinstance(made, EnvSpec):
        raise InputError("remake() needs an environment built by silicolab.envs.make")
    return make(made.id, **{**made.kwargs, **overrides})


# -- the built-in environments ---------------------------------------------------------

_BOXINGGYM_SCIENTISTS = "silicolab.scientists.boxinggym.family:FAMILY"


def _boxinggym(
    name: str, module: str, title: str, *goals: GoalSpec, participants: bool = False
) -> None:
    register(
        f"boxinggym/{name}",
        f"silicolab.envs.boxinggym.{module}:make_{name}",
        family="boxinggym",
        title=title,
        goals=goals,
        participants_speak=participants,
        scientists=_BOXINGGYM_SCIENTISTS,
    )


register(
    "causalab",
    "silicolab.envs.causalab.lab:make_lab",
    family="causalab",
    title="CausaLab crystal lab",
    goals=(GoalSpec(name="direct", kind="accuracy", label="Resonance frequency"),),
    scientists="silicolab.scientists.causalab.family:FAMILY",
)
# BoxingGym's ten environments, in the spec's order; titles and labels as the paper prints.
_boxinggym(
    "location_finding",
    "location_finding",
    "Location finding",
    GoalSpec(name="direct", label="Signal"),
    GoalSpec(name="source", label="Source", prior_only=True),
)
_boxinggym(
    "hyperbolic_temporal_discount",
    "hyperbolic",
    "Hyperbolic",
    GoalSpec(name="direct", kind="accuracy", label="Choice"),
    GoalSpec(name="discount", label="Discount", prior_only=True),
)
_boxinggym(
    "death_process",
    "death_process",
    "Death process",
    GoalSpec(name="direct", label="Num infected"),
    GoalSpec(name="infection", label="Infection rate", prior_only=True),
)
_boxinggym("irt", "irt", "IRT", GoalSpec(name="direct", label="Correctness"))
_boxinggym("dugongs", "dugongs", "Dugongs", GoalSpec(name="direct", label="Length"))
_boxinggym("peregrines", "peregrines", "Peregrines", GoalSpec(name="direct", label="Population"))
_boxinggym(
    "survival", "survival", "Mastectomy", GoalSpec(name="direct", kind="accuracy", label="Survival")
)
_boxinggym(
    "lotka_volterra", "lotka_volterra", "Predator-prey", GoalSpec(name="direct", label="Population")
)
_boxinggym(
    "emotion", "emotion", "Emotions", GoalSpec(name="direct", label="Prediction"), participants=True
)
_boxinggym(
    "moral_machines",
    "moral_machines",
    "Moral machines",
    GoalSpec(name="direct", kind="accuracy", label="Judgement"),
    participants=True,
)
