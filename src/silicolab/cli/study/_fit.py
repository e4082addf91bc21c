"""``silicolab study fit``: refit a finished study's data without rerunning it.

The fit's JSON goes beside the run's record, or to ``--out``: a run can be a read-only
archive (shared, copied off a cluster, on a read-only mount), which is never written
into; without ``--out`` it is refused with one line naming the folder and the fix.
"""

from __future__ import annotations

from pathlib import Path

import typer

from silicolab.cli.study._run import _finished_study, _fit, _study_data
from silicolab.core.errors import InputError
from silicolab.core.files import can_create_in, dumps


def fit_command(
    run_dir: Path, *, interactions: bool, drop_capped: bool, outcome: str | None, json_out: bool,
    out: Path | None = None,
) -> None:  # fmt: skip
    """``study fit``: refit a study's data (with the stored ``--drop-capped`` and
    ``--aggregate-replicates``, plus ``drop_capped``), optionally for another measured
    column ``outcome``; writes fit[-OUTCOME][-interactions][-uncapped].json into the run,
    or to ``out`` (a file, or a folder to write that name into): the only way to refit a
    read-only run, which is refused with that fix before anything is fitted."""
    from silicolab.report import print_table
    from silicolab.report.study_report import PATH_COLUMNS, path_rows

    run, hypothesis, record = _finished_study(run_dir)
    drop = drop_capped or bool((record.get("options") or {}).get("drop_capped"))
    name = "fit" + (f"-{outcome}" if outcome else "") + ("-interactions" * interactions)
    name += "-uncapped" if drop else ""
    target = _fit_target(run.path, f"{name}.json", out)
    chosen = {"outcome": outcome} if outcome else {}
    fit = _fit(
        hypothesis, _study_data(run, hypothesis, record), json_out,
        interactions=interactions, drop_capped=drop, **chosen,
    )  # fmt: skip
    data = fit.to_dict()
    path = _write_fit(target, run.path, dumps(data) + "\n")
    which = "interactions" if interactions else "main"
    if json_out:
        typer.echo(dumps({"path": str(path), "outcome": outcome or hypothesis.outcome.name,
                          "paths": path_rows(data, which), "tests": data["tests"]}))  # fmt: skip
        return
    print_table(path_rows(data, which), PATH_COLUMNS, title=f"refit of {run.path.name}",
                footer=[f"written to {path}"])  # fmt: skip


def _fit_target(run_dir: Path, name: str, out: Path | None) -> Path:
    """Where ``study fit`` writes ``name``: ``out`` (a folder: ``out/name``), else the run
    directory, which must then be writable (a shared, read-only archive of a run is
    refused here, before the fit, naming ``--out``)."""
    if out is not None:
        return out / name if out.is_dir() else out
    if not can_create_in(run_dir):
        raise InputError(
            f"cannot write {name} into {run_dir}: the folder is not writable; pass --out FILE "
            "(or --out DIR) to write the fit elsewhere, or make the folder writable"
        )
    return run_dir / name


def _write_fit(target: Path, run_dir: Path, text: str) -> Path:
    """Write the fit's JSON to ``target`` atomically, or one line naming why not."""
    from silicolab.core.files import atomic_write_text

    try:
        return atomic_write_text(target, text)
    except OSError as exc:
        into_run = target.parent == run_dir
        fix = "pass --out FILE to write it elsewhere" if into_run else "pass another --out"
        raise InputError(f"cannot write {target} ({exc.strerror or exc}); {fix}") from None


__all__ = ["fit_command"]
