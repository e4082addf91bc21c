"""The garbage collector's heap is frozen during a batch, released on schedule, and left
alone when it is not ours (silicolab.runtime.heap_freeze)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from silicolab.runtime import AsyncExecutor
from silicolab.runtime.heap_freeze import heap_frozen


class _Node:
    """A container that can be put in a reference cycle and watched by a weak reference."""

    def __init__(self) -> None:
        self.other: _Node | None = None


def _cycle() -> weakref.ref[_Node]:
    """A two-node reference cycle nobody references: garbage only the collector frees."""
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


@pytest.fixture(autouse=True)
def _clean_gc() -> Iterator[None]:
    """Each test starts and ends with an unfrozen, enabled collector."""
    gc.unfreeze()
    gc.enable()
    yield
    gc.unfreeze()
    gc.enable()


def test_the_heap_is_frozen_during_a_batch_and_unfrozen_after() -> None:
    async def main() -> tuple[bool, int, bool]:
        async with heap_frozen() as owned:
            inside = gc.get_freeze_count()
            fresh = _cycle()  # made after the freeze: collected as usual
            gc.collect()
            fresh_collected = fresh() is None
        return owned, inside, fresh_collected

    before = _cycle()  # garbage made before the batch is frozen with everything else
    owned, inside, fresh_collected = asyncio.run(main())
    assert owned and inside > 0
    assert fresh_collected
    assert before() is not None  # frozen: the full collection inside did not reach it
    assert gc.get_freeze_count() == 0
    gc.collect()  # the first collection after the batch frees it
    assert before() is None


def test_garbage_made_and_frozen_in_a_long_batch_is_given_back_on_schedule() -> None:
    async def main() -> tuple[bool, bool, bool]:
        async with heap_frozen(refreeze_s=0.02, release_s=0.15):
            ref = _cycle()
            await asyncio.sleep(0.05)  # refrozen at least once: the cycle is frozen now
            gc.collect()
            frozen_alive = ref() is not None
            await asyncio.sleep(0.3)  # a release came: unfrozen and collected
            released = ref() is None
            still_frozen = gc.get_freeze_count() > 0  # and frozen again after it
        return frozen_alive, released, still_frozen

    frozen_alive, released, still_frozen = asyncio.run(main())
    assert frozen_alive, "the refreeze did not freeze what the batch made"
    assert released, "frozen cyclic garbage was not given back during the batch"
    assert still_frozen


def test_a_heap_someone_else_froze_is_left_as_it_is() -> None:
    before = _cycle()
    gc.freeze()  # someone else's freeze, before the batch
    theirs = gc.get_freeze_count()

    async def main() -> tuple[bool, bool]:
        async with heap_frozen(refreeze_s=0.01, release_s=0.0) as owned:
            await asyncio.sleep(0.05)  # ticks would have come by now, had we owned the heap
            made = _cycle()
            await asyncio.sleep(0.05)
            gc.collect()
        return owned, made() is None

    owned, collected_inside = asyncio.run(main())
    assert owned is False
    assert collected_inside  # never refrozen: what the batch made was collected as usual
    # never released (unfrozen and collected): their frozen objects are still frozen (the
    # count only falls by what reference counting freed meanwhile)
    assert before() is not None
    assert 0 < gc.get_freeze_count() <= theirs


def test_a_disabled_collector_is_left_disabled_and_unfrozen() -> None:
    gc.disable()

    async def main() -> bool:
        async with heap_frozen() as owned:
            assert gc.get_freeze_count() == 0
        return owned

    assert asyncio.run(main()) is False
    assert not gc.isenabled()


def test_overlapping_batches_unfreeze_when_the_last_one_ends() -> None:
    async def inner(done: asyncio.Event) -> None:
        async with heap_frozen():
            await done.wait()

    async def main() -> tuple[int, int]:
        done = asyncio.Event()
        async with heap_frozen():
            task = asyncio.create_task(inner(done))
            await asyncio.sleep(0)
        after_outer = gc.get_freeze_count()  # the inner batch is still running
        done.set()
        await task
        return after_outer, gc.get_freeze_count()

    after_outer, after_both = asyncio.run(main())
    assert after_outer > 0
    assert after_both == 0


def test_an_executor_batch_runs_its_units_on_a_frozen_heap() -> None:
    async def unit(item: int) -> int:
        await asyncio.sleep(0)
        return gc.get_freeze_count()

    results = AsyncExecutor(4, progress=False).map(unit, range(8))
    assert all(r.value > 0 for r in results)
    assert gc.get_freeze_count() == 0
