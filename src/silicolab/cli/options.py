"""What the user typed: which options were given on the command line, for ``--resume``.

``--resume`` reuses the settings stored in a run's ``run.json``; only options the user
typed can contradict them (defaults never do). Click records where each parameter's value
came from; this reads it.
"""

from __future__ import annotations

import click


def explicit_options(ctx: click.Context | None = None) -> set[str]:
    """Names (Python parameter names) of the options given on the command line or through
    an environment variable in the current command's context."""
    ctx = ctx or click.get_current_context()
    typed = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
    return {
        param.name
        for param in ctx.command.params
        if param.name and ctx.get_parameter_source(param.name) in typed
    }


__all__ = ["explicit_options"]
