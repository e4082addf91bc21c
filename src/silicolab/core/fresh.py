"""Fresh calls: language-model calls that must not be answered from the cache.

``--retry-failed`` reruns the units of a run whose every model step failed. Their failed
replies are in the LLM cache, so a plain rerun would replay the same bad answers; the
retried units' calls must reach the model again (and their new answers replace the cached
ones), while every other call keeps using the cache. The executor runs each retried unit
inside :func:`fresh_calls`, and the cache (``silicolab.llm.cache``) asks
:func:`wants_fresh` before it answers.

A context variable rather than a flag on each request, because the calls are made deep
inside a unit (agents, structured-output repairs, surveys) that knows nothing about
retries; it follows the unit into the tasks it starts and into ``asyncio.to_thread``.
It lives in ``core`` because the executors (``runtime``) set it and the cache (``llm``)
reads it, and those two packages do not import each other.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_FRESH: ContextVar[bool] = ContextVar("silicolab_fresh_calls", default=False)


@contextlib.contextmanager
def fresh_calls(on: bool = True) -> Iterator[None]:
    """Within the block (and the tasks and threads it starts), model calls skip the cache
    lookup when ``on``; their answers are still stored."""
    token = _FRESH.set(on)
    try:
        yield
    finally:
        _FRESH.reset(token)


def wants_fresh() -> bool:
    """Whether the current call must reach the model instead of the cache."""
    return _FRESH.get()


__all__ = ["fresh_calls", "wants_fresh"]
