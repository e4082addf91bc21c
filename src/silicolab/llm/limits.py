"""Client-side limits: concurrent calls, requests per minute and tokens per minute.

Concurrency is a semaphore; the per-minute limits are token buckets refilled
continuously. A token-per-minute reservation is made from an estimate before the call
(prompt characters / 4 plus ``max_tokens``) and corrected with the real usage after it.
Cache hits never reach this wrapper (the cache sits above it).
"""

from __future__ import annotations

import asyncio
import time

from silicolab.core.errors import ConfigError
from silicolab.llm.base import LanguageModel, ModelWrapper, PerLoop
from silicolab.llm.types import Completion, Request


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


class LimitedModel(ModelWrapper):
    """Holds calls to ``max_concurrency`` in flight and within per-minute budgets."""

    def __init__(
        self,
        inner: LanguageModel,
        *,
        max_concurrency: int | None = 16,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
    ):
        super().__init__(inner)
        if max_concurrency is not None and max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be >= 1, got {max_concurrency}")
        self.max_concurrency = max_concurrency
        self._requests = TokenBucket(requests_per_minute) if requests_per_minute else None
        self._tokens = TokenBucket(tokens_per_minute) if tokens_per_minute else None
        limit = max_concurrency
        self._semaphore = PerLoop(lambda: asyncio.Semaphore(limit)) if limit else None

    async def acomplete(self, request: Request) -> Completion:
        if self._semaphore is not None:
            async with self._semaphore.get():
                return await self._limited(request)
        return await self._limited(request)

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
