"""``silicolab study discover RUN_DIR --method ges|pc``: causal discovery on a finished
study's own data against its hypothesized graph (:mod:`silicolab.api.study_discover`),
printed as an edge table and the metrics, or one JSON object."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from silicolab.core.files import dumps

EDGE_COLUMNS = (
    ("edge", "edge"),
    ("status", "in"),
    ("found", "found as"),
    ("direction", "direction"),
)


def discover_study_command(run_dir: Path, *, method: str, json_out: bool) -> dict[str, Any]:
    """``study discover``: :func:`~silicolab.api.study_discover.discover_in_study`, then
    the edge table (or, with ``json_out``, the summary as one JSON object); returns the
    summary."""
    from silicolab.api.study_discover import discover_in_study

    summary = discover_in_study(run_dir, method)
    if json_out:
        typer.echo(dumps(summary))
    else:
        _print(summary)
    return summary


def _print(summary: dict[str, Any]) -> None:
    from silicolab.report import print_lines, print_table

    m = summary["metrics"]
    print_table(
        summary["edges"],
        EDGE_COLUMNS,
        title=f"{summary['method']} on {summary['study']}: hypothesized vs found edges",
    )
    print_lines(
        [
            f"{summary['rows']} rows, variables: {', '.join(summary['variables'])}",
            f"SHD {m['shd']} (between equivalence classes: {m['shd_cpdag']}); edge "
            f"precision {m['precision']:.3f}, recall {m['recall']:.3f}, F1 {m['f1']:.3f}",
            *(f"note: {n}" for n in summary["notes"]),
            f"written to {summary['path']}",
        ]
    )


__all__ = ["discover_study_command"]
