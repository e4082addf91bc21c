"""How the result-producing commands print: one JSON object (``--json``) or a readable
summary; a run whose units failed every step ends ``degraded``: its health line goes to
stderr and the command exits :data:`~silicolab.runs.DEGRADED_EXIT`.

Where runs go, how a run directory is shown and its ``report.html`` are the facades' (one
definition, :mod:`silicolab.api.run_flow`), re-exported here for the commands.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import typer

from silicolab.api.run_flow import runs_root, shown_run_dir, write_html_report
from silicolab.core.files import dumps


def emit(
    out: Mapping[str, Any], *, json_out: bool, show: Callable[[], None], status: str, health: Any
) -> None:
    """Print a finished run's result: ``out`` as one JSON object with ``--json``, else the
    readable summary ``show()`` prints; then a degraded run's health line on stderr and
    exit :data:`~silicolab.runs.DEGRADED_EXIT`."""
    from silicolab.runs import DEGRADED_EXIT

    if json_out:
        typer.echo(dumps(out))
    else:
        show()
    if status == "degraded":
        typer.echo(health.summary_line(), err=True)
        raise typer.Exit(DEGRADED_EXIT)


__all__ = ["emit", "runs_root", "shown_run_dir", "write_html_report"]
