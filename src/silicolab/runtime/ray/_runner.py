"""Unit runners: the async actors that run a batch's coroutine units, fed in chunks.

A unit runner (one per node) runs coroutine units on its event loop. The driver does not
make one actor call per unit: a :class:`Feeder` (one per runner and batch) sends units
and fetches results in batches, as :mod:`silicolab.llm.ray._channel` does for LLM calls:

* a **submit** carries every unit queued since the previous submit left (at most one is
  in flight), and the runner starts each as a task of its own;
* a **collect** (at most one in flight) waits until one of the feeder's units has
  finished, lets the others finishing at the same moment join it, and returns their
  results; the driver then records one event per unit, as each arrives.

A runner killed mid-batch is restarted by Ray (``max_restarts``) with a new
*incarnation*; the first answer from it tells the feeder, which submits again every unit
the dead incarnation had not returned (at most ``max_retries`` times per unit). A unit
whose result arrives twice is recorded once: only the driver records. The feeder also
reports the dead process (``on_death``), so the LLM services close its calls at once
instead of waiting for their leases to expire.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import uuid
from collections.abc import Callable
from typing import Any

from silicolab.core.remote import PROCESS_ID

#: The longest a collect waits for a result before answering (empty).
COLLECT_S = 1.0
#: How long a collect lets other units finishing at the same moment join its answer.
GATHER_S = 0.002
_IDS = itertools.count(1)


def portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling (to travel to the driver), else a RuntimeError
    with its message."""
    from ray import cloudpickle

    try:
        cloudpickle.loads(cloudpickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def sendable(done: list[tuple[int, bool, Any]]) -> list[tuple[int, bool, Any]]:
    """``done`` with every result that cannot be pickled replaced by an error, so one
    unit's unpicklable value fails that unit, not every unit of the answer."""
    from ray import cloudpickle

    try:
        cloudpickle.dumps(done)
    except Exception:
        return [(i, *_one_sendable(ok, value)) for i, ok, value in done]
    return done


def _one_sendable(ok: bool, value: Any) -> tuple[bool, Any]:
    from ray import cloudpickle

    try:
        cloudpickle.dumps(value)
    except Exception as exc:
        return False, RuntimeError(f"the unit's result cannot be sent to the driver: {exc}")
    return ok, value


class UnitRunner:
    """An async actor running coroutine units on its event loop (one per node)."""

    def __init__(self) -> None:
        self.incarnation = PROCESS_ID  # a restarted runner is a new process
        self._functions: dict[str, Any] = {}
        self._tasks: dict[tuple[str, int], asyncio.Task[None]] = {}
        self._done: dict[str, list[tuple[int, bool, Any]]] = {}
        self._ready: dict[str, asyncio.Event] = {}

    async def _function(self, box: list[Any]) -> Any:
        """The batch's function, deserialized on first use (the last few are kept: a
        runner serves every batch of its driver)."""
        key = box[0].hex()
        if key not in self._functions:
            while len(self._functions) >= 4:
                self._functions.pop(next(iter(self._functions)))
            self._functions[key] = await box[0]
        return self._functions[key]

    async def submit(self, feeder: str, box: list[Any], items: list[tuple[int, Any]]) -> str:
        """Start ``fn(item)`` for each ``(id, item)``; answer with this incarnation."""
        fn = await self._function(box)
        self._done.setdefault(feeder, [])
        self._ready.setdefault(feeder, asyncio.Event())
        for ident, item in items:
            task = asyncio.ensure_future(self._one(feeder, fn, ident, item))
            self._tasks[(feeder, ident)] = task
        return self.incarnation

    async def _one(self, feeder: str, fn: Any, ident: int, item: Any) -> None:
        try:
            value = fn(item)
            if inspect.isawaitable(value):
                value = await value
            result = (ident, True, value)
        except Exception as exc:  # the unit's own error, sent back as it was raised
            result = (ident, False, portable(exc))
        finally:
            self._tasks.pop((feeder, ident), None)
        if feeder in self._done:
            self._done[feeder].append(result)
            self._ready[feeder].set()

    async def collect(self, feeder: str, wait_s: float) -> tuple[str, list[tuple[int, bool, Any]]]:
        """This incarnation and the feeder's results since the last collect, waiting up
        to ``wait_s`` for the first one."""
        ready = self._ready.setdefault(feeder, asyncio.Event())
        self._done.setdefault(feeder, [])
        if not self._done[feeder] and wait_s > 0:
            ready.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ready.wait(), timeout=wait_s)
            await asyncio.sleep(GATHER_S)
        done, self._done[feeder] = self._done[feeder], []
        return self.incarnation, sendable(done)

    async def forget(self, feeder: str, cancel: bool) -> None:
        """Drop the feeder's results (its batch is over), cancelling its running units."""
        self._done.pop(feeder, None)
        self._ready.pop(feeder, None)
        for key in [k for k in self._tasks if k[0] == feeder]:
            task = self._tasks.pop(key)
            if cancel:
                task.cancel()


