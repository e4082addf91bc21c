"""``silicolab sim ...``: run the example generative agent-based simulations.

One module per command group (``app.py`` joins them); the work happens in ``cli.sim``,
imported inside the command so ``silicolab --help`` stays fast.
"""

from __future__ import annotations

from typing import Annotated

import typer

from silicolab.cli.common import UsageCommand
from silicolab.cli.option_groups import RunGroup, model_group, with_groups

SubjectModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="Model spec of the simulated people (the subject role; default: the subject "
        "role's configured model, or the offline scripted agents when none is configured).",
    ),
]
SubjectModelGroup = model_group(SubjectModelOpt)

sim_app = typer.Typer(
    help="Run generative agent-based simulations (examples: auction, bargaining, market).",
    no_args_is_help=True,
)


@sim_app.command("run", cls=UsageCommand)
@with_groups
def sim_run(
    name: Annotated[str, typer.Argument(help="Example to run: auction, bargaining or market.")],
    models: SubjectModelGroup = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the episode.")] = 0,
    run: RunGroup = None,
) -> None:
    """Run an example simulation and write its run directory with an HTML transcript.

    Offline by default (rule agents and the scripted model); --model SPEC (or a configured
    subject role) makes the bargaining agents real language-model agents. --model sets
    the subject role's model, never the scientist's.
    """
    from silicolab.cli.options import explicit_options
    from silicolab.cli.sim._run import run_sim

    run_sim(name, seed=seed, explicit=explicit_options(), **(models or {}), **(run or {}))
