"""``silicolab bench ...``: the benchmark suites, run resumably beside the published numbers.

One module per command group (``app.py`` joins them). Every bench command is a thin layer
over :func:`silicolab.api.run_bench` (``cli.bench``: the typed options passed on, the
result printed); the commands here only declare their options, whose defaults are the
facade's (a test checks they agree). Heavy imports happen inside the commands, so
``silicolab --help`` stays fast.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from silicolab.cli.bounds import BENCH_JOBS_HELP, YES_HELP
from silicolab.cli.common import ExecutorOpt, RayAddressOpt
from silicolab.cli.option_groups import (
    ExecutorGroup,
    LatestRunGroup,
    ModelGroup,
    OptionGroup,
    with_groups,
)

JobsOpt = Annotated[int, typer.Option(min=1, help=f"Units run at once: {BENCH_JOBS_HELP}.")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help=YES_HELP)]


def units_group(jobs: int) -> Any:
    """``--jobs`` (default ``jobs``: the facade's for the family), ``--yes``,
    ``--executor``, ``--ray-address``: how a bench command's units run."""
    options = (("jobs", JobsOpt, jobs), ("yes", YesOpt, False), ("executor", ExecutorOpt, "local"))
    group = OptionGroup((*options, ("ray_address", RayAddressOpt, None)))
    return Annotated[dict[str, Any] | None, group]


CausalabUnits = units_group(jobs=8)
BoxinggymUnits = units_group(jobs=2)
EpisodesUnits = units_group(jobs=1)


#: The scientist flag was --agent before the glossary (docs/architecture.md); kept one release.
_OLD_FLAG = "(--agent: its old name, kept for one release.)"
#: The scientist option of the benches whose scientists need no extra package.
SimpleScientistOpt = Annotated[
    str,
    typer.Option("--scientist", "--agent", help=f"reference (no LLM), random, or llm. {_OLD_FLAG}"),
]

bench_app = typer.Typer(
    help="Run benchmark suites resumably and compare with the published numbers.",
    no_args_is_help=True,
)


@bench_app.command("discovery")
@with_groups
def bench_discovery(
    ctx: typer.Context,
    methods: Annotated[str, typer.Option(help="Comma-separated method names.")] = (
        "pc,exact_scp,exact,direct_lingam"
    ),
    datasets: Annotated[str, typer.Option(help="Comma-separated datasets, or 'all'.")] = "all",
    models: ModelGroup = None,
    jobs: JobsOpt = 2,
    executors: ExecutorGroup = None,
    fidelity: Annotated[
        str,
        typer.Option(
            help="MAC debaters (meta-debate, debate-coding, hybrids): faithful (the paper's "
            "instructions) or fixed (ours; docs/mac.md)."
        ),
    ] = "faithful",
    run: LatestRunGroup = None,
) -> None:
    """Causal discovery on Auto MPG, DWD climate and Sachs, beside the MAC paper's table.

    exact_scp reads Exact Search's output the way the paper did (edges reversed) to
    reproduce its rows; exact is the correctly oriented search, reported as our own row.
    Add LLM methods (mac_meta_debate, mac_debate_coding, ...) with --model.
    """
    from silicolab.cli.bench._run import run_bench_command

    run_bench_command("discovery", ctx)


@bench_app.command("causalab")
@with_groups
def bench_causalab(
    ctx: typer.Context,
    suite: Annotated[
        str,
        typer.Option(
            help="Suites: 3nodes..7nodes (the main sweep), a comma "
            "list such as 4nodes,4nodes_quad_hard, or 'all'."
        ),
    ] = ("3nodes..7nodes"),
    agent: SimpleScientistOpt = "reference",
    models: ModelGroup = None,
    episodes: Annotated[int, typer.Option(min=1, max=50, help="Graphs per suite.")] = 50,
    units: CausalabUnits = None,
    verify: Annotated[
        str, typer.Option(help="LLM verification: none, per_step or before_commit.")
    ] = "none",
    fidelity: Annotated[
        str,
        typer.Option(
            help="fixed (deterministic lab, our LLM agent) or faithful (the published quirks "
            "and the paper's LLM agent settings; docs/causalab.md)."
        ),
    ] = "fixed",
    seed: Annotated[int, typer.Option(help="Seed of the lab instances.")] = 0,
    regime: Annotated[
        str | None,
        typer.Option(
            help="Also show the paper's anchors of one scaling regime: observation-only, "
            "intervention-only or mixed, and whether this run matches it."
        ),
    ] = None,
    observations: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Prior records per episode (default: the suite's, 2); with --interventions, "
            "one of the paper's scaling settings, e.g. 3 and 0 (observation-only).",
        ),
    ] = None,
    interventions: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Intervention budget per episode (default: the suite's, 4(k-1)); 0 is "
            "observation-only. A run off the main setting is not compared with the main "
            "results; --regime shows its regime's points.",
        ),
    ] = None,
    run: LatestRunGroup = None,
) -> None:
    """CausaLab crystal-lab episodes: task accuracy, edge F1, SHD, weight and root F1,
    beside the CausaLab paper's numbers for the same suite."""
    from silicolab.cli.bench._run import run_bench_command

    run_bench_command("causalab", ctx)


@bench_app.command("boxinggym")
@with_groups
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
        typer.Option(
            "--scientist",
            "--agent",
            help="reference (greedy-EIG Bayesian, no LLM; once boed), random, llm, apprentice "
            "(Box's Apprentice: LLM + PyMC programs) or statistician (true model family fitted "
            f"in PyMC, no LLM); the last two need silicolab[ppl]. {_OLD_FLAG}",
        ),
    ] = "reference",
    models: ModelGroup = None,
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
    units: BoxinggymUnits = None,
    fidelity: Annotated[
        str, typer.Option(help="fixed (bugs fixed) or faithful (as published).")
    ] = "fixed",
    run: LatestRunGroup = None,
) -> None:
    """BoxingGym: 10 steps of experimental design per goal, standardized error before and
    after, EI regret, beside the BoxingGym paper's Tables 1-3."""
    from silicolab.cli.bench._run import run_bench_command

    run_bench_command("boxinggym", ctx)


@bench_app.command("episodes")
@with_groups
def bench_episodes(
    ctx: typer.Context,
    env: Annotated[
        str, typer.Option(help="Comma list of registered environment ids, e.g. causalab.")
    ] = "causalab",
    agent: SimpleScientistOpt = "reference",
    models: ModelGroup = None,
    seeds: Annotated[int, typer.Option(min=1, help="Seeds 1..n per environment.")] = 3,
    units: EpisodesUnits = None,
    run: LatestRunGroup = None,
) -> None:
    """Episodes of any registered environment family: the mean of each environment's
    headline scores and health counters (no published anchors)."""
    from silicolab.cli.bench._run import run_bench_command

    run_bench_command("episodes", ctx)
