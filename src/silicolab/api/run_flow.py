"""The run flow every facade shares: where runs go, how a run directory is shown, a run
opened only after its inputs are checked (or resumed with its stored settings), its
``report.html``, and a finished run read back.

``resume`` is a value here (``True`` for the newest unfinished run, or a run directory);
nothing is printed but a warning on stderr. The command line's :mod:`silicolab.cli.flow`
adds only the printing (``emit``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from silicolab.core.config import load_settings

Job = TypeVar("Job")

#: What ``resume=`` accepts: ``None``/``False`` (a new run), ``True`` (the newest
#: unfinished run of the kind) or the path of a run directory.
Resume = bool | str | Path | None


def shown_run_dir(path: Path) -> Path:
    """A run directory as results hold it and every command prints it (in its summary and
    as ``"run_dir"`` in ``--json``): absolute, so it can be pasted into a command
    (``silicolab view``, ``--resume``) from any folder and compared as it is."""
    return Path(path).resolve()


def runs_root(runs_dir: str | Path | None, config: str | Path | None) -> Path:
    """Where run directories go: ``runs_dir``, else the configured ``runs_dir`` (default
    ``runs`` under the current folder), as the command line does."""
    if runs_dir is not None:
        return Path(runs_dir)
    return Path(load_settings(None if config is None else Path(config)).runs_dir)


def explicit_of(given: Mapping[str, Any], defaults: Mapping[str, Any]) -> set[str]:
    """The names in ``given`` whose value differs from its default: the options a Python
    caller chose, which on a resume must agree with the stored settings."""
    return {name for name, value in given.items() if value != defaults.get(name)}


@dataclass(frozen=True)
class Opened(Generic[Job]):
    """A run with the settings and seed it runs with and its checked inputs."""

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
    resume: Resume,
    explicit: Iterable[str],
    prepare: Callable[[dict[str, Any], Any], Job],
    slug: Callable[[Job], str],
    retry_failed: bool = False,
    failed: Callable[[Mapping[str, Any]], bool] | None = None,
) -> Opened[Job]:
    """Open a run. ``prepare(settings, seed)`` checks and loads every input: a new run
    directory is created only after it succeeded. ``resume`` (``True`` or a run
    directory) reopens that unfinished ``kind`` run and prepares its stored settings
    (``explicit`` options that contradict them are refused by
    :func:`silicolab.runs.open_run`); ``retry_failed`` resumes and reruns the units the
    rule ``failed`` says failed."""
    from silicolab.runs import open_run
    from silicolab.runs.retry import unit_failed

    if resume or retry_failed:
        target = resume if isinstance(resume, str | Path) else True
        run, settings = open_run(
            root, kind, settings=settings, explicit=explicit, resume=target, seed=seed,
            retry_failed=retry_failed, failed=failed or unit_failed,
        )  # fmt: skip
        seed = settings.pop("seed", seed)
        job = prepare(settings, seed)
    else:
        job = prepare(settings, seed)
        run, _ = open_run(root, kind, settings=settings, slug=slug(job), seed=seed)
    return Opened(run, settings, seed, job)


@contextmanager
def analysis_preloaded(kind: str) -> Iterator[None]:
    """While the block runs (a run's units, waiting on models), import what the analysis
    and the page of a ``kind`` run will need (:mod:`silicolab.core.preload`)."""
    from silicolab.core.preload import ANALYSIS_MODULES, preloading
    from silicolab.report.kinds import page_modules

    with preloading((*ANALYSIS_MODULES, *page_modules(kind))):
        yield


def write_html_report(run: Any) -> None:
    """Write the run's ``report.html`` (and its figures) as the last output of its
    ``with run:`` block. Drawing the page never fails the run: a problem is one warning
    line on stderr (``silicolab view RUN_DIR`` retries)."""
    from silicolab.core.notices import warn
    from silicolab.report.html import write_report_safely

    if write_report_safely(run.path, info=run.info) is None:
        where = shown_run_dir(run.path)
        warn(f"report.html of {where} was not written (run 'silicolab view {where}' to retry)")


def finish_run(run: Any, record: Mapping[str, Any], markdown: str, health: Any) -> str:
    """The last step of a facade's ``with run:`` block: write ``record.json`` and
    ``report.md``, end the run with ``health`` (``degraded`` when every step of a unit
    failed) and draw ``report.html`` (:func:`write_html_report`). Returns the status."""
    run.write_record(record)
    run.write_report(markdown)
    status: str = run.finish(health)
    write_html_report(run)
    return status


def open_finished(path: str | Path, kind: str) -> tuple[Any, dict[str, Any]]:
    """The run at ``path`` and its record, checked to be a ``kind`` run that wrote one."""
    from silicolab.core.errors import InputError
    from silicolab.runs import Run

    run = Run.open(path)
    if run.kind != kind:
        raise InputError(
            f"path={str(path)!r} is a {run.kind} run, not a {kind} run; pass a run directory "
            f"made by the {kind} command or its Python function",
            params=("path",),
        )
    record = run.read_record()
    if record is None:
        raise InputError(
            f"the {kind} run {run.path} has no record.json (status {run.status}); resume it "
            "or start a new run",
        )
    return run, record


def health_of(data: Mapping[str, Any] | None) -> Any:
    """A :class:`~silicolab.runs.RunHealth` rebuilt from its ``to_dict()``, or ``None``."""
    from silicolab.runs import RunHealth, UnitHealth

    if not data:
        return None
    return RunHealth.of(UnitHealth.from_dict(u) for u in data.get("units", ()))


def first_figure(run_dir: Path, preferred: Iterable[str] = ()) -> Path | None:
    """The run's main figure under ``figures/``: the first of ``preferred`` names that
    exists (an SVG before a PNG), else the first SVG or PNG there, else ``None``."""
    folder = Path(run_dir) / "figures"
    for name in preferred:
        for suffix in (".svg", ".png"):
            if (folder / f"{name}{suffix}").is_file():
                return folder / f"{name}{suffix}"
    found = sorted(folder.glob("*.svg")) + sorted(folder.glob("*.png"))
    return found[0] if found else None


__all__ = [
    "Opened",
    "Resume",
    "explicit_of",
    "finish_run",
    "first_figure",
    "health_of",
    "open_checked_run",
    "open_finished",
    "runs_root",
    "shown_run_dir",
    "write_html_report",
]
