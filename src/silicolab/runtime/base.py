"""The bookkeeping every executor shares: keys, resume, ordering, events, progress.

An executor runs ``fn(item)`` for many items ("units of work"). Everything except *how one
call is made* lives here, once: the resume filter (units already ``ok`` in the run's
``events.jsonl`` are restored, not rerun; units reopened by ``--retry-failed`` rerun with
fresh model calls, :func:`fresh_when_marked`), duplicate-key checks, bounded concurrency, the
event written the moment a unit finishes, the error policy, results in input order, and
the progress bar. A subclass implements only:

* :meth:`Executor._call` — run one unit and return its value (awaitable), and
* :meth:`Executor._session` — optionally hold a resource (a process pool, a cluster
  connection and the shipped function) for one batch of ``fn``; what it yields is handed
  to every ``_call`` of that batch, so one executor can run several batches at once.

:class:`~silicolab.runtime.ray.RayExecutor` subclasses :class:`Executor` this way:
``_session`` connects to the cluster and ships ``fn`` once, and ``_call`` returns ``await
ref`` for one Ray task (Ray object refs are awaitable); resume, events and ordering come
from here.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import time
from abc import ABC, abstractmethod
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from silicolab.core.errors import BudgetReached, InputError
from silicolab.core.fresh import fresh_calls
from silicolab.core.sync import run_sync
from silicolab.runtime.group_commit import EventSink, GroupCommit
from silicolab.runtime.heap_freeze import heap_frozen
from silicolab.runtime.progress import ProgressBar


class EventLog(EventSink, Protocol):
    """What an executor needs from a run directory (:class:`silicolab.runs.Run` is one):
    the finished units to skip, the units reopened by ``--retry-failed`` (optional: run
    with fresh model calls), and a durable place to append each finished unit (an
    :class:`~silicolab.runtime.group_commit.EventSink`). A protocol, so runtime and runs
    stay independent packages on the same layer."""

    def finished_events(self) -> dict[str, dict[str, Any]]: ...


OnError = Literal["raise", "record"]


@dataclass(frozen=True)
class UnitResult:
    """The outcome of one unit: its ``key``, its ``value`` (``None`` on error), the
    ``error`` message (``None`` on success), whether it was restored from the run's
    events instead of executed (``cached``), and the wall time of the call (``0.0`` when
    cached)."""

    key: str
    value: Any
    error: str | None = None
    cached: bool = False
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


def default_to_event(value: Any) -> dict[str, Any]:
    """What is stored for a finished unit unless ``to_event`` says otherwise."""
    return {"value": value}


def default_from_event(data: dict[str, Any]) -> Any:
    """How a finished unit's value is restored unless ``from_event`` says otherwise."""
    return data["value"]


