"""Run directories: where a batch of work keeps its config, its finished units (for
``--resume``), its final record and its report. See :class:`Run`, :func:`open_run` (the
resume rule every command follows), :class:`RunHealth` (degraded runs) and ``docs/runs.md``."""

from silicolab.runs.health import DEGRADED_EXIT, RunHealth, UnitHealth
from silicolab.runs.lock import RunLocked
from silicolab.runs.resume import NothingFailed, check_root, open_run
from silicolab.runs.run_dir import STATUSES, Run

__all__ = [
    "DEGRADED_EXIT",
    "STATUSES",
    "NothingFailed",
    "Run",
    "RunHealth",
    "RunLocked",
    "UnitHealth",
    "check_root",
    "open_run",
]
