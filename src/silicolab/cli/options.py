"""What the user typed: which options were given on the command line, for ``--resume``.

``--resume`` reuses the settings stored in a run's ``run.json``; only options the user
typed can contradict them (defaults never do). Click records where each parameter's value
came from; this reads it.
"""

from __future__ import annotations

from typing import Any

#: Where a typed value comes from (compared by name: typer may ship its own copy of click,
#: whose enum members are not click's).
_TYPED = ("COMMANDLINE", "ENVIRONMENT")


def explicit_options(ctx: Any) -> set[str]:
    """Names (Python parameter names) of the options given on the command line or through
    an environment variable, in the command context ``ctx`` (a ``typer.Context``)."""
    names = set()
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name) if param.name else None
        if source is not None and getattr(source, "name", "") in _TYPED:
            names.add(param.name)
    return names


__all__ = ["explicit_options"]
