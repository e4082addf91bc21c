"""Retries with exponential backoff and jitter, honouring ``Retry-After``; bounded and logged.

Backends raise :class:`TransientLLMError` for what is worth retrying (timeouts, 429,
5xx, dropped connections, malformed bodies) and plain :class:`LLMError` for what is not
(a bad request, a wrong key). Log lines never contain credentials.

A layer above (the concurrency limits) may watch the attempts of the call it let through
by setting :data:`ATTEMPT_WATCH` to an :class:`AttemptWatch` for the call's duration: it is
told of each attempt's outcome, and it does the waiting before a retry (so it can give up
its slot meanwhile); the wait is never shorter than the backoff or ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from contextvars import ContextVar
from dataclasses import replace
from typing import Protocol

from silicolab.core.errors import LLMError
from silicolab.core.secrets import scrub_text
from silicolab.llm.base import LanguageModel, ModelWrapper
from silicolab.llm.types import Completion, Request

log = logging.getLogger("silicolab.llm")


class TransientLLMError(LLMError):
    """A failure that may go away if the same request is sent again.

    ``retry_after`` is the server's requested wait in seconds (from ``Retry-After``), if any;
    ``timed_out`` says the attempt got no answer within the timeout.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        timed_out: bool = False,
    ):
        super().__init__(message, status=status)
        self.retry_after = retry_after
        self.timed_out = timed_out

    @property
    def overload(self) -> bool:
        """Whether the server signalled overload (too many requests, a timeout, 408, 503,
        529): a sign to send fewer requests at once, unlike a 500 or a malformed body."""
        return self.timed_out or self.status in OVERLOAD_STATUSES


#: HTTP statuses that mean "too much at once": request timeout, too many requests,
#: unavailable, overloaded (Anthropic).
OVERLOAD_STATUSES = frozenset({408, 429, 503, 529})


class AttemptWatch(Protocol):
    """What a layer above learns of the attempts of one call (see the module docstring)."""

    def failed(self, err: TransientLLMError) -> None: ...

    def succeeded(self) -> None: ...

    async def wait(self, delay: float) -> None: ...


#: The watch of the call running in this context, if a layer above set one.
ATTEMPT_WATCH: ContextVar[AttemptWatch | None] = ContextVar("ATTEMPT_WATCH", default=None)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header value (delta-seconds form), else None."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


class RetryingModel(ModelWrapper):
    """Re-sends a request after a :class:`TransientLLMError`, at most ``max_retries`` times.

    The wait before retry ``k`` (1-based) is ``uniform(0.5, 1) * min(max_backoff_s,
    base_backoff_s * 2**(k-1))``, or the server's ``Retry-After`` when that is longer
    (capped at ``max_wait_s``). The jitter spreads retries of many concurrent calls.
    """

    def __init__(
        self,
        inner: LanguageModel,
        *,
        max_retries: int = 5,
        base_backoff_s: float = 0.25,
        max_backoff_s: float = 8.0,
        max_wait_s: float = 60.0,
        rng: random.Random | None = None,
    ):
        super().__init__(inner)
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.max_retries = max_retries
        self.base_backoff_s = base_backoff_s
        self.max_backoff_s = max_backoff_s
        self.max_wait_s = max_wait_s
        self._rng = rng or random.Random()

    def backoff(self, retry: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        delay = min(self.max_backoff_s, self.base_backoff_s * 2 ** (retry - 1))
        delay *= self._rng.uniform(0.5, 1.0)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_wait_s))
        return delay

    async def acomplete(self, request: Request) -> Completion:
        start = time.perf_counter()
        watch = ATTEMPT_WATCH.get()
        attempt = 0
        while True:
            attempt += 1
            try:
                completion = await self.inner.acomplete(request)
            except TransientLLMError as err:
                if watch is not None:
                    watch.failed(err)
                if attempt > self.max_retries:
                    raise LLMError(
                        f"{self.spec}: gave up after {attempt} attempts; last error: "
                        f"{scrub_text(str(err))}",
                        attempts=attempt,
                        status=err.status,
                    ) from err
                delay = self.backoff(attempt, err.retry_after)
                log.warning(
                    "%s: attempt %d failed (%s); retrying in %.2fs",
                    self.spec,
                    attempt,
                    scrub_text(str(err)),
                    delay,
                )
                await (asyncio.sleep(delay) if watch is None else watch.wait(delay))
                continue
            except LLMError as err:
                err.attempts = attempt
                raise
            if watch is not None:
                watch.succeeded()
            return replace(completion, attempts=attempt, latency_s=time.perf_counter() - start)
