"""How fast the command line answers: ``silicolab --help`` and ``silicolab models``.

Prints the median wall time of several runs of each as a fresh process (the target for
``--help`` is under 0.5 s: heavy libraries are imported inside the commands that use them).
Run: ``.venv/bin/python benchmarks/bench_cli.py``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def time_command(args: list[str], runs: int = 7) -> float:
    """Median seconds for ``python -m silicolab.cli.app *args`` as a new process."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "silicolab.cli.app", *args], check=True, capture_output=True
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    bare = time.perf_counter() - start
    for args in (["--help"], ["models", "--json"]):
        seconds = time_command(args)
        print(f"silicolab {' '.join(args):<16} {seconds:.3f} s  (bare interpreter {bare:.3f} s)")


if __name__ == "__main__":
    main()