def error_message(exc: BaseException) -> str:
    """``"ValueError: bad input"`` — the type keeps messages like ``KeyError: 'x'`` clear."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class Executor(ABC):
    """Runs units with at most ``concurrency`` calls in flight; see the module docstring
    for what subclasses provide."""

    #: Exceptions that stop the batch even with ``on_error="record"``, because every
    #: later unit would fail the same way (e.g. a broken process pool).
    fatal_errors: tuple[type[BaseException], ...] = ()

    def __init__(self, concurrency: int, *, progress: bool | None = None, description: str = ""):
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise InputError(f"concurrency must be a positive integer, got {concurrency!r}")
        self.concurrency = concurrency
        self.progress = progress
        self.description = description

    @abstractmethod
    async def _call(self, fn: Callable[[Any], Any], item: Any, session: Any) -> Any:
        """Run one unit and return its value; exceptions propagate to the error policy.
        ``session`` is what :meth:`_session` yielded for this batch."""

    def _in_flight(self, session: Any) -> int:
        """How many units this batch keeps in flight: ``concurrency``, unless something
        else bounds how many run at once (Ray's CPU slots: its tasks are queued a little
        deeper, so that each worker has its next unit at hand)."""
        return self.concurrency

    @contextlib.asynccontextmanager
    async def _session(self, fn: Callable[[Any], Any]) -> AsyncIterator[Any]:
        """Hold per-batch resources (none by default) around the calls of one ``amap``
        of ``fn``."""
        yield None

    async def amap(
        self,
        fn: Callable[[Any], Any],
        items: Iterable[Any],
        *,
        key: Callable[[Any], str] = str,
        run: EventLog | None = None,
        to_event: Callable[[Any], dict[str, Any]] | None = None,
        from_event: Callable[[dict[str, Any]], Any] | None = None,
        on_error: OnError = "raise",
    ) -> list[UnitResult]:
        """Run ``fn(item)`` for each item; return one :class:`UnitResult` per item, in the
        order of ``items``.

        ``key(item)`` names the unit; it must be unique in the batch and stable across
        runs, since that is how a resume recognises finished work. With ``run``, units
        already ``ok`` in its events are restored with ``from_event(data)`` (default
        ``data["value"]``) and marked ``cached``; every newly finished unit is appended at
        once with data ``to_event(value)`` (default ``{"value": value}``). A failing unit
        gets a status ``"error"`` event (so a resume retries it); then ``on_error="raise"``
        cancels the units in flight and re-raises, while ``"record"`` carries on and
        returns the result with ``error`` set.
        """
        if on_error not in ("raise", "record"):
            raise InputError(f"on_error must be 'raise' or 'record', got {on_error!r}")
        items = list(items)
        keys = _unit_keys(items, key)
        to_event = to_event or default_to_event
        from_event = from_event or default_from_event
        results: list[UnitResult | None] = [None] * len(items)
        pending: deque[tuple[int, str, Any]] = deque()
        finished = run.finished_events() if run is not None else {}
        retried = _retried_units(run)
        for index, (unit, item) in enumerate(zip(keys, items, strict=True)):
            if unit in finished:
                value = _restore(from_event, finished[unit], unit)
                results[index] = UnitResult(key=unit, value=value, cached=True)
            else:
                pending.append((index, unit, item))
        if any(unit in retried for _, unit, _ in pending):
            fn = fresh_when_marked(fn)  # a retried unit's cached replies are the failed ones
            pending = deque((i, unit, (unit in retried, item)) for i, unit, item in pending)

        bar = ProgressBar(
            len(items),
            completed=len(items) - len(pending),
            description=self.description,
            enabled=self.progress,
        )
        with bar:
            if pending:
                async with self._session(fn) as session:
                    call = functools.partial(self._call, fn, session=session)
                    workers = min(self._in_flight(session), len(pending))
                    await self._drain(call, pending, results, run, to_event, on_error, bar,
                                      workers=workers)  # fmt: skip
        missing = [i for i, r in enumerate(results) if r is None]
        if missing:  # pragma: no cover - a bug in a subclass, never a user error
            raise RuntimeError(f"{type(self).__name__} returned no result for items {missing}")
        return results  # type: ignore[return-value]

    def map(
        self, fn: Callable[[Any], Any], items: Iterable[Any], **options: Any
    ) -> list[UnitResult]:
        """Synchronous twin of :meth:`amap` (same arguments) for scripts, the CLI and
        notebooks: inside a running event loop (a Jupyter cell) the batch runs in its own
        loop on a worker thread (:func:`~silicolab.core.sync.run_sync`)."""
        return run_sync(self.amap(fn, items, **options), twin=f"{type(self).__name__}.amap")

    async def _drain(
        self,
        call: Callable[[Any], Awaitable[Any]],
        pending: deque[tuple[int, str, Any]],
        results: list[UnitResult | None],
        run: EventLog | None,
        to_event: Callable[[Any], dict[str, Any]],
        on_error: OnError,
        bar: ProgressBar,
        *,
        workers: int,
    ) -> None:
        """Run the pending units with ``workers`` coroutines taking units in input order.

        A unit's event is queued the moment its call returns and written by one
        :class:`~silicolab.runtime.group_commit.GroupCommit` (the events that finish
        together share a write and an fsync); the unit counts as done (its result kept,
        the bar advanced) only once its event is on disk, and the batch returns only
        once every queued event is, cancelled or not.
        """
        commit = GroupCommit(run) if run is not None else None

        async def worker() -> None:
            while pending:
                index, unit, item = pending.popleft()
                start = time.perf_counter()
                try:
                    value = await call(item)
                except BudgetReached:
                    # not the unit's failure: it was stopped, like a cancelled one, so no
                    # event (a resume runs it), and the whole batch stops here
                    bar.advance(failed=True)
                    raise
                except Exception as exc:
                    message = error_message(exc)
                    if commit is not None:
                        await commit.append(unit, {"error": message}, "error")
                    results[index] = UnitResult(
                        key=unit, value=None, error=message, elapsed_s=time.perf_counter() - start
                    )
                    bar.advance(failed=True)
                    if on_error == "raise" or isinstance(exc, self.fatal_errors):
                        raise
                    continue
                elapsed = time.perf_counter() - start
                if commit is not None:  # fsynced in a thread: the other units go on meanwhile
                    await commit.append(unit, to_event(value))
                results[index] = UnitResult(key=unit, value=value, elapsed_s=elapsed)
                bar.advance()

        async with heap_frozen():  # no full-heap GC pauses stalling the loop (decision 0031)
            tasks = [asyncio.create_task(worker()) for _ in range(workers)]
            try:
                await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                if commit is not None:
                    await commit.aclose()
        for task in tasks:
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]


def _retried_units(run: EventLog | None) -> set[str]:
    """The units ``run`` reopened for ``--retry-failed`` (none for a log without them)."""
    retried = getattr(run, "retried_units", None)
    return set(retried()) if retried is not None else set()


def fresh_when_marked(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``fn`` taking ``(fresh, item)`` pairs: a pair marked fresh runs inside
    :func:`~silicolab.core.fresh.fresh_calls`, so its model calls skip the cache. A
    partial of a top-level function, so it pickles for process and Ray workers (the
    flag is set where the unit runs), and a coroutine function when ``fn`` is one."""
    if is_coroutine_function(fn):
        return functools.partial(_fresh_acall, fn)
    return functools.partial(_fresh_call, fn)


