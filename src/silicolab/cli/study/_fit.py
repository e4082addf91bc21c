"""``silicolab study fit``: refit a finished study's data without rerunning it
(:func:`silicolab.api.study_after.refit`), and print the paths.

The fit's JSON goes beside the run's record, or to ``--out``: a run can be a read-only
archive (shared, copied off a cluster, on a read-only mount), which is never written
into; without ``--out`` it is refused with one line naming the folder and the fix.
"""

from __future__ import annotations

from pathlib import Path

import typer

from silicolab.cli.study._run import degraded_if_not_estimable
from silicolab.core.files import dumps


def fit_command(
    run_dir: Path, *, interactions: bool, drop_capped: bool, outcome: str | None, json_out: bool,
    out: Path | None = None,
) -> None:  # fmt: skip
    """``study fit``: the refit (see :func:`~silicolab.api.study_after.refit`), then its
    paths as a table or, with ``--json``, one object."""
    from silicolab.api.study_after import refit
    from silicolab.report import print_table
    from silicolab.report.study_report import PATH_COLUMNS, path_rows

    with degraded_if_not_estimable(json_out):
        done = refit(run_dir, interactions=interactions, drop_capped=drop_capped,
                     outcome=outcome, out=out)  # fmt: skip
    rows = path_rows(done.data, done.which)
    if json_out:
        typer.echo(dumps({"path": str(done.path), "outcome": done.outcome, "paths": rows,
                          "tests": done.data["tests"]}))  # fmt: skip
        return
    print_table(rows, PATH_COLUMNS, title=f"refit of {Path(run_dir).name}",
                footer=[f"written to {done.path}"])  # fmt: skip


__all__ = ["fit_command"]
