"""Client-side limits: concurrent calls, requests per minute and tokens per minute.

Concurrency is an adaptive window (:class:`AdaptiveConcurrency`, AIMD as in TCP): it starts
at the configured limit, halves when the server pushes back (a 429, 408, 503 or 529
status, or a timeout) and grows by one after each window of successes, never above the
configured limit nor below 1. The per-minute limits are token buckets refilled
continuously. A token-per-minute reservation is made from an estimate before the call
(prompt characters / 4 plus ``max_tokens``) and corrected with the real usage after it.
Cache hits never reach this wrapper (the cache sits above it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from dataclasses import dataclass

from silicolab.core.errors import ConfigError
from silicolab.llm.base import LanguageModel, ModelWrapper, PerLoop
from silicolab.llm.retry import ATTEMPT_WATCH, TransientLLMError
from silicolab.llm.types import Completion, Request

log = logging.getLogger("silicolab.llm")


class TokenBucket:
    """A bucket of ``capacity`` units refilled at ``capacity`` per minute.

    ``acquire(n)`` waits until ``n`` units are available; the balance may go negative
    through :meth:`adjust`, which then delays later callers (debt is paid back).
    """

    def __init__(self, per_minute: float):
        if per_minute <= 0:
            raise ConfigError(f"a per-minute limit must be positive, got {per_minute}")
        self.capacity = float(per_minute)
        self.rate = self.capacity / 60.0
        self.level = self.capacity
        self.updated = time.monotonic()
        self._lock = PerLoop(asyncio.Lock)

    def _refill(self) -> None:
        now = time.monotonic()
        self.level = min(self.capacity, self.level + (now - self.updated) * self.rate)
        self.updated = now

    async def acquire(self, amount: float) -> None:
        amount = min(amount, self.capacity)  # a request bigger than a minute's budget still runs
        async with self._lock.get():  # first come, first served
            while True:
                self._refill()
                if self.level >= amount:
                    self.level -= amount
                    return
                await asyncio.sleep((amount - self.level) / self.rate)

    def adjust(self, delta: float) -> None:
        """Take ``delta`` more units (or give back, if negative) after the fact."""
        self._refill()
        self.level = min(self.capacity, self.level - delta)


@dataclass(frozen=True)
class ConcurrencyChange:
    """One change of the concurrency window: from ``old`` to ``new`` calls, and why."""

    old: int
    new: int
    reason: str
    at: float  # time.monotonic()


class _Gate:
    """The calls of one event loop holding or awaiting a slot (asyncio objects are per loop)."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.waiters: deque[asyncio.Future[None]] = deque()


