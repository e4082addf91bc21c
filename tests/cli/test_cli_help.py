"""The command line's help as a newcomer reads it (issue 26, item 8): usage lines name
arguments ``RUN_DIR``, not typer's ``{run_dir}``; every option says what it does; and a
PyMC-fitting scientist asked for without PyMC is named in the one error line."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from tests.support.cli import EXE, SRC, cli_env

from silicolab.cli.app import app


def _commands(command: Any, path: list[str], parent: Any = None) -> Iterator[tuple[str, Any, Any]]:
    """Every command of the click tree typer builds, with its context and its full name."""
    ctx = command.context_class(command, info_name=path[-1], parent=parent)
    yield " ".join(path), command, ctx
    if hasattr(command, "list_commands"):
        for name in command.list_commands(ctx):
            yield from _commands(command.get_command(ctx, name), [*path, name], ctx)


COMMANDS = list(_commands(typer.main.get_command(app), ["silicolab"]))


def test_the_tree_holds_every_command() -> None:
    names = {name for name, _, _ in COMMANDS}
    assert {"silicolab view", "silicolab study fit", "silicolab bench boxinggym"} <= names


@pytest.mark.parametrize(("name", "command", "ctx"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_usage_names_arguments_in_capitals_and_every_option_has_help(
    name: str, command: Any, ctx: Any
) -> None:
    usage = command.get_usage(ctx)
    assert "{" not in usage, usage
    for param in command.params:
        if param.param_type_name == "argument":
            shown = (param.metavar or param.name).upper()
            assert shown in usage, usage
        elif not param.hidden:
            assert param.help, f"{name} {'/'.join(param.opts)} has no help text"


@pytest.mark.parametrize(
    ("command", "usage"),
    [
        (["view"], "view [OPTIONS] RUN_DIR"),
        (["study", "fit"], "study fit [OPTIONS] RUN_DIR"),
        (["study", "run"], "study run [OPTIONS] [EXAMPLE]"),
        (["sim", "run"], "sim run [OPTIONS] NAME|FILE"),
    ],
)
def test_help_shows_run_dir_in_the_usage_line(command: list[str], usage: str) -> None:
    out = subprocess.run([*EXE, *command, "--help"], env=cli_env(), capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].endswith(usage), out.stdout.splitlines()[0]


def test_the_statistician_without_pymc_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "no_pymc"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\nsys.modules['pymc'] = None  # import pymc: ImportError, as uninstalled\n"
    )
    env = cli_env({"PYTHONPATH": f"{blocker}{os.pathsep}{SRC}"})
    args = ["bench", "boxinggym", "--env", "dugongs", "--seeds", "1", "--agent",
            "statistician", "--runs-dir", str(tmp_path / "runs")]  # fmt: skip
    out = subprocess.run([*EXE, *args], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().splitlines() == [
        "error: the statistician needs PyMC and arviz: install silicolab[ppl]"
    ]
    assert not (tmp_path / "runs").exists()  # refused before any run directory
