"""Run directories: where a batch of work keeps its config, its finished units (for
``--resume``), its final record and its report. See :class:`Run` and ``docs/runs.md``."""

from silicolab.runs.run_dir import STATUSES, Run

__all__ = ["STATUSES", "Run"]
