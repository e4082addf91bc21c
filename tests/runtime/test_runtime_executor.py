"""AsyncExecutor and ProcessExecutor: ordering, concurrency, errors, resume, sync twin."""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest
import runtime_units

from silicolab.core.errors import InputError
from silicolab.runs import Run
from silicolab.runtime import AsyncExecutor, ProcessExecutor, UnitResult


async def test_results_follow_item_order_not_completion_order() -> None:
    async def slower_first(x: int) -> int:
        await asyncio.sleep(0.002 * (10 - x))
        return x * x

    results = await AsyncExecutor(10).amap(slower_first, range(10))

    assert [r.value for r in results] == [x * x for x in range(10)]
    assert [r.key for r in results] == [str(x) for x in range(10)]
    assert all(r.ok and not r.cached and r.elapsed_s > 0 for r in results)


async def test_at_most_concurrency_calls_are_in_flight() -> None:
    in_flight = peak = 0

    async def unit(x: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.005)
        in_flight -= 1
        return x

    await AsyncExecutor(3).amap(unit, range(20))
    assert peak == 3


async def test_plain_functions_work_too() -> None:
    results = await AsyncExecutor(2).amap(lambda x: x + 1, [1, 2])
    assert [r.value for r in results] == [2, 3]


async def test_empty_batch() -> None:
    assert await AsyncExecutor().amap(runtime_units.square, []) == []


