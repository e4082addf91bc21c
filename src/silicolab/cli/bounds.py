"""The bounds of the command line's numeric options, in one place for every command.

``--jobs`` has the bounds of :mod:`silicolab.runtime.bounds` (worker processes per CPU,
units in flight), shared with the Python facade.

A run of more than :data:`LARGE_RUN` units (seeds x goals, suites x episodes) shows its
plan and needs ``--yes`` or a yes at the prompt; a study's design has its own guard,
``--max-conditions`` (default :data:`LARGE_RUN` as well). Every refusal is one line and
exit 2, before any run directory exists.
"""

from __future__ import annotations

import sys

import typer

from silicolab.core.errors import InputError
from silicolab.runtime import bounds
from silicolab.runtime.bounds import (
    LARGE_RUN,
    MAX_IN_FLIGHT,
    MIN_WORKERS,
    WORKERS_PER_CPU,
    max_jobs,
    usable_cpus,
)

#: ``--jobs`` help of the commands whose units only ever wait on the network.
IN_FLIGHT_JOBS_HELP = f"(at most {MAX_IN_FLIGHT})"
#: ``--jobs`` help of the benchmarks, whose units run in processes or on the event loop.
BENCH_JOBS_HELP = (
    f"worker processes for offline agents and methods (at most {WORKERS_PER_CPU} per CPU, "
    f"{MIN_WORKERS} on any machine), "
    f"units in flight for a language model or on Ray (at most {MAX_IN_FLIGHT})"
)
YES_HELP = f"Run a plan of more than {LARGE_RUN:,} units without asking."


def check_jobs(jobs: int, *, processes: bool) -> int:
    """:func:`silicolab.runtime.bounds.check_jobs` with its refusal in flags (``--jobs``)."""
    from silicolab.cli.flags import as_flags

    try:
        return bounds.check_jobs(jobs, processes=processes)
    except InputError as err:
        raise InputError(as_flags(str(err), err.params)) from None


def confirm_units(units: int, plan: str, *, yes: bool) -> None:
    """Let a run of more than :data:`LARGE_RUN` units start only when confirmed: with
    ``yes`` the plan is shown on stderr; at a terminal the plan is shown and asked about;
    otherwise (a script, a pipe) it is refused in one line. ``plan`` says what the units
    are, e.g. ``"20 goals x 5,000 seeds = 100,000 episodes"``."""
    if units <= LARGE_RUN:
        return
    if yes:
        typer.echo(f"plan: {plan}", err=True)
        return
    if not sys.stdin.isatty():
        raise InputError(
            f"this runs {units:,} units ({plan}), more than {LARGE_RUN:,}: add --yes to "
            "run them, or ask for fewer"
        )
    typer.echo(f"plan: {plan}", err=True)
    if not typer.confirm("run it?", default=False, err=True):
        raise InputError("cancelled; nothing was run")


__all__ = [
    "BENCH_JOBS_HELP",
    "IN_FLIGHT_JOBS_HELP",
    "LARGE_RUN",
    "MAX_IN_FLIGHT",
    "MIN_WORKERS",
    "WORKERS_PER_CPU",
    "YES_HELP",
    "check_jobs",
    "confirm_units",
    "max_jobs",
    "usable_cpus",
]
