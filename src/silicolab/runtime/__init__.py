"""Run many units of work with bounded concurrency, a progress bar and resume.

``AsyncExecutor`` for LLM-bound coroutines, ``ProcessExecutor`` for CPU-bound functions;
both return one :class:`UnitResult` per item in input order and, given a
:class:`silicolab.runs.Run`, skip the units already finished in it. See ``docs/runs.md``.
"""

from silicolab.runtime.base import Executor, UnitResult
from silicolab.runtime.executor import AsyncExecutor, ProcessExecutor
from silicolab.runtime.progress import ProgressBar

__all__ = ["AsyncExecutor", "Executor", "ProcessExecutor", "ProgressBar", "UnitResult"]