async def test_raise_policy_cancels_the_rest_and_keeps_finished_units(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench")
    started: list[int] = []
    cancelled: list[int] = []

    async def unit(x: int) -> int:
        started.append(x)
        try:
            await asyncio.sleep(0.2 if x == 1 else 0.01)
        except asyncio.CancelledError:
            cancelled.append(x)
            raise
        if x == 2:
            raise ValueError("unit 2 is bad")
        return x

    with pytest.raises(ValueError, match="unit 2 is bad"):
        await AsyncExecutor(2).amap(unit, range(10), run=run)

    assert started == [0, 1, 2]  # nothing new starts after the failure
    assert cancelled == [1]  # the slow unit in flight was cancelled
    events = [(e["unit"], e["status"]) for e in run.events()]
    assert events == [("0", "ok"), ("2", "error")]
    assert run.events()[1]["data"] == {"error": "ValueError: unit 2 is bad"}


async def test_record_policy_returns_errors_and_resume_retries_them(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench")
    calls: list[int] = []
    broken = {3, 5}

    async def unit(x: int) -> int:
        calls.append(x)
        if x in broken:
            raise KeyError(x)
        return x * 10

    results = await AsyncExecutor(4).amap(unit, range(8), run=run, on_error="record")

    assert [r.error for r in results if not r.ok] == ["KeyError: 3", "KeyError: 5"]
    assert [r.value for r in results] == [0, 10, 20, None, 40, None, 60, 70]
    assert run.finished_units() == {"0", "1", "2", "4", "6", "7"}

    broken.clear()
    calls.clear()
    retried = await AsyncExecutor(4).amap(unit, range(8), run=run, on_error="record")
    assert sorted(calls) == [3, 5]
    assert [r.value for r in retried] == [x * 10 for x in range(8)]
    assert [r.cached for r in retried] == [x not in (3, 5) for x in range(8)]


async def test_resume_skips_finished_units_and_restores_values(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench")
    calls: list[str] = []

    async def unit(name: str) -> dict[str, object]:
        calls.append(name)
        return {"name": name, "length": len(name)}

    names = ["alpha", "beta", "gamma", "delta"]
    await AsyncExecutor(2).amap(unit, names[:2], key=str.upper, run=run)
    calls.clear()

    results = await AsyncExecutor(2).amap(unit, names, key=str.upper, run=Run.open(run.path))

    assert calls == ["gamma", "delta"]
    assert [r.key for r in results] == ["ALPHA", "BETA", "GAMMA", "DELTA"]
    assert [r.value for r in results] == [{"name": n, "length": len(n)} for n in names]
    assert [r.cached for r in results] == [True, True, False, False]
    assert results[0] == UnitResult(key="ALPHA", value=results[0].value, cached=True)
    assert Counter(e["unit"] for e in run.events()) == Counter(["ALPHA", "BETA", "GAMMA", "DELTA"])


async def test_custom_event_conversion_round_trips(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench")

    async def pair(x: int) -> tuple[int, int]:
        return (x, -x)

    options = {
        "run": run,
        "to_event": lambda value: {"pair": list(value)},
        "from_event": lambda data: tuple(data["pair"]),
    }
    await AsyncExecutor().amap(pair, [1, 2], **options)
    assert run.events()[0]["data"] == {"pair": [1, -1]}

    results = await AsyncExecutor().amap(pair, [1, 2, 3], **options)
    assert [r.value for r in results] == [(1, -1), (2, -2), (3, -3)]
    assert [r.cached for r in results] == [True, True, False]


async def test_restoring_with_the_wrong_from_event_is_explained(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench")
    run.append_event("1", {"pair": [1, -1]})
    with pytest.raises(InputError, match="from_event"):
        await AsyncExecutor().amap(runtime_units.square, [1], run=run)


async def test_duplicate_keys_are_rejected_before_anything_runs() -> None:
    calls: list[int] = []

    async def unit(x: int) -> int:
        calls.append(x)
        return x

    with pytest.raises(InputError, match=r"duplicate unit keys \['even', 'odd'\]"):
        await AsyncExecutor().amap(unit, range(6), key=lambda x: "even" if x % 2 == 0 else "odd")
    assert calls == []


@pytest.mark.parametrize(
    ("make", "options", "message"),
    [
        (lambda: AsyncExecutor(0), {}, "concurrency"),
        (lambda: AsyncExecutor(2), {"on_error": "ignore"}, "on_error"),
        (lambda: AsyncExecutor(2), {"key": lambda x: x}, "key="),
    ],
)
async def test_bad_arguments_are_input_errors(make, options, message) -> None:
    with pytest.raises(InputError, match=message):
        await make().amap(runtime_units.square, [1, 2], **options)


def test_sync_map_runs_without_a_loop() -> None:
    async def double(x: int) -> int:
        return 2 * x

    assert [r.value for r in AsyncExecutor(2).map(double, [1, 2, 3])] == [2, 4, 6]


async def test_sync_map_inside_a_running_loop_runs_the_batch() -> None:
    """As in a Jupyter cell: the batch runs in its own loop on a worker thread."""
    results = AsyncExecutor(2).map(runtime_units.square, [1, 2, 3])
    assert [r.value for r in results] == [1, 4, 9]


async def test_cancellation_leaves_a_consistent_event_file(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench")

    async def unit(x: int) -> int:
        await asyncio.sleep(0.01)
        return x * 3

    batch = asyncio.create_task(AsyncExecutor(3).amap(unit, range(60), run=run))
    while len(run.events()) < 5:
        await asyncio.sleep(0.005)
    batch.cancel()
    with pytest.raises(asyncio.CancelledError):
        await batch

    lines = run.events_path.read_text().splitlines()
    events = run.events()
    assert len(events) == len(lines) < 60  # every line is a whole event
    assert all(e["status"] == "ok" and e["data"]["value"] == int(e["unit"]) * 3 for e in events)

    results = await AsyncExecutor(3).amap(unit, range(60), run=Run.open(run.path))
    assert sum(r.cached for r in results) == len(events)
    assert Counter(e["unit"] for e in run.events()) == Counter(str(x) for x in range(60))


def test_process_executor_uses_real_worker_processes(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench")
    results = ProcessExecutor(2).map(runtime_units.pid_of, range(8), run=run)

    pids = {r.value for r in results}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2
    assert [r.key for r in results] == [str(x) for x in range(8)]
    assert run.finished_units() == {str(x) for x in range(8)}


def test_process_executor_records_errors_and_resumes(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench")
    px = ProcessExecutor(2)

    results = px.map(runtime_units.fail_on_three, range(6), run=run, on_error="record")
    assert [r.value for r in results] == [0, 10, 20, None, 40, 50]
    assert results[3].error == "ValueError: unit 3 is bad"

    again = px.map(runtime_units.square, range(6), run=run, on_error="record")
    assert [r.value for r in again] == [0, 10, 20, 9, 40, 50]  # only unit 3 reran
    assert [r.cached for r in again] == [True, True, True, False, True, True]

    with pytest.raises(ValueError, match="unit 3 is bad"):
        px.map(runtime_units.fail_on_three, range(6))


def test_a_crashed_worker_stops_the_batch_even_when_recording_errors() -> None:
    with pytest.raises(BrokenProcessPool):
        ProcessExecutor(2).map(runtime_units.die, range(4), on_error="record")


async def test_process_amap_does_not_block_the_event_loop() -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    clock = asyncio.create_task(ticker())
    try:
        results = await ProcessExecutor(2).amap(runtime_units.sleep_then_square, range(4))
    finally:
        clock.cancel()
    assert [r.value for r in results] == [0, 1, 4, 9]
    assert ticks >= 10  # the loop kept running through ~0.2 s of work in the workers


async def test_one_process_executor_runs_two_batches_at_once() -> None:
    px = ProcessExecutor(2)
    first, second = await asyncio.gather(
        px.amap(runtime_units.square, range(5)),
        px.amap(runtime_units.fail_on_three, range(5), on_error="record"),
    )
    assert [r.value for r in first] == [0, 1, 4, 9, 16]
    assert [r.value for r in second] == [0, 10, 20, None, 40]