class AdaptiveConcurrency:
    """At most ``limit`` calls in flight, with ``limit`` adapted between 1 and ``max_limit``.

    Additive increase, multiplicative decrease: a sign of overload (:meth:`congested`)
    halves the limit, once per window (signs from calls sent before the last decrease are
    the same overload, already answered); every ``limit`` successes in a row add one.
    Each change is logged (``concurrency 64 -> 32 after HTTP 429``) and kept in
    :attr:`changes`. With ``adaptive=False`` the limit stays at ``max_limit``.
    """

    def __init__(self, max_limit: int, *, adaptive: bool = True, label: str = ""):
        if max_limit < 1:
            raise ConfigError(f"max_concurrency must be >= 1, got {max_limit}")
        self.max_limit = max_limit
        self.limit = max_limit
        self.adaptive = adaptive
        self.label = label
        self.epoch = 0  # counts decreases; a call remembers the epoch it was sent in
        self.changes: list[ConcurrencyChange] = []
        self._successes = 0
        self._gates = PerLoop(_Gate)

    @property
    def in_flight(self) -> int:
        """Calls holding a slot in the running loop."""
        return self._gates.get().in_flight

    async def acquire(self, *, first: bool = False) -> None:
        """Wait for a slot (``first``: ahead of the queue, for a call being retried)."""
        gate = self._gates.get()
        if gate.in_flight < self.limit and not gate.waiters:
            gate.in_flight += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        (gate.waiters.appendleft if first else gate.waiters.append)(waiter)
        try:
            await waiter  # resolved by _wake, which counts the slot as taken
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # the slot arrived with the cancellation: pass it on
            else:
                with contextlib.suppress(ValueError):
                    gate.waiters.remove(waiter)
            raise

    def release(self) -> None:
        """Give a slot back."""
        gate = self._gates.get()
        gate.in_flight -= 1
        self._wake(gate)

    def _wake(self, gate: _Gate) -> None:
        while gate.waiters and gate.in_flight < self.limit:
            waiter = gate.waiters.popleft()
            if not waiter.done():
                gate.in_flight += 1
                waiter.set_result(None)

    def congested(self, sent_in_epoch: int, reason: str) -> None:
        """A call sent in ``sent_in_epoch`` met overload: halve the limit once per window."""
        if not self.adaptive or sent_in_epoch != self.epoch:
            return
        self.epoch += 1
        self._successes = 0
        self._change(max(1, self.limit // 2), f"after {reason}")

    def succeeded(self) -> None:
        """A call was answered: after ``limit`` successes in a row, allow one more."""
        if not self.adaptive or self.limit >= self.max_limit:
            return
        self._successes += 1
        if self._successes >= self.limit:
            self._successes = 0
            self._change(self.limit + 1, f"after {self.limit} successes")
            with contextlib.suppress(RuntimeError):  # called outside a loop: nobody waits
                self._wake(self._gates.get())

    def _change(self, new: int, reason: str) -> None:
        old, self.limit = self.limit, new
        if new == old:
            return
        self.changes.append(ConcurrencyChange(old, new, reason, time.monotonic()))
        # INFO, not WARNING: a back-off is the limiter doing its job, and a command's
        # stderr stays its result (a failed run's one error line); the changes are kept
        log.info("%s: concurrency %d -> %d %s", self.label, old, new, reason)


class _Lease:
    """One call's slot, told about each attempt by the retry layer below (``ATTEMPT_WATCH``):
    it reports overload and success to the window, and gives the slot up while the call
    waits to be retried, so a call sleeping out a ``Retry-After`` holds no slot and its
    retry queues (first in line) under the reduced limit."""

    def __init__(self, window: AdaptiveConcurrency):
        self.window = window
        self.epoch = window.epoch
        self.holding = True  # whether the call holds a slot now

    def failed(self, err: TransientLLMError) -> None:
        if err.overload:
            reason = "a timeout" if err.timed_out else f"HTTP {err.status}"
            self.window.congested(self.epoch, reason)

    def succeeded(self) -> None:
        self.window.succeeded()

    async def wait(self, delay: float) -> None:
        self.window.release()
        self.holding = False
        await asyncio.sleep(delay)
        await self.window.acquire(first=True)
        self.holding = True
        self.epoch = self.window.epoch


class LimitedModel(ModelWrapper):
    """Holds calls to an adaptive ``max_concurrency`` in flight and within per-minute budgets.

    ``adaptive=False`` keeps the concurrency at ``max_concurrency`` whatever the server says.
    """

    def __init__(
        self,
        inner: LanguageModel,
        *,
        max_concurrency: int | None = 16,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        adaptive: bool = True,
    ):
        super().__init__(inner)
        if max_concurrency is not None and max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be >= 1, got {max_concurrency}")
        self.max_concurrency = max_concurrency
        self._requests = TokenBucket(requests_per_minute) if requests_per_minute else None
        self._tokens = TokenBucket(tokens_per_minute) if tokens_per_minute else None
        self.concurrency = (
            AdaptiveConcurrency(max_concurrency, adaptive=adaptive, label=inner.spec)
            if max_concurrency
            else None
        )

    async def acomplete(self, request: Request) -> Completion:
        window = self.concurrency
        if window is None:
            return await self._limited(request)
        await window.acquire()
        lease = _Lease(window)
        token = ATTEMPT_WATCH.set(lease)
        try:
            return await self._limited(request)
        finally:
            ATTEMPT_WATCH.reset(token)
            if lease.holding:
                window.release()

    async def _limited(self, request: Request) -> Completion:
        if self._requests is not None:
            await self._requests.acquire(1)
        reserved = 0
        if self._tokens is not None:
            reserved = (request.prompt_chars() + 3) // 4 + (request.max_tokens or 256)
            await self._tokens.acquire(reserved)
        completion = await self.inner.acomplete(request)
        if self._tokens is not None:
            self._tokens.adjust(completion.usage.total_tokens - reserved)
        return completion
