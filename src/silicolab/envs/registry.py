"""Environments by id: ``make("causalab", suite="4nodes", index=0)`` builds one.

Built-in environments are registered as ``"module:function"`` paths and imported only when
someone makes one, so importing :mod:`silicolab.envs` stays cheap. Other packages (the
BoxingGym environments, user code) call :func:`register` with a factory.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from silicolab.core.errors import InputError

Factory = Callable[..., Any]

_REGISTRY: dict[str, Factory | str] = {
    "causalab": "silicolab.envs.causalab.lab:make_lab",
}


def register(env_id: str, factory: Factory | str, *, replace: bool = False) -> None:
    """Make ``factory(**kw)`` available as ``make(env_id, **kw)``.

    ``factory`` is a callable or a lazy ``"package.module:function"`` path. Registering the
    same factory twice is a no-op; giving a taken id to another factory needs ``replace``.
    """
    if not isinstance(env_id, str) or not env_id.strip():
        raise InputError(f"an environment id must be a non-empty string; got {env_id!r}")
    if not (callable(factory) or (isinstance(factory, str) and ":" in factory)):
        raise InputError(
            f"the factory for {env_id!r} must be a callable or a 'module:function' path; "
            f"got {factory!r}"
        )
    existing = _REGISTRY.get(env_id)
    if existing is not None and existing is not factory and existing != factory and not replace:
        raise InputError(
            f"an environment named {env_id!r} is already registered; pass replace=True to "
            "override it or choose another id"
        )
    _REGISTRY[env_id] = factory


def registered() -> tuple[str, ...]:
    """The registered environment ids, sorted."""
    return tuple(sorted(_REGISTRY))


def _resolve(env_id: str) -> Factory:
    factory = _REGISTRY[env_id]
    if callable(factory):
        return factory
    module_name, _, attribute = factory.partition(":")
    resolved = getattr(importlib.import_module(module_name), attribute)
    _REGISTRY[env_id] = resolved
    return resolved


def make(env_id: str, **kwargs: Any) -> Any:
    """Build the environment registered as ``env_id`` with keyword options ``kwargs``."""
    if env_id not in _REGISTRY:
        raise InputError(
            f"unknown environment {env_id!r}; registered environments are {list(registered())}"
        )
    factory = _resolve(env_id)
    try:
        inspect.signature(factory).bind(**kwargs)
    except TypeError as err:
        accepted = [
            n
            for n, p in inspect.signature(factory).parameters.items()
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        raise InputError(f"make({env_id!r}): {err}; it accepts {accepted}") from None
    return factory(**kwargs)
