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
from silicolab.envs.base import Env, EnvSpec, GoalKind, GoalSpec

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


register(
    "causalab",
    "silicolab.envs.causalab.lab:make_lab",
    family="causalab",
    title="CausaLab crystal lab",
    goals=(GoalSpec(name="direct", kind="accuracy", label="Resonance frequency"),),
    scientists="silicolab.scientists.causalab.family:FAMILY",
)
#: BoxingGym's ten environments, in the spec's order; titles and labels as the paper prints:
#: id, ``module:`` + id where the module's name differs, title, the direct goal's metric
#: kind and label, the prior-only parameter goal's ``name:label`` ("": none), and
#: whether simulated participants speak.
_BOXINGGYM: tuple[tuple[str, str, GoalKind, str, str, bool], ...] = (
    ("location_finding", "Location finding", "error", "Signal", "source:Source", False),
    ("hyperbolic:hyperbolic_temporal_discount", "Hyperbolic", "accuracy", "Choice",
     "discount:Discount", False),
    ("death_process", "Death process", "error", "Num infected", "infection:Infection rate", False),
    ("irt", "IRT", "error", "Correctness", "", False),
    ("dugongs", "Dugongs", "error", "Length", "", False),
    ("peregrines", "Peregrines", "error", "Population", "", False),
    ("survival", "Mastectomy", "accuracy", "Survival", "", False),
    ("lotka_volterra", "Predator-prey", "error", "Population", "", False),
    ("emotion", "Emotions", "error", "Prediction", "", True),
    ("moral_machines", "Moral machines", "accuracy", "Judgement", "", True),
)  # fmt: skip


def _register_boxinggym() -> None:
    """Register the rows of :data:`_BOXINGGYM` as ``boxinggym/<id>``."""
    for where, title, kind, label, param, speak in _BOXINGGYM:
        module, _, name = where.rpartition(":")
        goals = [GoalSpec(name="direct", kind=kind, label=label)]
        if param:
            goal, _, goal_label = param.partition(":")
            goals.append(GoalSpec(name=goal, label=goal_label, prior_only=True))
        register(
            f"boxinggym/{name}",
            f"silicolab.envs.boxinggym.{module or name}:make_{name}",
            family="boxinggym",
            title=title,
            goals=tuple(goals),
            participants_speak=speak,
            scientists=_BOXINGGYM_SCIENTISTS,
        )


_register_boxinggym()
