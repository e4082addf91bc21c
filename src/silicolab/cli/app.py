"""``silicolab``: the command-line entry point.

Every command that produces results prints a readable summary and accepts ``--json``
(one JSON object on stdout instead). Errors a user can fix print one line and exit 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from silicolab import __version__
from silicolab.cli.bench import bench_app
from silicolab.cli.bounds import IN_FLIGHT_JOBS_HELP
from silicolab.cli.cache_app import cache_app
from silicolab.cli.common import ConfigOpt, JsonOpt, KeyEnvOpt, RetryFailedOpt, UsageCommand
from silicolab.cli.option_groups import ModelGroup, RunGroup, with_groups
from silicolab.cli.sim import sim_app
from silicolab.cli.study import study_app

app = typer.Typer(
    name="silicolab",
    help=(
        "silicolab: an in-silico laboratory for causal science with language-model agents.\n\n"
        "Run 'silicolab demo' for an offline tour. Models are configured per role in "
        "silicolab.yaml or with SILICOLAB_MODEL / SILICOLAB_MODEL_<ROLE>; see 'silicolab models'."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
# Each command group lives in its own module; joined in the order --help lists them.
app.add_typer(cache_app, name="cache")
app.add_typer(bench_app, name="bench")
app.add_typer(sim_app, name="sim")
app.add_typer(study_app, name="study")
from silicolab.cli.serve_app import serve_app  # noqa: E402 - after the app it joins

app.add_typer(serve_app, name="serve")
from silicolab.cli.view_app import view  # noqa: E402

app.command("view", cls=UsageCommand)(view)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"silicolab {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """silicolab command line."""


@app.command()
def demo(
    ctx: typer.Context,
    runs_dir: Annotated[
        Path | None, typer.Option("--runs-dir", help="Where run directories go (default: runs).")
    ] = None,
    conditions: Annotated[
        int | None,
        typer.Option(min=4, help="Run a seeded subset of N conditions (default: all 405)."),
    ] = None,
    seed: Annotated[
        int, typer.Option(min=0, help="Seed of the run (same seed, same results).")
    ] = 0,
    jobs: Annotated[
        int, typer.Option(min=1, help=f"Conditions run concurrently {IN_FLIGHT_JOBS_HELP}.")
    ] = 16,
    resume: Annotated[
        bool, typer.Option("--resume", help="Finish the latest unfinished demo run.")
    ] = False,
    retry_failed: RetryFailedOpt = False,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """The main job, offline: an automated social science study, end to end.

    From the scenario "Two people bargaining over a mug." the scientist proposes an SCM,
    every condition runs as a conversation, the survey is parsed and the SCM fitted, the
    scientist's predictions are scored and a follow-on experiment is run. Every role is a
    scripted test double whose answers follow a hidden SCM, so the estimates are shown
    beside the truth. Then a short tour: causal discovery, CausaLab, BoxingGym.
    """
    from silicolab.cli.bounds import check_jobs
    from silicolab.cli.demo import run_demo
    from silicolab.cli.options import explicit_options
    from silicolab.core.config import load_settings
    from silicolab.runs import check_root

    check_jobs(jobs, processes=False)
    check_root(runs_dir or load_settings(config).runs_dir)  # before any run directory
    run_demo(
        runs_dir=runs_dir, conditions=conditions, seed=seed, jobs=jobs, resume=resume,
        retry_failed=retry_failed, explicit=explicit_options(ctx), config=config,
        json_out=json_out,
    )  # fmt: skip


@app.command()
def models(config: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Show the model configured for each role and whether its API key is set (never the key)."""
    from silicolab.cli.info import show_models

    show_models(config=config, json_out=json_out)


@app.command(cls=UsageCommand)
def ask(
    prompt: Annotated[str, typer.Argument(help="What to ask.")],
    role: Annotated[str, typer.Option(help="Which configured role's model to use.")] = "default",
    model: Annotated[
        str | None, typer.Option("--model", help="A model spec overriding the role's model.")
    ] = None,
    max_tokens: Annotated[int | None, typer.Option(min=1, help="Reply length cap.")] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="OpenAI-compatible server for the model.")
    ] = None,
    api_key_env: KeyEnvOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Send one prompt to a configured model and print the reply with its usage.

    A quick check that a role's model, server and key work, e.g.
    'silicolab ask "Say hi" --role judge'.
    """
    from silicolab.cli.info import ask_model

    ask_model(
        prompt, role=role, model=model, max_tokens=max_tokens, base_url=base_url,
        api_key_env=api_key_env, config=config, json_out=json_out,
    )  # fmt: skip


@app.command()
@with_groups
def discover(
    method: Annotated[
        str,
        typer.Option(
            "--method", "-m", help="Method name, e.g. pc, exact, direct_lingam, mac_meta_debate."
        ),
    ] = "pc",
    dataset: Annotated[
        str | None, typer.Option("--dataset", help="auto_mpg, dwd_climate or sachs.")
    ] = None,
    data: Annotated[Path | None, typer.Option("--data", help="Your own CSV (numeric).")] = None,
    truth_edges: Annotated[
        Path | None, typer.Option("--truth-edges", help="CSV of cause,effect to score --data.")
    ] = None,
    param: Annotated[
        list[str], typer.Option("--param", "-p", help="Method parameter name=value (repeat).")
    ] = [],  # noqa: B006 - typer needs a literal default
    require: Annotated[
        list[str], typer.Option("--require", help="Required edge cause->effect (repeat).")
    ] = [],  # noqa: B006
    forbid: Annotated[
        list[str], typer.Option("--forbid", help="Forbidden edge cause->effect (repeat).")
    ] = [],  # noqa: B006
    models: ModelGroup = None,
    seed: Annotated[
        int | None,
        typer.Option(min=0, help="Seed of methods that sample (LiNGAM, the LLM's sampling seed)."),
    ] = None,
    run: RunGroup = None,
) -> None:
    """Recover a causal graph from data and score it against the truth when one is known.

    Examples: 'silicolab discover --dataset sachs --method pc',
    'silicolab discover --data my.csv --method direct_lingam --forbid Age->Sex'.
    """
    from silicolab.cli.discover import run_discover
    from silicolab.cli.options import explicit_options

    run_discover(
        dataset=dataset, data=data, truth_edges=truth_edges, method=method, params=param,
        require=require, forbid=forbid, seed=seed, explicit=explicit_options(),
        **(models or {}), **(run or {}),
    )  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app, turning every error a user can fix into one
    line on stderr and exit 2 (usage errors included), SIGTERM and Ctrl-C into an
    ``interrupted`` run with a resume hint (exit 143 / 130). With ``--json`` an error is
    also one JSON object on stdout (:func:`json_error`). Library warnings are counted and
    summarized on stderr at the end (:mod:`silicolab.core.warnings_summary`); after an
    interruption the resume hint follows that summary, so it stays the last line, and the
    summary leaves out the coroutines the interruption itself struck before they ran."""
    from silicolab.cli import signals
    from silicolab.core.warnings_summary import counted_warnings

    args = sys.argv[1:] if argv is None else list(argv)
    json_mode = "--json" in args
    with counted_warnings() as counter:
        code, interrupted = _run(args, json_mode=json_mode)
        if interrupted:
            counter.forget_unawaited_coroutines()
    if interrupted:
        typer.echo(signals.RESUME_HINT, err=True)
        if json_mode:
            json_error("interrupted", code, "interrupted")
    sys.exit(code)


