"""A batch run in its own process, for the kill-and-resume test.

Usage: ``python kill_worker.py RUN_DIR EXEC_LOG N_UNITS SLEEP_S {async|process}``

Runs N units ``u00``…; each unit appends its key to EXEC_LOG (to count executions),
sleeps, and returns ``{"double": 2 * i}``. Prints a JSON summary when it completes.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from silicolab.cli import signals
from silicolab.runs import Run
from silicolab.runtime import AsyncExecutor, ProcessExecutor


def _log_execution(log: str, key: str) -> None:
    with open(log, "a", encoding="utf-8") as handle:  # one short append: never interleaved
        handle.write(key + "\n")


def cpu_unit(job: tuple[str, str, float]) -> dict[str, int]:
    log, key, sleep_s = job
    _log_execution(log, key)
    time.sleep(sleep_s)
    return {"double": 2 * int(key[1:])}


async def async_unit(job: tuple[str, str, float]) -> dict[str, int]:
    log, key, sleep_s = job
    _log_execution(log, key)
    await asyncio.sleep(sleep_s)
    return {"double": 2 * int(key[1:])}


def main() -> None:
    run_dir, log, n_units, sleep_s, mode = sys.argv[1:6]
    jobs = [(log, f"u{i:02d}", float(sleep_s)) for i in range(int(n_units))]
    if mode == "process":
        executor, fn = ProcessExecutor(4, progress=False), cpu_unit
    else:
        executor, fn = AsyncExecutor(4, progress=False), async_unit
    signals.install()  # SIGTERM ends the run "interrupted", as in the command line
    try:
        with Run.open(run_dir) as run:
            results = executor.map(fn, jobs, key=lambda job: job[1], run=run)
    except KeyboardInterrupt as exc:
        sys.exit(signals.exit_code(exc))
    print(
        json.dumps(
            {
                "cached": sorted(r.key for r in results if r.cached),
                "values": {r.key: r.value for r in results},
            }
        )
    )


if __name__ == "__main__":
    main()
