"""``silicolab sim ...``: run the example generative agent-based simulations.

One module per command group (``app.py`` joins them); the work happens in ``cli.sim``,
imported inside the command so ``silicolab --help`` stays fast.
"""

from __future__ import annotations

from typing import Annotated

import typer

from silicolab.cli.common import (
    BaseUrlOpt,
    ConfigOpt,
    JsonOpt,
    KeyEnvOpt,
    ResumeOpt,
    RetryFailedOpt,
    RunsDirOpt,
    UsageCommand,
)

SubjectModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="Model spec of the simulated people (the subject role; default: the subject "
        "role's configured model, or the offline scripted agents when none is configured).",
    ),
]

sim_app = typer.Typer(
    help="Run generative agent-based simulations (examples: auction, bargaining, market).",
    no_args_is_help=True,
)


@sim_app.command("run", cls=UsageCommand)
def sim_run(
    name: Annotated[str, typer.Argument(help="Example to run: auction, bargaining or market.")],
    model: SubjectModelOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the episode.")] = 0,
    resume: ResumeOpt = False,
    retry_failed: RetryFailedOpt = False,
    runs_dir: RunsDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Run an example simulation and write its run directory with an HTML transcript.

    Offline by default (rule agents and the scripted model); --model SPEC (or a configured
    subject role) makes the bargaining agents real language-model agents. --model sets
    the subject role's model, never the scientist's.
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
        retry_failed=retry_failed,
        explicit=explicit_options(),
        runs_dir=runs_dir,
        config=config,
        json_out=json_out,
    )
