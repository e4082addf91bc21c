"""The flow the result-producing commands share: where runs go, a run opened only after
its inputs are checked (or resumed with its stored settings), and the result printed.

Every command prints either one JSON object (``--json``) or a readable summary; a run
whose units failed every step ends ``degraded``: its health line goes to stderr and the
command exits :data:`~silicolab.runs.DEGRADED_EXIT`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import typer

from silicolab.cli.resume_target import resume_target
from silicolab.core.config import load_settings
from silicolab.core.files import dumps

Job = TypeVar("Job")


def shown_run_dir(path: Path) -> Path:
    """A run directory as every command prints it, in its summary and as ``"run_dir"`` in
    ``--json``: resolved to an absolute path, so it can be pasted into a command (``silicolab
    view``, ``--resume``) from any folder and compared between commands as it is."""
    return Path(path).resolve()


def runs_root(runs_dir: Path | None, config: Path | None) -> Path:
    """Where run directories go: ``--runs-dir``, else the configured ``runs_dir``."""
    return runs_dir or Path(load_settings(config).runs_dir)


@dataclass(frozen=True)
class Opened(Generic[Job]):
    """A command's run with the settings and seed it runs with and its checked inputs."""

    run: Any
    settings: dict[str, Any]
    seed: Any
    job: Job


def open_checked_run(
    root: Path,
    kind: str,
    settings: dict[str, Any],
    *,
    seed: Any,
    resume: bool,
    explicit: Iterable[str],
    prepare: Callable[[dict[str, Any], Any], Job],
    slug: Callable[[Job], str],
    retry_failed: bool = False,
    failed: Callable[[Mapping[str, Any]], bool] | None = None,
) -> Opened[Job]:
    """Open the run of a resumable command. ``prepare(settings, seed)`` checks and loads
    every input: a new run directory is created only after it succeeded; ``--resume``
    reopens the latest unfinished ``kind`` run and prepares its stored settings (typed
    options that contradict them are refused by :func:`silicolab.runs.open_run`);
    ``--retry-failed`` (``retry_failed``) resumes and reruns the units that failed, as
    the rule ``failed`` decides from a unit's newest event (default: its stored health)."""
    from silicolab.runs import open_run
    from silicolab.runs.retry import unit_failed

    if resume or retry_failed:
        run, settings = open_run(
            root, kind, settings=settings, explicit=explicit, resume=resume_target(True), seed=seed,
            retry_failed=retry_failed, failed=failed or unit_failed,
        )  # fmt: skip
        seed = settings.pop("seed", seed)
        job = prepare(settings, seed)
    else:
        job = prepare(settings, seed)
        run, _ = open_run(root, kind, settings=settings, slug=slug(job), seed=seed)
    return Opened(run, settings, seed, job)


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


def write_html_report(run: Any) -> None:
    """Write the run's ``report.html`` (and its figures) as the last output of its
    ``with run:`` block, before the run's final status reaches ``run.json`` (the page
    shows the status the run holds in memory); every command that writes a run
    directory calls this. Drawing the page can never fail or lose the run: a problem is
    one warning line on stderr (``silicolab view RUN_DIR`` retries)."""
    from silicolab.report.html import write_report_safely

    if write_report_safely(run.path, info=run.info) is None:
        typer.echo(
            f"warning: report.html of {shown_run_dir(run.path)} was not written "
            f"(run 'silicolab view {shown_run_dir(run.path)}' to retry)",
            err=True,
        )


__all__ = ["Opened", "emit", "open_checked_run", "runs_root", "write_html_report"]
