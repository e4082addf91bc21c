"""``sl.load_run(path)``: any finished run directory read back as its typed result.

The run's kind (``run.json``) says which result reads it: ``study`` and ``demo`` runs give a
:class:`~silicolab.api.study_result.StudyResult`, ``sim`` a ``SimResult``, ``discover`` a
``DiscoveryResult`` and ``bench-<suite>`` a ``BenchResult`` (an episode written by
``sl.run_episode(..., runs_dir=)`` is a one-episode ``bench-episodes`` run:
``EpisodeResult.from_run`` reads it as the episode). Each result module is imported only
when a run of its kind is read.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from silicolab.core.errors import InputError

#: Run kind -> (module of silicolab.api, result class) that reads it.
READERS: dict[str, tuple[str, str]] = {
    "study": ("study_result", "StudyResult"),
    "demo": ("study_result", "StudyResult"),
    "sim": ("sim", "SimResult"),
    "discover": ("discovery", "DiscoveryResult"),
    "replication": ("study_replicate", "ReplicationResult"),
}
#: Every benchmark suite's kind starts with this (``bench-causalab``, ``bench-discovery``...).
BENCH_PREFIX = "bench-"


def reader_of(kind: str) -> tuple[str, str] | None:
    """The (module, class) that reads runs of ``kind``, or None for an unknown kind."""
    if kind.startswith(BENCH_PREFIX):
        return ("bench", "BenchResult")
    return READERS.get(kind)


def load_run(path: str | Path) -> Any:
    """The result of the finished run in ``path`` (a folder holding ``run.json``), typed by
    the run's kind: the same object the matching ``sl.run_*`` call returned."""
    from silicolab.runs import Run

    run = Run.open(path)
    reader = reader_of(run.kind)
    if reader is None:
        raise InputError(
            f"{path} is a {run.kind!r} run, which no result reads; load_run reads the kinds "
            f"{', '.join([*READERS, BENCH_PREFIX + '<suite>'])}",
            params=("path",),
        )
    module, name = reader
    result = getattr(importlib.import_module(f"silicolab.api.{module}"), name)
    return result.from_run(Path(path))


__all__ = ["BENCH_PREFIX", "READERS", "load_run", "reader_of"]
