"""``silicolab``: the command-line entry point.

Every command that produces results prints a readable summary and accepts ``--json``
(one JSON object on stdout instead). Errors a user can fix print one line and exit 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from silicolab import __version__

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
cache_app = typer.Typer(
    help="Inspect or clear the exact-prompt LLM cache (a SQLite file; see cache_path).",
    no_args_is_help=True,
)
app.add_typer(cache_app, name="cache")
bench_app = typer.Typer(
    help="Run benchmark suites resumably and compare with the published numbers.",
    no_args_is_help=True,
)
app.add_typer(bench_app, name="bench")
sim_app = typer.Typer(
    help="Run generative agent-based simulations (examples: auction, bargaining, market).",
    no_args_is_help=True,
)
app.add_typer(sim_app, name="sim")
from silicolab.cli.study_app import study_app  # noqa: E402 - after the app it joins

app.add_typer(study_app, name="study")
from silicolab.cli.serve_app import serve_app  # noqa: E402 - after the app it joins

app.add_typer(serve_app, name="serve")

ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", help="Path to silicolab.yaml (default: ./silicolab.yaml)."),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON object on stdout instead of tables.")
]


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
    jobs: Annotated[int, typer.Option(min=1, help="Conditions run concurrently.")] = 16,
    resume: Annotated[
        bool, typer.Option("--resume", help="Finish the latest unfinished demo run.")
    ] = False,
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
    from silicolab.cli.demo import run_demo
    from silicolab.cli.options import explicit_options
    from silicolab.core.config import load_settings
    from silicolab.runs import check_root

    check_root(runs_dir or load_settings(config).runs_dir)  # before any run directory
    run_demo(
        runs_dir=runs_dir,
        conditions=conditions,
        seed=seed,
        jobs=jobs,
        resume=resume,
        explicit=explicit_options(ctx),
        config=config,
        json_out=json_out,
    )


@app.command()
def models(config: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Show the model configured for each role and whether its API key is set (never the key)."""
    from silicolab.cli.info import show_models

    show_models(config=config, json_out=json_out)


@app.command()
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
    api_key_env: Annotated[
        str | None, typer.Option("--api-key-env", help="Environment variable holding the key.")
    ] = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Send one prompt to a configured model and print the reply with its usage.

    A quick check that a role's model, server and key work, e.g.
    'silicolab ask "Say hi" --role judge'.
    """
    from silicolab.cli.info import ask_model

    ask_model(
        prompt,
        role=role,
        model=model,
        max_tokens=max_tokens,
        base_url=base_url,
        api_key_env=api_key_env,
        config=config,
        json_out=json_out,
    )


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


@app.command()
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
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = None,
    seed: Annotated[
        int | None,
        typer.Option(min=0, help="Seed of methods that sample (LiNGAM, the LLM's sampling seed)."),
    ] = None,
    resume: ResumeOpt = False,
    runs_dir: RunsDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Recover a causal graph from data and score it against the truth when one is known.

    Examples: 'silicolab discover --dataset sachs --method pc',
    'silicolab discover --data my.csv --method direct_lingam --forbid Age->Sex'.
    """
    from silicolab.cli.discover import run_discover
    from silicolab.cli.options import explicit_options

    run_discover(
        dataset=dataset,
        data=data,
        truth_edges=truth_edges,
        method=method,
        params=param,
        require=require,
        forbid=forbid,
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        seed=seed,
        resume=resume,
        explicit=explicit_options(),
        runs_dir=runs_dir,
        config=config,
        json_out=json_out,
    )


