"""silicolab ships ``py.typed`` (PEP 561), so type checkers read its annotations: the marker
is in the imported package, the wheel ships the whole package folder (hatchling then
includes every file in it that git does not ignore), and git does not ignore it."""

from __future__ import annotations

import subprocess
import tomllib
from importlib.resources import files
from pathlib import Path

import silicolab

REPO = Path(__file__).resolve().parent.parent


def test_the_installed_package_is_marked_typed() -> None:
    assert files("silicolab").joinpath("py.typed").is_file()
    assert (Path(silicolab.__file__).parent / "py.typed").is_file()


def test_the_wheel_ships_the_marker() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    wheel = config["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == ["src/silicolab"]
    assert not {"only-include", "exclude", "include"} & set(wheel)
    ignored = subprocess.run(
        ["git", "-C", str(REPO), "check-ignore", "-q", "src/silicolab/py.typed"], check=False
    )
    assert ignored.returncode == 1  # 1: not ignored (0 would mean ignored)
