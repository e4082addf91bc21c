"""The bounds of the command line's numeric options, in one place for every command.

``--jobs`` means one of two things, and each has its own bound:

* **worker processes** (offline benchmark agents, statistical discovery methods): each is
  a Python process computing on a CPU, so more than :data:`WORKERS_PER_CPU` per usable
  CPU only adds memory and switching (``--jobs 100000`` once started 244 processes on two
  cores);
* **units in flight** (language-model calls awaited on the event loop, units on a Ray
  cluster): they wait on the network, not on this machine's CPUs, so the bound is the
  fixed :data:`MAX_IN_FLIGHT`, beyond which a server's rate limit, not ``--jobs``, sets
  the pace.

A run of more than :data:`LARGE_RUN` units (seeds x goals, suites x episodes) shows its
plan and needs ``--yes`` or a yes at the prompt; a study's design has its own guard,
``--max-conditions`` (default :data:`LARGE_RUN` as well). Every refusal is one line and
exit 2, before any run directory exists.
"""

from __future__ import annotations

import os
import sys

import typer

from silicolab.core.errors import InputError

#: Worker processes a command may start per CPU this process may use.
WORKERS_PER_CPU = 4
#: Worker processes always allowed, even on one CPU: the largest default ``--jobs`` of a
#: benchmark (``bench causalab``), so a default is never refused.
MIN_WORKERS = 8
#: Units (model calls, Ray units) a command may keep in flight at once.
MAX_IN_FLIGHT = 256
#: Units a run may have before it needs a confirmation (``--yes`` or the prompt).
LARGE_RUN = 1000

#: ``--jobs`` help of the commands whose units only ever wait on the network.
IN_FLIGHT_JOBS_HELP = f"(at most {MAX_IN_FLIGHT})"
#: ``--jobs`` help of the benchmarks, whose units run in processes or on the event loop.
BENCH_JOBS_HELP = (
    f"worker processes for offline agents and methods (at most {WORKERS_PER_CPU} per CPU, "
    f"{MIN_WORKERS} on any machine), "
    f"units in flight for a language model or on Ray (at most {MAX_IN_FLIGHT})"
)
YES_HELP = f"Run a plan of more than {LARGE_RUN:,} units without asking."


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, e.g. a container's share),
    at least 1."""
    counter = getattr(os, "process_cpu_count", None)  # Python 3.13+
    if counter is not None:
        count = counter()
    elif hasattr(os, "sched_getaffinity"):
        count = len(os.sched_getaffinity(0))
    else:  # pragma: no cover - macOS and Windows before 3.13
        count = os.cpu_count()
    return max(1, count or 1)


def max_jobs(*, processes: bool) -> int:
    """The largest ``--jobs``: :data:`WORKERS_PER_CPU` x the usable CPUs (at least
    :data:`MIN_WORKERS`) when the units run in worker processes on this machine, else
    :data:`MAX_IN_FLIGHT`."""
    if processes:
        return max(MIN_WORKERS, WORKERS_PER_CPU * usable_cpus())
    return MAX_IN_FLIGHT


def check_jobs(jobs: int, *, processes: bool) -> int:
    """``jobs`` if it is within :func:`max_jobs`, else an :class:`InputError` naming the
    bound and why it is there."""
    bound = max_jobs(processes=processes)
    if jobs <= bound:
        return jobs
    if processes:
        why = (
            f"{WORKERS_PER_CPU} worker processes per CPU and at least {MIN_WORKERS}, "
            f"{usable_cpus()} CPUs here"
        )
    else:
        why = f"at most {MAX_IN_FLIGHT} units in flight"
    raise InputError(
        f"--jobs {jobs} is above its bound {bound} ({why}); use --jobs {bound} or less"
    )


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