@bench_app.command("discovery")
def bench_discovery(
    ctx: typer.Context,
    methods: Annotated[str, typer.Option(help="Comma-separated method names.")] = (
        "pc,exact_scp,exact,direct_lingam"
    ),
    datasets: Annotated[str, typer.Option(help="Comma-separated datasets, or 'all'.")] = "all",
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = None,
    jobs: Annotated[int, typer.Option(min=1, help="Units run concurrently.")] = 2,
    resume: Annotated[bool, typer.Option("--resume", help="Finish the latest run.")] = False,
    runs_dir: RunsDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Causal discovery on Auto MPG, DWD climate and Sachs, beside the MAC paper's table.

    exact_scp reads Exact Search's output the way the paper did (edges reversed) to
    reproduce its rows; exact is the correctly oriented search, reported as our own row.
    Add LLM methods (mac_meta_debate, mac_debate_coding, ...) with --model.
    """
    from silicolab.cli.bench import Connection, run_bench_discovery

    run_bench_discovery(
        settings={"methods": methods, "datasets": datasets, "model": model},
        **_bench_flow(
            ctx, Connection(config, base_url, api_key_env), jobs, resume, runs_dir, json_out
        ),
    )


@bench_app.command("causalab")
def bench_causalab(
    ctx: typer.Context,
    suite: Annotated[
        str,
        typer.Option(
            help="Suites: 3nodes..7nodes (the main sweep), a comma "
            "list such as 4nodes,4nodes_quad_hard, or 'all'."
        ),
    ] = ("3nodes..7nodes"),
    agent: Annotated[str, typer.Option(help="reference (no LLM), random, or llm.")] = "reference",
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = None,
    episodes: Annotated[int, typer.Option(min=1, max=50, help="Graphs per suite.")] = 50,
    jobs: Annotated[int, typer.Option(min=1, help="Episodes run in parallel.")] = 8,
    verify: Annotated[
        str, typer.Option(help="LLM verification: none, per_step or before_commit.")
    ] = "none",
    fidelity: Annotated[
        str, typer.Option(help="fixed (deterministic) or faithful (the published quirks).")
    ] = "fixed",
    seed: Annotated[int, typer.Option(help="Seed of the lab instances.")] = 0,
    resume: Annotated[bool, typer.Option("--resume", help="Finish the latest run.")] = False,
    runs_dir: RunsDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """CausaLab crystal-lab episodes: task accuracy, edge F1, SHD, weight and root F1,
    beside the CausaLab paper's numbers for the same suite."""
    from silicolab.cli.bench import Connection, run_bench_causalab

    settings = {"suite": suite, "agent": agent, "model": model, "episodes": episodes}
    settings.update(verify=verify, fidelity=fidelity, seed=seed)
    run_bench_causalab(
        settings=settings,
        **_bench_flow(
            ctx, Connection(config, base_url, api_key_env), jobs, resume, runs_dir, json_out
        ),
    )


@bench_app.command("boxinggym")
def bench_boxinggym(
    ctx: typer.Context,
    env: Annotated[
        str,
        typer.Option(
            help="'all' (the paper's goals), or a comma list of "
            "env or env:goal, e.g. dugongs,death_process:infection."
        ),
    ] = ("all"),
    agent: Annotated[
        str,
        typer.Option(help="reference (greedy-EIG Bayesian, no LLM; once boed), random, or llm."),
    ] = "reference",
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = None,
    seeds: Annotated[int, typer.Option(min=1, help="Seeds 1..n per goal.")] = 5,
    prior: Annotated[
        bool, typer.Option("--prior/--no-prior", help="With or without the domain story.")
    ] = True,
    communicate: Annotated[
        bool,
        typer.Option(
            "--communicate",
            help="Add the novice evaluation after a 200-word explanation (LLM agent).",
        ),
    ] = False,
    participant_model: Annotated[
        str | None,
        typer.Option(
            "--participant-model",
            help="Model spec whose words the simulated participants of emotion and moral "
            "machines speak (default: a plain template).",
        ),
    ] = None,
    jobs: Annotated[int, typer.Option(min=1, help="Episodes run in parallel.")] = 2,
    fidelity: Annotated[
        str, typer.Option(help="fixed (bugs fixed) or faithful (as published).")
    ] = "fixed",
    resume: Annotated[bool, typer.Option("--resume", help="Finish the latest run.")] = False,
    runs_dir: RunsDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """BoxingGym: 10 steps of experimental design per goal, standardized error before and
    after, EI regret, beside the BoxingGym paper's Tables 1-3."""
    from silicolab.cli.bench import Connection, run_bench_boxinggym

    settings = {"env": env, "agent": agent, "model": model, "seeds": seeds, "prior": prior}
    settings.update(communicate=communicate, participant_model=participant_model, fidelity=fidelity)
    run_bench_boxinggym(
        settings=settings,
        **_bench_flow(
            ctx, Connection(config, base_url, api_key_env), jobs, resume, runs_dir, json_out
        ),
    )


@bench_app.command("episodes")
def bench_episodes(
    ctx: typer.Context,
    env: Annotated[
        str, typer.Option(help="Comma list of registered environment ids, e.g. causalab.")
    ] = "causalab",
    agent: Annotated[str, typer.Option(help="reference (no LLM), random, or llm.")] = "reference",
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = None,
    seeds: Annotated[int, typer.Option(min=1, help="Seeds 1..n per environment.")] = 3,
    jobs: Annotated[int, typer.Option(min=1, help="Episodes run in parallel.")] = 1,
    resume: Annotated[bool, typer.Option("--resume", help="Finish the latest run.")] = False,
    runs_dir: RunsDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Episodes of any registered environment family: the mean of each environment's
    headline scores and health counters (no published anchors)."""
    from silicolab.cli.bench import Connection, run_bench_episodes

    run_bench_episodes(
        settings={"env": env, "agent": agent, "model": model, "seeds": seeds},
        **_bench_flow(
            ctx, Connection(config, base_url, api_key_env), jobs, resume, runs_dir, json_out
        ),
    )


def _bench_flow(
    ctx: typer.Context,
    connection: Any,
    jobs: int,
    resume: bool,
    runs_dir: Path | None,
    json_out: bool,
) -> dict[str, Any]:
    """The options every bench command passes on, with the names the user typed."""
    from silicolab.cli.bench import typed_options

    return {
        "connection": connection,
        "jobs": jobs,
        "explicit": typed_options(ctx),
        "resume": resume,
        "runs_dir": runs_dir,
        "config": connection.config,
        "json_out": json_out,
    }


@sim_app.command("run")
def sim_run(
    name: Annotated[str, typer.Argument(help="Example to run: auction, bargaining or market.")],
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the episode.")] = 0,
    resume: ResumeOpt = False,
    runs_dir: RunsDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Run an example simulation and write its run directory with an HTML transcript.

    Offline by default (rule agents and the scripted model); --model SPEC makes the
    bargaining agents real language-model agents.
    """
    from silicolab.cli.options import explicit_options
    from silicolab.cli.sim import run_sim

    run_sim(
        name,
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        seed=seed,
        resume=resume,
        explicit=explicit_options(),
        runs_dir=runs_dir,
        config=config,
        json_out=json_out,
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


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app, turning every error a user can fix into one
    line on stderr and exit 2 (usage errors included), SIGTERM and Ctrl-C into an
    ``interrupted`` run with a resume hint (exit 143 / 130)."""
    from silicolab.cli import signals
    from silicolab.core.errors import SilicolabError

    signals.install()
    try:
        code = app(args=argv, standalone_mode=False)
    except SilicolabError as err:
        typer.echo(f"error: {one_line(str(err))}", err=True)
        sys.exit(err.exit_code)
    except (KeyboardInterrupt, typer.Abort) as err:
        typer.echo(signals.RESUME_HINT, err=True)
        sys.exit(signals.exit_code(err))
    except typer.exceptions.TyperException as err:  # click's usage errors
        sys.exit(_usage_error(err))
    if code == signals.INTERRUPTED or signals.received():  # typer turns Ctrl-C into exit 130
        typer.echo(signals.RESUME_HINT, err=True)
        sys.exit(signals.exit_code())
    sys.exit(code if isinstance(code, int) else 0)


def _usage_error(err: Exception) -> int:
    """Print a command-line usage error as one line (help when no arguments were given)."""
    ctx = getattr(err, "ctx", None)
    if type(err).__name__ == "NoArgsIsHelpError" and ctx is not None:
        typer.echo(ctx.get_help())
        return 2
    format_message = getattr(err, "format_message", None)
    message = one_line(format_message() if format_message else str(err))
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    typer.echo(f"error: {message}{hint}", err=True)
    return int(getattr(err, "exit_code", 2))


def one_line(message: str) -> str:
    """``message`` on one line (an error is one line on the console, whatever its source)."""
    return " ".join(message.split())


if __name__ == "__main__":
    main()
