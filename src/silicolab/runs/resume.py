"""Open a run for a command: a new one, or the one ``--resume`` means, with its stored settings.

The rule every resumable command follows: **a run's settings are the ones in its
``run.json``.** ``--resume`` reuses them; a flag the user typed that contradicts them is
refused with one line naming each difference; a finished run is never reopened (its
record stays as it is). Commands pass the settings of this invocation, normalised the way
they are stored, plus the names of the settings the user typed explicitly: only those can
contradict, the rest are defaults and yield to the stored values.

``--resume`` without a path takes the newest run that is not finished, skipping runs that
failed on bad input (their stored settings would fail again). ``--retry-failed`` is
``--resume`` that also reopens the units that failed (:mod:`silicolab.runs.retry`); on a
finished run it has nothing to do and says so (:class:`NothingFailed`, exit 0).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from silicolab.core.errors import InputError, SilicolabError
from silicolab.core.files import dumps
from silicolab.runs import lock, meta
from silicolab.runs.health import cut
from silicolab.runs.retry import FailedRule, failed_units, unit_failed
from silicolab.runs.run_dir import Run


class NothingFailed(SilicolabError):
    """``--retry-failed`` found a finished run: nothing to retry, which is not an error
    (exit 0); the message is the one line the command prints."""

    exit_code = 0

    @classmethod
    def found(cls, run: Run) -> NothingFailed:
        return cls(f"nothing failed in {run.path}: it finished, and its record is kept as it is")


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def open_run(
    root: str | Path,
    kind: str,
    *,
    settings: Mapping[str, Any],
    explicit: Iterable[str] = (),
    resume: bool | str | Path = False,
    slug: str = "",
    seed: int | None = None,
    retry_failed: bool = False,
    failed: FailedRule = unit_failed,
    note: Callable[[str], None] = _stderr,
) -> tuple[Run, dict[str, Any]]:
    """Return ``(run, settings_to_use)``.

    Without ``resume``: a new run whose ``run.json`` stores ``settings`` (and ``seed``).
    With ``resume=True``: the newest unfinished ``kind`` run under ``root``, skipping runs
    that failed on bad input (``note`` says which); with a path: that run. The process
    takes the run's writer lock first (:mod:`silicolab.runs.lock`), so a second writer of
    a live run is refused before it does anything.
    The settings to use are then the stored ones, and any name in ``explicit`` whose value
    in ``settings`` differs from the stored value raises :class:`InputError`.

    ``retry_failed`` implies ``resume`` and also reruns the units that failed
    (:func:`~silicolab.runs.retry.failed_units` with the rule ``failed``): they are
    reopened when the run's ``with`` block starts, and their model calls skip the cache.
    On a finished run it raises :class:`NothingFailed` (exit 0).
    """
    resume = resume or retry_failed
    if not resume:
        check_root(Path(root))
        run = Run.create(root, kind=kind, slug=slug, config=dict(settings), seed=seed)
        return run, dict(settings)
    run = _find(Path(root), kind, resume, retry_failed=retry_failed, note=note)
    lock.acquire(run.path)  # a second writer stops here, before it runs anything
    if run.status == "finished":
        if retry_failed:
            raise NothingFailed.found(run)
        raise InputError(
            f"the {run.kind} run {run.path} is finished and its record is kept as it is; "
            "nothing to resume (start a new run without resume=)",
            params=("resume",),
        )
    stored = run.config
    given = dict(settings)
    if seed is not None:
        given.setdefault("seed", seed)
        stored.setdefault("seed", run.seed)
    differences = [
        f"{name}={_show(given[name])} (stored: {_show(stored.get(name))})"
        for name in sorted(set(explicit))
        if name in given and _canonical(given[name]) != _canonical(stored.get(name))
    ]
    if differences:
        raise InputError(
            f"resuming {run.path} reuses its stored settings, but you gave "
            f"{'; '.join(differences)}; drop those to resume, or start a new run "
            "without resume=",
            params=("resume",),  # the settings are run.json's names, shown as they are
        )
    if retry_failed:
        _plan_retry(run, failed, note)
    return run, {**given, **stored}


def _plan_retry(run: Run, failed: FailedRule, note: Callable[[str], None]) -> None:
    """Reopen the failed units of ``run`` when its work starts, and say which."""
    units = failed_units(run, failed)
    run.retry_when_started(units)
    if units:
        shown = ", ".join(units[:5]) + (f" and {len(units) - 5} more" if len(units) > 5 else "")
        note(f"note: rerunning {len(units)} failed unit(s) of {run.path} with fresh model "
             f"calls: {shown}")  # fmt: skip
    else:
        note(f"note: no unit of {run.path} failed; resuming it")


def _find(
    root: Path,
    kind: str,
    resume: bool | str | Path,
    *,
    retry_failed: bool = False,
    note: Callable[[str], None] = _stderr,
) -> Run:
    if resume is True:
        return _newest_to_resume(root, kind, retry_failed, note)
    run = Run.open(Path(resume))
    if run.kind != meta.slugify(kind):
        raise InputError(f"{run.path} is a {run.kind} run, not a {kind} run; pick a {kind} run")
    return run


def _newest_to_resume(
    root: Path, kind: str, retry_failed: bool, note: Callable[[str], None]
) -> Run:
    """The newest ``kind`` run that is not finished, skipping (with a note) runs that
    failed on bad input: resuming one would only fail again on its stored input."""
    runs = Run.newest_first(root, kind)
    chosen = next((r for r in runs if r.status != "finished" and not r.failed_on_input), None)
    newer = runs[: runs.index(chosen)] if chosen is not None else runs
    skipped = [r for r in newer if r.failed_on_input]
    if chosen is not None:
        for bad in skipped:
            note(f"note: resuming skips {bad.path}, which failed on bad input "
                 f"({_error(bad)}): its stored input would fail again")  # fmt: skip
        return chosen
    if skipped:
        raise InputError(
            f"no {kind} run under {root} to resume: the newest unfinished one, "
            f"{skipped[0].path}, failed on bad input ({_error(skipped[0])}) that its stored "
            "settings would repeat; fix the input and start a new run without resume=",
            params=("resume",),
        )
    if not runs:
        raise InputError(f"no {kind} run under {root} to resume; drop resume=", params=("resume",))
    if retry_failed:
        raise NothingFailed.found(runs[0])
    raise InputError(
        f"every {kind} run under {root} is finished (the newest: {runs[0].path}) and "
        "its record is kept as it is; nothing to resume (start a new run without "
        "resume=)",
        params=("resume",),
    )


def _error(run: Run) -> str:
    return cut(str(run.info.get("error", "")), 160)


def check_root(root: str | Path) -> None:
    """Refuse a runs folder that cannot be created or written, before any work starts
    (creating it when it can be)."""
    root = Path(root)
    probe = root
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise InputError(
            f"runs folder {root}: {probe} is a file; pass a folder as runs_dir=",
            params=("runs_dir",),
        )
    try:
        root.mkdir(parents=True, exist_ok=True)
        test = root / ".silicolab-write-test"
        test.write_text("")
        test.unlink()
    except OSError as exc:
        raise InputError(
            f"cannot write run directories under {root} ({exc.strerror or exc}); "
            "pass a writable folder as runs_dir=",
            params=("runs_dir",),
        ) from None


def _canonical(value: Any) -> str:
    """``value`` as run.json stores it (strict JSON: a NaN option is stored as null), so a
    typed option compares equal to the stored one it was written from."""
    return dumps(value, sort_keys=True)


def _show(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


__all__ = ["NothingFailed", "check_root", "open_run"]