class Feeder:
    """The driver's side of one runner for one batch: units in, results out, in chunks."""

    def __init__(
        self,
        runner: Any,
        box: list[Any],
        max_retries: int,
        on_death: Callable[[str], None] = lambda process: None,
    ):
        self.runner, self.box, self.max_retries = runner, box, max_retries
        self.on_death = on_death
        self.name = uuid.uuid4().hex
        self.incarnation: str | None = None
        self._queue: list[tuple[int, Any]] = []
        #: id -> [future, item, incarnation it was submitted to, times resubmitted]
        self._pending: dict[int, list[Any]] = {}
        self._submitting = self._collecting = False
        self._tasks: set[asyncio.Task[None]] = set()

    async def call(self, item: Any) -> Any:
        """Run one unit on the runner and return its value (or raise its error)."""
        ident = next(_IDS)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[ident] = [future, item, None, 0]
        self._queue.append((ident, item))
        self._kick()
        try:
            return await future
        finally:
            self._pending.pop(ident, None)

    def close(self, cancel: bool) -> None:
        """The batch is over: the runner drops what it holds for it."""
        self.runner.forget.remote(self.name, cancel)

    def _kick(self) -> None:
        if self._queue and not self._submitting:
            self._submitting = True
            items, self._queue = self._queue, []
            self._spawn(self._submit(items))
        if not self._collecting and any(p[2] is not None for p in self._pending.values()):
            self._collecting = True
            self._spawn(self._collect())

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _submit(self, items: list[tuple[int, Any]]) -> None:
        try:
            incarnation = await self.runner.submit.remote(self.name, self.box, items)
        except Exception as exc:  # the runner is gone for good, or the box is broken
            self._fail(exc, [ident for ident, _ in items])
        else:
            for ident, _ in items:
                if ident in self._pending:
                    self._pending[ident][2] = incarnation
            self._seen(incarnation)
        finally:
            self._submitting = False
            self._kick()

    async def _collect(self) -> None:
        try:
            incarnation, done = await self.runner.collect.remote(self.name, COLLECT_S)
        except Exception as exc:
            self._fail(exc, list(self._pending))
        else:
            for ident, ok, value in done:
                entry = self._pending.get(ident)
                if entry is not None and not entry[0].done():
                    if ok:
                        entry[0].set_result(value)
                    else:
                        entry[0].set_exception(value)
            self._seen(incarnation)
        finally:
            self._collecting = False
            self._kick()

    def _seen(self, incarnation: str) -> None:
        """Units given to an incarnation that has since died are submitted again."""
        if incarnation == self.incarnation:
            return
        if self.incarnation is not None:  # the runner was restarted: its process died
            self.on_death(self.incarnation)
        self.incarnation = incarnation
        for ident, entry in self._pending.items():
            if entry[2] is None or entry[2] == incarnation or entry[0].done():
                continue
            entry[2], entry[3] = None, entry[3] + 1
            if entry[3] > self.max_retries:
                entry[0].set_exception(RuntimeError("the unit runner died too many times"))
            else:
                self._queue.append((ident, entry[1]))

    def _fail(self, exc: BaseException, idents: list[int]) -> None:
        for ident in idents:
            entry = self._pending.get(ident)
            if entry is not None and not entry[0].done():
                entry[0].set_exception(exc)


__all__ = ["COLLECT_S", "Feeder", "UnitRunner", "portable", "sendable"]
