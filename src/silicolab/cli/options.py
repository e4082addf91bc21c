"""What the user typed: which options were given on the command line, for ``--resume``.

``--resume`` reuses the settings stored in a run's ``run.json``; only options the user
typed can contradict them (defaults never do). Click records where each parameter's value
came from; this reads it.
"""

from __future__ import annotations

from typing import Any

_TYPED = ("COMMANDLINE", "ENVIRONMENT")


def _current_context() -> Any:
    try:  # typer >= 0.2x ships its own copy of click
        from typer._click.globals import get_current_context
    except ImportError:  # pragma: no cover - older typer on the real click
        from click import get_current_context
    return get_current_context()


def explicit_options(ctx: Any = None) -> set[str]:
    """Names (Python parameter names) of the options given on the command line or through
    an environment variable in the current command's context (``ctx``: a click or typer
    context; default: the current one)."""
    ctx = ctx or _current_context()
    names = set()
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name) if param.name else None
        if source is not None and source.name in _TYPED:
            names.add(param.name)
    return names


__all__ = ["explicit_options"]
