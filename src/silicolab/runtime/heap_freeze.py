"""Keep CPython's cyclic garbage collector off the long-lived heap while a batch runs.

Why: a full (generation-2) collection walks every tracked container object, and while it
walks, the event loop stands still. In a process that has imported the analysis' libraries
(scipy, statsmodels, pandas, matplotlib) and holds a batch's results, one walk took
120-250 ms, and CPython started one every 5-8 s of a replication; each stopped ~190 LLM
calls in flight for that long (their responses waited unread), which cost ~1 s of a 41 s
unit phase (decision 0031). :func:`gc.freeze` moves every tracked object to the permanent
generation, which collections skip; objects that die by reference counting, almost all of
them, are freed as before.

:func:`heap_frozen` freezes the heap when a batch starts and again every ``refreeze_s``
(what the batch keeps, its results, then stops being walked too), so a full collection
walks only what was made since the last freeze. What it cannot do alone is free cyclic
garbage that was frozen (a unit's reference cycles that were still alive at a freeze):
measured, about one object per two units. To keep memory bounded on batches of hours, every
``release_s`` the heap is unfrozen and collected once (one full walk, like CPython's own,
but once a minute instead of every few seconds), and at the end of the last batch it is
unfrozen. A process whose heap was already frozen by someone else, or whose collector is
disabled, is left exactly as it is.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

#: How often the heap is frozen again during a batch (seconds).
REFREEZE_S = 2.0
#: How often frozen cyclic garbage is given back, with one full collection (seconds).
RELEASE_S = 60.0

_lock = threading.Lock()
_batches = 0  # batches inside heap_frozen, in any thread
_owned = False  # whether those batches froze the heap (not someone else)
_released_at = 0.0  # time.monotonic() of the last full collection of frozen objects


@asynccontextmanager
async def heap_frozen(
    *, refreeze_s: float = REFREEZE_S, release_s: float = RELEASE_S
) -> AsyncIterator[bool]:
    """Freeze the garbage collector's heap for the duration of a batch on the running loop.

    Yields whether this process's heap is managed here (``False``: the collector is
    disabled or another part of the process froze the heap first, and nothing is touched).
    Batches may overlap and nest, in one thread or several: the heap is unfrozen when the
    last of them ends.
    """
    owned = _enter()
    handle: asyncio.TimerHandle | None = None
    loop = asyncio.get_running_loop()

    def tick() -> None:
        nonlocal handle
        _refreeze(release_s)
        handle = loop.call_later(refreeze_s, tick)

    if owned:
        handle = loop.call_later(refreeze_s, tick)
    try:
        yield owned
    finally:
        if handle is not None:
            handle.cancel()
        _exit()


def _enter() -> bool:
    global _batches, _owned, _released_at
    with _lock:
        if _batches == 0:
            _owned = gc.isenabled() and gc.get_freeze_count() == 0
            if _owned:
                gc.freeze()
                _released_at = time.monotonic()
        _batches += 1
        return _owned


def _refreeze(release_s: float) -> None:
    global _released_at
    with _lock:
        if not _owned:
            return
        if time.monotonic() - _released_at >= release_s:
            gc.unfreeze()
            gc.collect()  # frozen cyclic garbage is freed here, once per release_s
            _released_at = time.monotonic()
        gc.freeze()


def _exit() -> None:
    global _batches, _owned
    with _lock:
        _batches -= 1
        if _batches == 0 and _owned:
            _owned = False
            gc.unfreeze()  # no collection here: CPython's next one frees what is garbage
