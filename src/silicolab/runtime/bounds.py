"""How many units a run may keep going at once, and how many it may have unasked.

``jobs`` means one of two things, and each has its own bound:

* **worker processes** (offline benchmark agents, statistical discovery methods): each is
  a Python process computing on a CPU, so more than :data:`WORKERS_PER_CPU` per usable
  CPU only adds memory and switching (``jobs=100000`` once started 244 processes on two
  cores);
* **units in flight** (language-model calls awaited on the event loop, units on a Ray
  cluster): they wait on the network, not on this machine's CPUs, so the bound is the
  fixed :data:`MAX_IN_FLIGHT`, beyond which a server's rate limit, not ``jobs``, sets
  the pace.

A run of more than :data:`LARGE_RUN` units needs a confirmation (the command line asks, or
takes ``--yes``). Both front doors use these bounds: the Python facade
(:mod:`silicolab.api`) and the command line (:mod:`silicolab.cli.bounds`).
"""

from __future__ import annotations

import os

from silicolab.core.errors import InputError

#: Worker processes a run may start per CPU this process may use.
WORKERS_PER_CPU = 4
#: Worker processes always allowed, even on one CPU: the largest default ``jobs`` of a
#: benchmark (``bench causalab``), so a default is never refused.
MIN_WORKERS = 8
#: Units (model calls, Ray units) a run may keep in flight at once.
MAX_IN_FLIGHT = 256
#: Units a run may have before it needs a confirmation.
LARGE_RUN = 1000


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
    """The largest ``jobs``: :data:`WORKERS_PER_CPU` x the usable CPUs (at least
    :data:`MIN_WORKERS`) when the units run in worker processes on this machine, else
    :data:`MAX_IN_FLIGHT`."""
    if processes:
        return max(MIN_WORKERS, WORKERS_PER_CPU * usable_cpus())
    return MAX_IN_FLIGHT


def check_jobs(jobs: int, *, processes: bool) -> int:
    """``jobs`` if it is within :func:`max_jobs`, else an :class:`InputError` naming the
    bound and why it is there (the parameter as ``jobs=``, see :mod:`silicolab.cli.flags`)."""
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
        f"jobs={jobs} is above its bound {bound} ({why}); use jobs={bound} or less",
        params=("jobs",),
    )


__all__ = [
    "LARGE_RUN",
    "MAX_IN_FLIGHT",
    "MIN_WORKERS",
    "WORKERS_PER_CPU",
    "check_jobs",
    "max_jobs",
    "usable_cpus",
]
