"""Option aliases shared by the command modules, so an option reads the same everywhere.

Each alias is an ``Annotated`` type: the parameter's type plus its typer option (flag
name and help text). Defined once here and used by ``app.py`` and the sub-apps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

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
        help="Finish the latest unfinished run of this command with its stored settings.",
    ),
]
LatestResumeOpt = Annotated[bool, typer.Option("--resume", help="Finish the latest run.")]
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
    "RunsDirOpt",
]
