"""``silicolab`` as a subprocess, the way the CLI tests run it: the command line and an
environment with no user settings (``SILICOLAB_*`` removed) and this checkout's source on
``PYTHONPATH``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import silicolab

SRC = str(Path(silicolab.__file__).resolve().parent.parent)
EXE = [sys.executable, "-m", "silicolab.cli.app"]


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment without ``SILICOLAB_*``, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SILICOLAB_")}
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra or {})
    return env


def private_cache_env(folder: Path) -> dict[str, str]:
    """:func:`cli_env` with an LLM cache of its own in ``folder``."""
    return cli_env({"SILICOLAB_CACHE_PATH": str(folder / "cache.sqlite")})


__all__ = ["EXE", "SRC", "cli_env", "private_cache_env"]
