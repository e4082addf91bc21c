"""Overhead of the executors per unit of work (prints figures; asserts nothing).

    .venv/bin/python benchmarks/bench_runtime.py [--units 10000]

Measures trivial units so that only the executor's own cost shows: scheduling, result
bookkeeping, the progress bar, and — with a run directory — each unit's event, durable
before the unit counts as done (the events of units that finish together share one write
and one fsync; the price of losing nothing on a kill, which depends mostly on the disk).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from silicolab.runs import Run
from silicolab.runtime import AsyncExecutor, ProcessExecutor


async def trivial(x: int) -> int:
    return x


async def yielding(x: int) -> int:
    await asyncio.sleep(0)  # suspends once, like any real I/O-bound unit
    return x


async def gather_baseline(items: list[int], concurrency: int) -> list[int]:
    """The bare minimum: asyncio.gather bounded by a semaphore, no bookkeeping."""
    gate = asyncio.Semaphore(concurrency)

    async def one(x: int) -> int:
        async with gate:
            return await yielding(x)

    return await asyncio.gather(*(one(x) for x in items))


def cpu_trivial(x: int) -> int:
    return x


def measure(label: str, units: int, batch: Callable[[], object]) -> float:
    start = time.perf_counter()
    batch()
    elapsed = time.perf_counter() - start
    print(f"{label:<52} {units:>6} units  {elapsed:7.3f} s  {1e6 * elapsed / units:8.1f} µs/unit")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--process-units", type=int, default=2_000)
    args = parser.parse_args()
    n = args.units
    items = list(range(n))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        plain = [asyncio.run(trivial(i)) for i in range(10)]  # warm up asyncio
        assert plain == list(range(10))
        measure(
            "AsyncExecutor(8), no run dir, no progress",
            n,
            lambda: AsyncExecutor(8, progress=False).map(trivial, items),
        )
        measure(
            "baseline: asyncio.gather + Semaphore(8), yielding units",
            n,
            lambda: asyncio.run(gather_baseline(items, 8)),
        )
        measure(
            "AsyncExecutor(8), yielding units, no run dir",
            n,
            lambda: AsyncExecutor(8, progress=False).map(yielding, items),
        )
        measure(
            "AsyncExecutor(64), no run dir, no progress",
            n,
            lambda: AsyncExecutor(64, progress=False).map(trivial, items),
        )
        with open(os.devnull, "w") as devnull:
            real_stderr, sys.stderr = sys.stderr, devnull
            try:
                measure(
                    "AsyncExecutor(8), no run dir, progress bar on",
                    n,
                    lambda: AsyncExecutor(8, progress=True).map(trivial, items),
                )
            finally:
                sys.stderr = real_stderr
        run = Run.create(root, kind="bench", slug="overhead")
        measure(
            "AsyncExecutor(8), run dir (events fsynced, grouped)",
            n,
            lambda: AsyncExecutor(8, progress=False).map(trivial, items, run=run),
        )
        measure(
            "AsyncExecutor(8), resume: all units restored",
            n,
            lambda: AsyncExecutor(8, progress=False).map(trivial, items, run=Run.open(run.path)),
        )

        m = args.process_units
        measure(
            "ProcessExecutor(2), no run dir (incl. pool start)",
            m,
            lambda: ProcessExecutor(2, progress=False).map(cpu_trivial, range(m)),
        )
        run2 = Run.create(root, kind="bench", slug="process")
        measure(
            "ProcessExecutor(2), run dir",
            m,
            lambda: ProcessExecutor(2, progress=False).map(cpu_trivial, range(m), run=run2),
        )


if __name__ == "__main__":
    main()
