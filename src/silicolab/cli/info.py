"""``silicolab models`` and ``silicolab cache``: what is configured, what is cached."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from silicolab.core.config import load_settings
from silicolab.core.errors import InputError
from silicolab.core.files import dumps


def show_models(*, config: Path | None, json_out: bool) -> None:
    """Print each role's model spec, server and key status. Key values never appear."""
    from silicolab.llm.roles import describe_roles

    settings = load_settings(config)
    rows = describe_roles(settings)
    if json_out:
        typer.echo(dumps({"config": settings.source, "roles": rows}))
        return
    from silicolab.report import print_table

    key_set = {None: "not needed", True: "yes", False: "no"}
    shown = [
        {"role": row["role"], "spec": row["spec"], "server": row["error"]}
        if "error" in row
        else {
            "role": row["role"],
            "spec": row["spec"],
            "from": row["source"],
            "server": row["base_url"],
            "key variable": row["api_key_env"] or "-",
            "key set": key_set[row["key_set"]],
        }
        for row in rows
    ]
    columns = [(c, c) for c in ("role", "spec", "from", "server", "key variable", "key set")]
    print_table(shown, columns, title=f"models by role (config: {settings.source})")


def _cache_path(config: Path | None, path: Path | None) -> Path:
    if path is not None:
        return path
    settings = load_settings(config)
    resolved = settings.resolved_cache_path
    if resolved is None:
        raise InputError("the cache is off (cache_path: off); pass --path to name a cache file")
    return resolved


def show_cache_stats(*, config: Path | None, path: Path | None, json_out: bool) -> None:
    """Print the cache's entries, tokens and size."""
    from silicolab.llm.cache import SQLiteCache

    file = _cache_path(config, path)
    stats = (
        SQLiteCache(file).stats()
        if file.exists()
        else {
            "path": str(file),
            "entries": 0,
            "input_tokens": 0,
            "output_tokens": 0,
            "bytes": 0,
            "by_model": {},
        }
    )
    if json_out:
        typer.echo(dumps(stats))
        return
    typer.echo(f"cache: {stats['path']}")
    typer.echo(
        f"entries: {stats['entries']}  tokens stored: {stats['input_tokens']} in / "
        f"{stats['output_tokens']} out  size: {stats['bytes'] / 1024:.1f} KiB"
    )
    for model, count in stats["by_model"].items():
        typer.echo(f"  {model}: {count}")


def clear_cache(*, config: Path | None, path: Path | None, yes: bool, json_out: bool) -> None:
    """Delete all cached completions, after confirmation unless ``--yes``."""
    from silicolab.llm.cache import SQLiteCache

    file = _cache_path(config, path)
    if not file.exists():
        removed = 0
    else:
        if not yes and not typer.confirm(f"Delete every cached completion in {file}?"):
            raise typer.Exit(1)
        removed = SQLiteCache(file).clear()
    if json_out:
        typer.echo(dumps({"path": str(file), "removed": removed}))
    else:
        typer.echo(f"removed {removed} cached completions from {file}")


def ask_model(
    prompt: str,
    *,
    role: str,
    model: str | None,
    max_tokens: int | None,
    config: Path | None,
    json_out: bool,
    base_url: str | None = None,
    api_key_env: str | None = None,
) -> None:
    """Ask the role's model (or ``model``) one question; print the reply and usage.
    ``base_url`` / ``api_key_env`` point the model at another OpenAI-compatible server."""
    from silicolab.llm.roles import model_for_role

    settings = load_settings(config)
    overrides: dict[str, Any] = {"spec": model} if model else {}
    if base_url:
        overrides["base_url"] = base_url
    if api_key_env:
        overrides["api_key_env"] = api_key_env
    llm = model_for_role(role, settings, **overrides)
    completion = llm.generate(prompt, max_tokens=max_tokens, tag=role)
    if json_out:
        typer.echo(dumps({"model": llm.spec, **completion.to_dict()}))
        return
    typer.echo(completion.text)
    typer.echo(
        f"[{llm.spec}: {completion.usage.input_tokens} in / {completion.usage.output_tokens} "
        f"out tokens, {completion.latency_s:.2f}s{', cached' if completion.cached else ''}]",
        err=True,
    )
