"""The worker-side end of a model's :class:`~silicolab.llm.ray._service.LLMService`: its
``begin`` and ``end`` requests, batched.

A worker process runs many calls of one model at once (a unit runner runs its share of
``--jobs`` units on one event loop). Sending each call's ``begin`` and ``end`` as its own
Ray actor call costs two messages per call, and on shared CPUs that message cost, not
the service's work (a few microseconds), is what slows a batch down. A :class:`Channel`
(one per service and event loop) sends them together instead:

* a **push** carries every ``begin`` and ``end`` queued since the previous push left; at
  most one push is in flight, so requests made meanwhile wait for it and travel in the
  next one. The service applies the ends first (freeing slots), then starts the begins,
  and answers with those already granted (a cache hit, or a slot and the budgets);
* a **poll** asks for begins the service could not grant at once (they wait there for a
  slot or the per-minute budget, exactly as a single ``begin`` would); at most one poll
  is in flight, it returns as soon as one of them is granted (or after ``POLL_S``, and is
  sent again while any is waiting).

Nothing is weakened: every grant is a slot the service counted, every call's ``end`` is
acknowledged before the call returns (so a batch's ledger is complete when its units
are), and a grant that arrives for a call cancelled in the meantime is handed straight
back. What changes is the number of messages: under load, a fraction of one per call.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import uuid
from typing import Any

from silicolab.core.remote import PROCESS_ID
from silicolab.llm.types import Completion

#: One ``end``: key, tag, lease, token reserve, completion (None: failed), attempts.
End = tuple[str, str, Any, int, Completion | None, int | None]


class Channel:
    """Batched ``begin``/``end`` requests of one worker event loop to one service."""

    def __init__(self, service: Any):
        self.service = service
        self.client = f"{PROCESS_ID}:{uuid.uuid4().hex}"  # the service knows our process
        self._ids = itertools.count(1)
        self._begins: list[tuple[Any, ...]] = []  # (id, key, tag, reserve[, fresh])
        self._ends: list[End] = []
        self._acks: list[asyncio.Future[None]] = []
        self._waiting: dict[int, tuple[asyncio.Future[Any], str, str, int]] = {}
        self._pushing = False
        self._polling = False
        self._tasks: set[asyncio.Task[None]] = set()
        #: Messages sent so far (pushes and polls), for tests and benchmarks.
        self.messages = 0

    async def begin(
        self, key: str, tag: str, reserve: int, fresh: bool = False
    ) -> tuple[Completion | None, Any]:
        """What :meth:`LLMService.begin` answers: ``(hit, None)`` or ``(None, lease)``
        (``fresh``: never a cached answer)."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        ident = next(self._ids)
        self._waiting[ident] = (future, key, tag, reserve)
        self._begins.append((ident, key, tag, reserve, *([True] if fresh else [])))
        self._kick()
        return await future

    async def end(self, *end: Any) -> None:
        """Close a call (:meth:`LLMService.end`'s arguments); returns once the service has
        applied it."""
        ack: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._ends.append(end)  # type: ignore[arg-type]
        self._acks.append(ack)
        self._kick()
        await asyncio.shield(ack)

    def end_now(self, *end: Any) -> None:
        """Close a call without waiting, in a message of its own (a cancelled call: the
        loop may be about to stop, and Ray sends a message even if nobody awaits it)."""
        self.service.exchange.remote(self.client, [], [end], False)

    def _kick(self) -> None:
        """Send what is queued (a push), or ask for the waiting grants (a poll)."""
        if not self._pushing and (self._begins or self._ends):
            self._pushing = True
            begins, ends, acks = self._begins, self._ends, self._acks
            self._begins, self._ends, self._acks = [], [], []
            self._spawn(self._send(begins, ends, acks, wait=False))
        elif not self._pushing and not self._polling and self._waiting:
            self._polling = True
            self._spawn(self._send([], [], [], wait=True))

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(
        self,
        begins: list[tuple[Any, ...]],
        ends: list[End],
        acks: list[asyncio.Future[None]],
        *,
        wait: bool,
    ) -> None:
        self.messages += 1
        try:
            granted = await self.service.exchange.remote(self.client, begins, ends, wait)
        except Exception as exc:  # the service is gone or broken: every waiter hears it
            self._fail(exc, acks, None if wait else begins)  # a poll speaks for all
        else:
            for ack in acks:
                if not ack.done():
                    ack.set_result(None)
            self._deliver(granted)
        finally:
            if wait:
                self._polling = False
            else:
                self._pushing = False
            with contextlib.suppress(RuntimeError):  # not when the loop is being torn down
                self._kick()

    def _fail(
        self,
        exc: Exception,
        acks: list[asyncio.Future[None]],
        begins: list[tuple[Any, ...]] | None,
    ) -> None:
        idents = [b[0] for b in begins] if begins is not None else list(self._waiting)
        for ack in acks:
            if not ack.done():
                ack.set_exception(exc)
        for ident in idents:
            future = self._waiting.pop(ident, (None,))[0]
            if future is not None and not future.done():
                future.set_exception(exc)

    def _deliver(self, granted: list[tuple[int, Any, Any, BaseException | None]]) -> None:
        """Resolve the begins the service granted; a grant nobody waits for any more (the
        call was cancelled) is given back at once."""
        for ident, hit, lease, error in granted:
            future, key, tag, reserve = self._waiting.pop(ident, (None, "", "", 0))
            if future is None:
                continue
            if future.done():  # cancelled while waiting: free the slot it was given
                if error is None and hit is None:
                    self._ends.append((key, tag, lease, reserve, None, None))
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result((hit, lease))


__all__ = ["Channel", "End"]