def _run(argv: list[str], *, json_mode: bool) -> tuple[int, bool]:
    """Run the app on ``argv``: the process's exit code, and whether the command was
    interrupted (SIGTERM, Ctrl-C; :func:`main` then prints the resume hint and, with
    ``--json``, the error object)."""
    from silicolab.cli import signals
    from silicolab.cli.resume_target import take_resume_dir
    from silicolab.core.errors import SilicolabError

    signals.install()
    try:
        args = take_resume_dir(argv)
        code = app(args=args, standalone_mode=False)
    except SilicolabError as err:
        from silicolab.cli.flags import as_flags

        message = as_flags(str(err), getattr(err, "params", ()))  # Python names -> flags
        prefix = "error: " if err.exit_code else ""  # exit 0: nothing to do (NothingFailed)
        typer.echo(f"{prefix}{one_line(message)}", err=True)
        if json_mode and err.exit_code:
            json_error(message, err.exit_code, error_kind(err))
        return err.exit_code, False
    except (KeyboardInterrupt, typer.Abort) as err:
        return signals.exit_code(err), True
    except typer.exceptions.TyperException as err:  # click's usage errors
        code = _usage_error(err)
        if json_mode and code:
            json_error(_usage_message(err), code, "usage")
        return code, False
    except Exception as err:  # a bug: the traceback follows on stderr, exit 1
        if json_mode:
            json_error(f"{type(err).__name__}: {one_line(str(err))}", 1, "bug")
        raise
    finally:
        _leave_ray_cluster()
    if code == signals.INTERRUPTED or signals.received():  # typer turns Ctrl-C into exit 130
        return signals.exit_code(), True
    return (code if isinstance(code, int) else 0), False


#: ``kind`` of a JSON error object per error class name (others: the name in snake case).
_ERROR_KINDS = {
    "InputError": "input",
    "ConfigError": "config",
    "LLMError": "model",
    "ParseFailure": "model",
    "BudgetReached": "spending_limit",
    "InvalidAction": "input",
}


def error_kind(err: Exception) -> str:
    """What kind of problem ``err`` is, for scripts: ``input``, ``config``, ``model``, ..."""
    for cls in type(err).__mro__:
        if cls.__name__ in _ERROR_KINDS:
            return _ERROR_KINDS[cls.__name__]
    return type(err).__name__.lower()


def json_error(message: str, exit_code: int, kind: str) -> None:
    """The error as one JSON object on stdout (``--json``): a script reading stdout gets
    ``{"error": ..., "exit_code": n, "kind": ...}`` instead of nothing."""
    from silicolab.core.files import dumps

    typer.echo(dumps({"error": one_line(message), "exit_code": exit_code, "kind": kind}))


def _leave_ray_cluster() -> None:
    """Leave a Ray cluster the command joined (``--executor ray``) before exiting: half a
    second sooner than Ray's exit hook (see ``ray_executor.leave_cluster``)."""
    if "ray" in sys.modules:
        from silicolab.runtime.ray import leave_cluster

        leave_cluster()


def _usage_error(err: Exception) -> int:
    """Print a command-line usage error as one line (help when no arguments were given)."""
    ctx = getattr(err, "ctx", None)
    if type(err).__name__ == "NoArgsIsHelpError" and ctx is not None:
        typer.echo(ctx.get_help())
        return 2
    message = _usage_message(err)
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    typer.echo(f"error: {message}{hint}", err=True)
    return int(getattr(err, "exit_code", 2))


def _usage_message(err: Exception) -> str:
    """A click usage error's message on one line."""
    format_message = getattr(err, "format_message", None)
    return one_line(format_message() if format_message else str(err))


def one_line(message: str) -> str:
    """``message`` on one line (an error is one line on the console, whatever its source)."""
    return " ".join(message.split())


if __name__ == "__main__":
    main()
