"""Group commit: many concurrent units' events made durable with few fsyncs.

A batch of thousands of short units (a replication's conditions) finishes hundreds of
units a second. Writing and fsyncing each unit's event on its own serializes them on the
run's event file: the fsyncs queue up, every waiting unit holds an executor slot and a
thread, and the slots the LLM calls could use sit idle. :class:`GroupCommit` keeps one
writer: the events that arrive while it writes are written together next, with one
``write`` and one fsync (a database's group commit). A unit still waits until its own
event is on disk before it counts as done, so a kill loses no finished unit it reported.
The log encodes events apart from writing them (``encode_events`` and ``append_encoded``,
as :class:`silicolab.runs.Run`): the JSON is made on the event loop and the thread does
only the write and the fsync, which release the GIL; a thread that also encoded would
hold the GIL against the loop it is meant to unburden.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any, Protocol

Event = tuple[str, dict[str, Any] | None, str]


class EventSink(Protocol):
    """Where events go (:class:`silicolab.runs.Run` is one): ``encode_events`` turns
    ``(unit, data, status)`` events into lines, ``append_encoded`` appends lines durably."""

    def encode_events(self, events: Iterable[Event]) -> str: ...

    def append_encoded(self, text: str) -> None: ...


class GroupCommit:
    """Append events to ``log`` from coroutines of one event loop: :meth:`append` returns
    once the event is durable; the writes happen in a worker thread, one batch at a time.
    Call :meth:`aclose` before the loop's work ends so that no accepted event is left
    unwritten (it is also what a cancelled batch awaits)."""

    def __init__(self, log: EventSink) -> None:
        self._log = log
        self._queue: list[tuple[str, asyncio.Future[None]]] = []
        self._writer: asyncio.Task[None] | None = None
        #: batches written and events in them (for benchmarks and tests)
        self.batches = 0
        self.events = 0

    async def append(self, unit: str, data: dict[str, Any] | None, status: str = "ok") -> None:
        """Queue the event and wait until it is on disk; a write error is raised here."""
        done = asyncio.get_running_loop().create_future()
        self._queue.append((self._log.encode_events([(unit, data, status)]), done))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_all())
        await done

    async def aclose(self) -> None:
        """Wait until every queued event is written (shielded: cancelling the caller does
        not stop the writer, so an accepted event is never dropped)."""
        while self._writer is not None and not self._writer.done():
            await asyncio.shield(self._writer)

    async def _write_all(self) -> None:
        while self._queue:
            batch, self._queue = self._queue, []
            try:
                text = "".join(lines for lines, _ in batch)
                await asyncio.to_thread(self._log.append_encoded, text)
            except asyncio.CancelledError:  # the loop is being torn down
                for _, done in [*batch, *self._queue]:
                    done.cancel()
                raise
            except Exception as exc:  # the disk's error goes to every waiting unit
                for _, done in batch:
                    if not done.done():
                        done.set_exception(exc)
                continue
            self.batches += 1
            self.events += len(batch)
            for _, done in batch:
                if not done.done():  # a unit cancelled meanwhile: its event is written
                    done.set_result(None)


__all__ = ["EventSink", "GroupCommit"]
