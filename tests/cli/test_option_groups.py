"""Option groups (``cli.option_groups``): a group's options stand in the command's help at
the placeholder's place, parse as if written out, and reach the command as one dict."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.testing import CliRunner

from silicolab.cli.option_groups import ModelGroup, RunGroup, with_groups


def _app(seen: dict[str, Any]) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @with_groups
    def cmd(
        first: Annotated[int, typer.Option(help="Before the group.")] = 1,
        models: ModelGroup = None,
        middle: Annotated[str, typer.Option(help="Between the groups.")] = "m",
        run: RunGroup = None,
    ) -> None:
        seen.update(first=first, models=models, middle=middle, run=run)

    @app.command()
    def other() -> None:  # a second command, so "cmd" is a subcommand
        """Nothing."""

    return app


def test_a_group_is_its_options_in_place_and_one_dict_in_the_command(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}
    app = _app(seen)
    args = ["cmd", "--model", "scripted", "--middle", "x", "--runs-dir", str(tmp_path)]
    result = CliRunner().invoke(app, [*args, "--json", "--retry-failed"])
    assert result.exit_code == 0, result.output
    assert seen == {
        "first": 1,
        "models": {"model": "scripted", "base_url": None, "api_key_env": None},
        "middle": "x",
        "run": {
            "resume": False,
            "retry_failed": True,
            "runs_dir": tmp_path,
            "config": None,
            "json_out": True,
        },
    }
    help_text = CliRunner().invoke(app, ["cmd", "--help"], env={"COLUMNS": "200"}).output
    order = ["--first", "--model", "--base-url", "--api-key-env", "--middle", "--resume"]
    order += ["--retry-failed", "--runs-dir", "--config", "--json"]
    places = [help_text.index(flag + " ") for flag in order]
    assert places == sorted(places), help_text
    assert "--models" not in help_text and "--run " not in help_text
