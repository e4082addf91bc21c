"""``silicolab bench ...``: a thin layer over :func:`silicolab.api.run_bench`.

Each command passes the options the user typed (command line or environment variable)
under their Python names, so the options it did not type take the facade's defaults (the
same as the command's) and a resumed run refuses only typed options that contradict its
stored settings; the large-run question is :func:`~silicolab.cli.bounds.confirm_units`
(``--yes`` or a yes at the prompt). The command prints the returned result: one JSON
object with ``--json``, else the table beside the published numbers; a degraded run's
health line goes to stderr and the command exits :data:`~silicolab.runs.DEGRADED_EXIT`.
``--resume`` with every run finished shows the latest one's results.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from silicolab.api.bench_flow import AGENT_ALIASES, table_rows
from silicolab.cli.bounds import confirm_units
from silicolab.cli.flow import emit
from silicolab.cli.resume_target import resume_target
from silicolab.core.files import dumps

#: The options every bench command has that are not settings of its run.
RUN_OPTIONS = (
    "base_url", "api_key_env", "jobs", "executor", "ray_address", "runs_dir", "config",
)  # fmt: skip


def typed_options(ctx: Any) -> set[str]:
    """The parameter names the user typed (command line or environment variable).

    Compares the parameter source by name, so it works with typer's own copy of click as
    well as with click."""
    typed = {"COMMANDLINE", "ENVIRONMENT"}
    return {
        p.name
        for p in ctx.command.params
        if p.name and getattr(ctx.get_parameter_source(p.name), "name", None) in typed
    }


def python_options(family: str, ctx: Any) -> dict[str, Any]:
    """The typed options of a ``bench FAMILY`` command under their Python names
    (``--agent`` -> ``scientist``, ``--suite`` -> ``suites``, ``--env`` -> ``goals`` or
    ``envs``); an old scientist name is replaced by its current one, with a note."""
    from silicolab.api.bench import OPTIONS, SETTING_OF

    typed = typed_options(ctx)
    out: dict[str, Any] = {}
    for name in (*OPTIONS[family], "scientist", "model"):
        flag = SETTING_OF.get(name, name)
        if flag in typed and flag in ctx.params:
            out[name] = ctx.params[flag]
    agent = out.get("scientist")
    if agent in AGENT_ALIASES:
        typer.echo(f"note: --agent {agent} is now called {AGENT_ALIASES[agent]}", err=True)
        out["scientist"] = AGENT_ALIASES[agent]
    return out


def run_bench_command(family: str, ctx: Any) -> Any:
    """Run ``silicolab bench FAMILY`` from its parsed context ``ctx`` and print the result
    (module docstring)."""
    from silicolab.api.bench import run_bench

    params = ctx.params
    resume, retry_failed = params["resume"], params["retry_failed"]
    target = resume_target(resume or retry_failed)
    yes = bool(params.get("yes", False))

    def confirm(units: int, plan: str) -> bool:
        confirm_units(units, plan, yes=yes)  # refuses (InputError) unless confirmed
        return True

    result = run_bench(
        family,
        **python_options(family, ctx),
        **{name: params[name] for name in RUN_OPTIONS},
        resume=target if isinstance(target, Path) else resume,
        retry_failed=retry_failed,
        confirm=confirm,
    )
    if result.reopened:
        _show_finished(result, json_out=params["json_out"])
        return result
    payload = {"run_dir": str(result.run_dir), "status": result.status, "rows": result.rows}
    if result.record.get("regime"):
        payload["regime"] = result.record["regime"]
    emit(
        payload,
        json_out=params["json_out"],
        show=lambda: result.view.print(result.table, result.run_dir),
        status=result.status,
        health=result.health,
    )
    return result


def _show_finished(result: Any, *, json_out: bool) -> None:
    """``--resume`` on a finished run: nothing to do; its stored rows are shown, the run
    is left as it is."""
    run_dir = str(result.run_dir)
    typer.echo(f"note: {run_dir} is finished; nothing to resume, showing its results", err=True)
    if json_out:
        typer.echo(dumps({"run_dir": run_dir, "status": result.status, "rows": result.rows}))
    else:
        typer.echo(Path(run_dir, "report.md").read_text(encoding="utf-8"))


__all__ = ["python_options", "run_bench_command", "table_rows", "typed_options"]