def is_coroutine_function(fn: Any) -> bool:
    """Whether ``fn`` (a function, a partial of one, or a callable object) is async."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an async __call__ counts too
    )


def _fresh_call(fn: Callable[[Any], Any], pair: tuple[bool, Any]) -> Any:
    fresh, item = pair
    with fresh_calls(fresh):
        value = fn(item)
    if fresh and inspect.isawaitable(value):  # a plain function that returned a coroutine
        return _await_fresh(value)
    return value


async def _await_fresh(awaitable: Awaitable[Any]) -> Any:
    with fresh_calls():
        return await awaitable


async def _fresh_acall(fn: Callable[[Any], Any], pair: tuple[bool, Any]) -> Any:
    fresh, item = pair
    with fresh_calls(fresh):
        return await fn(item)


async def call_maybe_async(fn: Callable[[Any], Any], item: Any) -> Any:
    """``fn(item)``, awaited when it returns an awaitable (so plain functions work too)."""
    value = fn(item)
    if inspect.isawaitable(value):
        value = await value
    return value


def _unit_keys(items: list[Any], key: Callable[[Any], str]) -> list[str]:
    keys = [key(item) for item in items]
    bad = next((k for k in keys if not isinstance(k, str)), None)
    if bad is not None:
        raise InputError(f"key= must return a string for each item, got {bad!r}")
    if len(set(keys)) != len(keys):
        dupes = sorted(k for k, n in Counter(keys).items() if n > 1)
        raise InputError(
            f"duplicate unit keys {dupes[:5]}: each item needs its own key, since the key "
            "identifies a unit in events.jsonl; make key= include what distinguishes items"
        )
    return keys


def _restore(from_event: Callable[[dict[str, Any]], Any], event: dict[str, Any], unit: str) -> Any:
    try:
        return from_event(event.get("data") or {})
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(
            f"cannot restore finished unit {unit!r} from events.jsonl ({error_message(exc)}); "
            "pass the from_event= that matches the to_event= used when it was recorded"
        ) from exc


__all__ = ["Executor", "OnError", "UnitResult", "call_maybe_async"]
