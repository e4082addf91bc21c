"""Run many units of work with bounded concurrency, a progress bar and resume.

``AsyncExecutor`` for LLM-bound coroutines, ``ProcessExecutor`` for CPU-bound functions,
``RayExecutor`` for either on a Ray cluster (optional extra ``silicolab[ray]``; Ray is
imported only when a batch starts); all return one :class:`UnitResult` per item in input
order and, given a :class:`silicolab.runs.Run`, skip the units already finished in it.
See ``docs/runs.md`` and ``docs/scale.md``.
"""

from typing import Any

from silicolab.runtime.base import Executor, UnitResult
from silicolab.runtime.choice import LOCAL, ExecutorChoice
from silicolab.runtime.executor import AsyncExecutor, ProcessExecutor
from silicolab.runtime.progress import ProgressBar


def __getattr__(name: str) -> Any:
    if name == "RayExecutor":  # lazy: the module is light, but keep imports explicit
        from silicolab.runtime.ray import RayExecutor

        return RayExecutor
    raise AttributeError(name)


__all__ = [
    "LOCAL",
    "AsyncExecutor",
    "Executor",
    "ExecutorChoice",
    "ProcessExecutor",
    "ProgressBar",
    "RayExecutor",
    "UnitResult",
]
