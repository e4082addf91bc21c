"""Import the analysis libraries in the background while a batch's units run.

A study or replication spends its unit phase waiting on model calls, with the CPU mostly
idle; what comes after (the fits, the meta-analysis, the report's page and figures) first
imports SciPy's statistics, statsmodels, matplotlib and jinja2: one to two seconds of a
process's time, paid at the end of every run in a new process. :func:`preloading` imports
them in a daemon thread while the block runs, so the analysis finds them loaded.

Importing from two threads is safe in Python: each module has its own import lock, and a
thread that needs a module another thread is importing waits for it. The block's end
joins the thread, so it never outlives the work (nor imports while the interpreter shuts
down). A module that fails to import is left for the code that needs it to report.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

#: What a study's analysis and report import on first use (the modules the fits,
#: ``statsmodels``' meta-analysis and the figures need).
ANALYSIS_MODULES = (
    "scipy.stats",
    "statsmodels.regression.linear_model",
    "statsmodels.stats.meta_analysis",
    "statsmodels.stats.anova",
    "statsmodels.formula.api",
    "matplotlib.figure",
    "matplotlib.backends.backend_agg",
    "matplotlib.backends.backend_svg",
)


class Preload:
    """Modules being imported in a daemon thread; :meth:`wait` joins it."""

    def __init__(self, modules: Iterable[str]) -> None:
        self.modules = tuple(modules)
        self.failed: dict[str, str] = {}
        self._thread = threading.Thread(target=self._run, name="silicolab-preload", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for name in self.modules:
            try:
                importlib.import_module(name)
            except Exception as exc:  # the analysis will raise it where it matters
                self.failed[name] = f"{type(exc).__name__}: {exc}"

    def wait(self) -> None:
        """Block until every module is imported (or failed to import)."""
        self._thread.join()


@contextmanager
def preloading(modules: Iterable[str] = ANALYSIS_MODULES) -> Iterator[Preload]:
    """Import ``modules`` in the background while the block runs; joined at its end."""
    loading = Preload(modules)
    try:
        yield loading
    finally:
        loading.wait()


__all__ = ["ANALYSIS_MODULES", "Preload", "preloading"]
