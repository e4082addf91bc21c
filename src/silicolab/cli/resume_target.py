"""``--resume RUN_DIR``: resume a named run instead of the newest unfinished one.

``--resume`` is a flag (``study run auction --resume`` must keep ``auction`` as the study's
name), and the command-line parser cannot give a flag an optional value without also
swallowing the next token (``--resume --yes``). So :func:`take_resume_dir` takes the value
off the arguments before parsing: the token after ``--resume`` (or ``--retry-failed``)
when it is a run directory (a folder holding ``run.json``), or ``--resume=RUN_DIR``. Any
other next token stays where it was. Commands then ask :func:`resume_target` what to pass
to :func:`silicolab.runs.open_run` as ``resume``.
"""

from __future__ import annotations

from pathlib import Path

_FLAGS = ("--resume", "--retry-failed")
_target: Path | None = None


def take_resume_dir(argv: list[str]) -> list[str]:
    """``argv`` without the run directory named after ``--resume``/``--retry-failed``
    (remembered for :func:`resume_target`)."""
    global _target
    _target = None
    out: list[str] = []
    tokens = iter(argv)
    for token in tokens:
        flag, eq, value = token.partition("=")
        if flag in _FLAGS and eq:
            out.append(flag)
            _target = Path(value)
            continue
        out.append(token)
        if token in _FLAGS:
            following = next(tokens, None)
            if following is not None and _is_run_dir(following):
                _target = Path(following)
            elif following is not None:
                out.append(following)
    return out


def _is_run_dir(token: str) -> bool:
    return not token.startswith("-") and (Path(token) / "run.json").is_file()


def resume_target(wanted: bool) -> bool | Path:
    """What ``open_run(resume=...)`` gets: ``False`` when the user did not ask to resume,
    the run directory given after ``--resume``, or ``True`` (the newest unfinished run)."""
    if not wanted:
        return False
    return _target if _target is not None else True


__all__ = ["resume_target", "take_resume_dir"]
