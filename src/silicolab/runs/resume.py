"""Open a run for a command: a new one, or the one ``--resume`` means, with its stored settings.

The rule every resumable command follows: **a run's settings are the ones in its
``run.json``.** ``--resume`` reuses them; a flag the user typed that contradicts them is
refused with one line naming each difference; a finished run is never reopened (its
record stays as it is). Commands pass the settings of this invocation, normalised the way
they are stored, plus the names of the settings the user typed explicitly: only those can
contradict, the rest are defaults and yield to the stored values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from silicolab.core.errors import InputError
from silicolab.core.files import dumps
from silicolab.runs import lock, meta
from silicolab.runs.run_dir import Run


def open_run(
    root: str | Path,
    kind: str,
    *,
    settings: Mapping[str, Any],
    explicit: Iterable[str] = (),
    resume: bool | str | Path = False,
    slug: str = "",
    seed: int | None = None,
) -> tuple[Run, dict[str, Any]]:
    """Return ``(run, settings_to_use)``.

    Without ``resume``: a new run whose ``run.json`` stores ``settings`` (and ``seed``).
    With ``resume=True``: the newest unfinished ``kind`` run under ``root``; with a path:
    that run. The process takes the run's writer lock first (:mod:`silicolab.runs.lock`),
    so a second writer of a live run is refused before it does anything.
    The settings to use are then the stored ones, and any name in ``explicit`` whose value
    in ``settings`` differs from the stored value raises :class:`InputError`.
    """
    if not resume:
        check_root(Path(root))
        run = Run.create(root, kind=kind, slug=slug, config=dict(settings), seed=seed)
        return run, dict(settings)
    run = _find(Path(root), kind, resume)
    lock.acquire(run.path)  # a second writer stops here, before it runs anything
    if run.status == "finished":
        raise InputError(
            f"the {run.kind} run {run.path} is finished and its record is kept as it is; "
            "nothing to resume (start a new run without --resume)"
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
            f"--resume continues {run.path} with its stored settings, but you gave "
            f"{'; '.join(differences)}; drop those options to resume, or start a new run "
            "without --resume"
        )
    return run, {**given, **stored}


def _find(root: Path, kind: str, resume: bool | str | Path) -> Run:
    if resume is True:
        run = Run.latest(root, kind=kind, unfinished=True)
        if run is None:
            newest = Run.latest(root, kind=kind)
            if newest is None:
                raise InputError(f"no {kind} run under {root} to resume; drop --resume")
            raise InputError(
                f"every {kind} run under {root} is finished (the newest: {newest.path}) and "
                "its record is kept as it is; nothing to resume (start a new run without "
                "--resume)"
            )
        return run
    run = Run.open(Path(resume))
    if run.kind != meta.slugify(kind):
        raise InputError(f"{run.path} is a {run.kind} run, not a {kind} run; pick a {kind} run")
    return run


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
        raise InputError(f"runs folder {root}: {probe} is a file; pass a folder with --runs-dir")
    try:
        root.mkdir(parents=True, exist_ok=True)
        test = root / ".silicolab-write-test"
        test.write_text("")
        test.unlink()
    except OSError as exc:
        raise InputError(
            f"cannot write run directories under {root} ({exc.strerror or exc}); "
            "pass a writable folder with --runs-dir"
        ) from None


def _canonical(value: Any) -> str:
    """``value`` as run.json stores it (strict JSON: a NaN option is stored as null), so a
    typed option compares equal to the stored one it was written from."""
    return dumps(value, sort_keys=True)


def _show(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


__all__ = ["check_root", "open_run"]
