"""Top-level unit functions for ProcessExecutor tests (a process pool pickles functions
by reference, so they must live in an importable module)."""

from __future__ import annotations

import os
import time


def square(x: int) -> int:
    return x * x


def pid_of(x: int) -> int:
    time.sleep(0.02)  # long enough that several workers take part
    return os.getpid()


def fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError(f"unit {x} is bad")
    return x * 10


def sleep_then_square(x: int) -> int:
    time.sleep(0.1)
    return x * x


def die(x: int) -> int:
    os._exit(13)  # a worker crash (segfault, OOM kill) rather than an exception
