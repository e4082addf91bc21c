"""Option aliases shared by the command modules, so an option reads the same everywhere.

Each alias is an ``Annotated`` type: the parameter's type plus its typer option (flag
name and help text). Defined once here and used by ``app.py`` and the sub-apps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperCommand

ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", help="Path to silicolab.yaml (default: ./silicolab.yaml)."),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON object on stdout instead of tables.")
]
ModelOpt = Annotated[
    str | None,
    typer.Option("--model", help="Model spec for LLM methods (default: the scientist role's)."),
]
BaseUrlOpt = Annotated[
    str | None, typer.Option("--base-url", help="OpenAI-compatible server for --model.")
]
KeyEnvOpt = Annotated[
    str | None, typer.Option("--api-key-env", help="Environment variable holding the key.")
]
RunsDirOpt = Annotated[
    Path | None, typer.Option("--runs-dir", help="Where run directories go (default: runs).")
]
ResumeOpt = Annotated[
    bool,
    typer.Option(
        "--resume",
        help="Finish the latest unfinished run of this command with its stored settings "
        "(--resume RUN_DIR: that run).",
    ),
]
LatestResumeOpt = Annotated[
    bool,
    typer.Option(
        "--resume",
        help="Finish the latest unfinished run (--resume RUN_DIR: that run); when every run "
        "is finished, show the latest one's results.",
    ),
]
RetryFailedOpt = Annotated[
    bool,
    typer.Option(
        "--retry-failed",
        help="Like --resume (the latest degraded or unfinished run, or --retry-failed "
        "RUN_DIR), and also rerun the units whose every model step failed, asking the model "
        "anew instead of the cache.",
    ),
]
ExecutorOpt = Annotated[
    str,
    typer.Option(
        "--executor",
        help="Where units run: local (this machine) or ray (a Ray cluster; docs/scale.md).",
    ),
]
RayAddressOpt = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="The Ray cluster to join, HOST:PORT (default: the one 'ray start --head' "
        "started on this machine).",
    ),
]


class UsageCommand(TyperCommand):
    """A command whose usage line names its arguments as click always did, ``RUN_DIR``
    (required) and ``[EXAMPLE]`` (optional), instead of typer's ``{run_dir}``: the form
    the help text and the docs use. Every command with an argument is declared with
    ``cls=UsageCommand``."""

    def collect_usage_pieces(self, ctx: typer.Context) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name != "argument":
                pieces.extend(param.get_usage_pieces(ctx))
                continue
            name = (param.metavar or param.name or "").upper()
            name = name if param.required else f"[{name}]"
            pieces.append(name + ("..." if param.nargs != 1 else ""))
        return pieces


__all__ = [
    "BaseUrlOpt",
    "ConfigOpt",
    "ExecutorOpt",
    "JsonOpt",
    "KeyEnvOpt",
    "LatestResumeOpt",
    "ModelOpt",
    "RayAddressOpt",
    "ResumeOpt",
    "RetryFailedOpt",
    "RunsDirOpt",
    "UsageCommand",
]
