"""Units of work for the Ray tests, shipped to workers by value (see conftest)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any


def _die_once(marker: Path) -> None:
    """Kill this worker process the first time ``marker`` is seen (a crash mid-unit)."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.close(fd)
    os.kill(os.getpid(), signal.SIGKILL)


def square_or_die(item: tuple[int, str]) -> dict[str, Any]:
    """``n * n`` with the worker's pid; unit 3 kills its worker on the first attempt."""
    n, marker = item
    if n == 3:
        _die_once(Path(marker))
    return {"n": n, "square": n * n, "pid": os.getpid()}


async def async_square_or_die(item: tuple[int, str]) -> dict[str, Any]:
    """The coroutine twin: runs on a unit runner, which unit 3 kills once."""
    n, marker = item
    await asyncio.sleep(0.05)
    if n == 3:
        _die_once(Path(marker))
    return {"n": n, "square": n * n, "pid": os.getpid()}


async def ask_or_die(item: tuple[int, str], model: Any) -> dict[str, Any]:
    """One LLM call; unit 3 kills its unit runner once while its call holds a slot."""
    n, marker = item
    call = asyncio.ensure_future(model.agenerate(f"question {n}", tag="unit"))
    if n == 3:
        await asyncio.sleep(0.15)  # the call is on the wire, its slot held
        _die_once(Path(marker))
    return {"n": n, "text": (await call).text, "pid": os.getpid()}


async def fail_on_two(item: int) -> int:
    """A coroutine unit whose own error (unit 2) must reach the driver as it was raised."""
    await asyncio.sleep(0.01 * item)
    if item == 2:
        raise KeyError(f"no unit {item}")
    return item


def timed_nap(item: int) -> tuple[float, float]:
    """Sleep 0.15 s; the wall-clock start and end (to count units running at once)."""
    import time

    start = time.time()
    time.sleep(0.15)
    return start, time.time()


def busy_on_node(item: int) -> str:
    """Keep a CPU busy for 8 ms (a small CPU-bound unit); the id of the node it ran on."""
    import time

    import ray

    end = time.perf_counter() + 0.008
    while time.perf_counter() < end:
        pass
    return str(ray.get_runtime_context().get_node_id())
