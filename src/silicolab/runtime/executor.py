"""Executors: many units of work, bounded concurrency, resumable through a run directory.

* :class:`AsyncExecutor` — coroutines on the current event loop, for LLM-bound units
  (network waits, not CPU).
* :class:`ProcessExecutor` — a process pool, for CPU-bound units (simulations, EIG,
  discovery algorithms); ``fn`` must be picklable, i.e. defined at module top level.

Both share :class:`~silicolab.runtime.base.Executor`, so resume, events, ordering, error
policy and progress behave identically; :class:`~silicolab.runtime.ray.RayExecutor`
(optional extra ``silicolab[ray]``) joins them the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from silicolab.core.errors import InputError
from silicolab.runtime.base import Executor, UnitResult, call_maybe_async
from silicolab.runtime.lifeline import init_worker


class AsyncExecutor(Executor):
    """Run ``fn(item)`` as coroutines, at most ``concurrency`` at a time.

    ``fn`` is usually ``async``; a plain function is called on the loop thread (fine for
    quick work, wrong for blocking work — use :class:`ProcessExecutor` or
    ``asyncio.to_thread`` inside ``fn`` for that).

    >>> import asyncio
    >>> async def square(x):
    ...     await asyncio.sleep(0)
    ...     return x * x
    >>> [r.value for r in AsyncExecutor(4).map(square, [1, 2, 3])]
    [1, 4, 9]
    """

    def __init__(
        self, concurrency: int = 8, *, progress: bool | None = None, description: str = ""
    ):
        super().__init__(concurrency, progress=progress, description=description)

    async def _call(self, fn: Callable[[Any], Any], item: Any, session: Any) -> Any:
        return await call_maybe_async(fn, item)


def default_workers() -> int:
    """The CPUs this process may run on (respects affinity masks and containers' cpusets)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not available on macOS or Windows
        return os.cpu_count() or 1


class ProcessExecutor(Executor):
    """Run ``fn(item)`` in a pool of ``workers`` processes (default: the usable CPUs).

    One pool lives for the duration of each ``map``/``amap`` call; at most ``workers``
    units are submitted at once, so a failure or interrupt leaves little queued work.
    ``fn`` and ``items`` must be picklable; ``key``, ``to_event`` and ``from_event`` run
    in the calling process and need not be. Workers start with ``start_method``
    (default ``"forkserver"`` where available, else ``"spawn"``): a plain ``fork`` of a
    process running threads — the progress bar, an HTTP client — can deadlock.

    Workers never outlive this process (see :mod:`silicolab.runtime.lifeline`), even after
    a ``kill -9``; when a batch ends with an exception (Ctrl-C, SIGTERM, a failed unit under
    ``on_error="raise"``) the workers still computing are terminated instead of awaited.
    """

    fatal_errors = (BrokenProcessPool,)

    def __init__(
        self,
        workers: int | None = None,
        *,
        progress: bool | None = None,
        description: str = "",
        start_method: str | None = None,
    ):
        workers = default_workers() if workers is None else workers
        super().__init__(workers, progress=progress, description=description)
        methods = multiprocessing.get_all_start_methods()
        if start_method is None:
            start_method = "forkserver" if "forkserver" in methods else "spawn"
        if start_method not in methods:
            raise InputError(
                f"start_method {start_method!r} is not available here; use one of {methods}"
            )
        self.workers = workers
        self.start_method = start_method

    @contextlib.asynccontextmanager
    async def _session(self, fn: Callable[[Any], Any]) -> AsyncIterator[ProcessPoolExecutor]:
        pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context(self.start_method),
            initializer=init_worker,
            initargs=(os.getpid(),),
        )
        try:
            yield pool
        except BaseException:
            _terminate_workers(pool)
            raise
        finally:
            # Waiting for the workers to exit happens off the loop so amap never blocks it.
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)

    async def _call(self, fn: Callable[[Any], Any], item: Any, session: ProcessPoolExecutor) -> Any:
        return await asyncio.get_running_loop().run_in_executor(session, fn, item)


def _terminate_workers(pool: ProcessPoolExecutor) -> None:
    """Stop the workers of ``pool`` now: their units were cancelled, nobody awaits them."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(Exception):
            process.terminate()


__all__ = ["AsyncExecutor", "ProcessExecutor", "UnitResult", "default_workers"]
