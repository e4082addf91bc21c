"""``silicolab cache ...``: inspect or clear the exact-prompt LLM cache.

One module per command group (``app.py`` joins them); the work happens in ``cli.info``,
imported inside the commands so ``silicolab --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from silicolab.cli.common import ConfigOpt, JsonOpt

cache_app = typer.Typer(
    help="Inspect or clear the exact-prompt LLM cache (a SQLite file; see cache_path).",
    no_args_is_help=True,
)


@cache_app.command("stats")
def cache_stats(
    config: ConfigOpt = None,
    path: Annotated[Path | None, typer.Option("--path", help="Cache file to inspect.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Entries, stored tokens and size of the LLM cache."""
    from silicolab.cli.info import show_cache_stats

    show_cache_stats(config=config, path=path, json_out=json_out)


@cache_app.command("clear")
def cache_clear(
    config: ConfigOpt = None,
    path: Annotated[Path | None, typer.Option("--path", help="Cache file to clear.")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Delete every cached completion (later calls go to the servers again)."""
    from silicolab.cli.info import clear_cache

    clear_cache(config=config, path=path, yes=yes, json_out=json_out)
