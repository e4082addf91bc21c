"""The paper's four studies as built-in hypotheses, runnable without the hypothesis step.

Mug bargaining (9 x 9 x 5 = 405 conditions), bail hearing (7 x 7 x 5 = 245), lawyer
interview (2 x 5 x 8 = 80) and art auction (7^3 = 343), with the treatment values of
Manning, Zhu & Horton (2024), Tables 1-4, in our own wording. Each is a YAML file beside
this module: copy one with ``silicolab study list-examples --write DIR`` and edit it.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from silicolab.core.errors import InputError
from silicolab.studies.hypothesis import Hypothesis

#: Example name -> conditions of its full factorial design (checked by the tests).
EXAMPLES = {"mug": 405, "bail": 245, "lawyer": 80, "auction": 343}


def example_text(name: str) -> str:
    """The YAML text of the built-in example ``name``."""
    if name not in EXAMPLES:
        raise InputError(f"unknown example study {name!r}; choose one of {', '.join(EXAMPLES)}")
    return (
        resources.files("silicolab.studies")
        .joinpath(f"examples/{name}.yaml")
        .read_text(encoding="utf-8")
    )


def write_examples(folder: str | Path, *, force: bool = False) -> list[Path]:
    """Copy every example's YAML file into ``folder`` (created if missing) and return the
    files written. A file already there with the example's exact text is left alone; one
    that differs (a researcher's edit) is overwritten only with ``force``, else nothing is
    written and the :class:`InputError` names the edited files."""
    from silicolab.core.files import atomic_write_text

    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise InputError(
            f"folder= takes a folder; {folder} is a file: name a folder", params=("folder",)
        )
    texts = {folder / f"{name}.yaml": example_text(name) for name in EXAMPLES}
    edited = [path for path, text in texts.items() if _differs(path, text)]
    if edited and not force:
        names = ", ".join(path.name for path in edited)
        raise InputError(
            f"{folder} has edited example files ({names}); nothing was written: add "
            "force=True to overwrite them, or pass another folder=",
            params=("force", "folder"),
        )
    new = [path for path in texts if path not in edited and not path.exists()]
    written = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for path in [*edited, *new]:
            written.append(atomic_write_text(path, texts[path]))
    except OSError as exc:
        raise InputError(
            f"cannot write the examples into {folder} ({exc.strerror or exc}); "
            "choose a folder you can write to"
        ) from None
    return written


def _differs(path: Path, text: str) -> bool:
    """Whether ``path`` exists with content other than ``text`` (unreadable counts)."""
    if not path.exists() and not path.is_symlink():
        return False
    try:
        return path.read_bytes() != text.encode("utf-8")
    except OSError:
        return True


def load_example(name: str) -> Hypothesis:
    """The built-in example ``name`` as a validated :class:`Hypothesis`."""
    import yaml

    from silicolab.studies.files import hypothesis_from_data

    return hypothesis_from_data(yaml.safe_load(example_text(name)), source=f"example {name}")


__all__ = ["EXAMPLES", "example_text", "load_example", "write_examples"]
