"""``silicolab sim ...``: run generative agent-based simulations: the built-in worlds,
the worked examples and your own simulation files.

One module per command group (``app.py`` joins them); the work happens in ``cli.sim``,
imported inside the command so ``silicolab --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from silicolab.cli.common import JsonOpt, UsageCommand
from silicolab.cli.option_groups import RunGroup, model_group, with_groups

SubjectModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="Model spec of the simulated people (the subject role) and, unless --gm-model "
        "names another, of the game master (default: the subject role's configured model, "
        "or the world's offline script when none is configured).",
    ),
]
SubjectModelGroup = model_group(SubjectModelOpt)

sim_app = typer.Typer(
    help="Run generative agent-based simulations: 'silicolab sim list' shows the built-in "
    "worlds; 'silicolab sim run NAME' runs one, 'silicolab sim run NAME --write FILE' copies "
    "it to edit and 'silicolab sim run FILE.yaml' runs your file.",
    no_args_is_help=True,
)


@sim_app.command("list")
def sim_list(json_out: JsonOpt = False) -> None:
    """The built-in worlds, one line each (name, game master, description)."""
    from silicolab.report import print_table
    from silicolab.sim.worlds import list_worlds

    rows = list_worlds()
    if json_out:
        from silicolab.core.files import dumps

        typer.echo(dumps({"worlds": rows}))
        return
    columns = [("name", "name"), ("game_master", "game master"), ("description", "description")]
    print_table(rows, columns, title="built-in worlds (silicolab sim run NAME)")


@sim_app.command("run", cls=UsageCommand)
@with_groups
def sim_run(
    name: Annotated[
        str,
        typer.Argument(
            metavar="NAME|FILE",
            help="A built-in world ('silicolab sim list') or a simulation file (.yaml).",
        ),
    ],
    models: SubjectModelGroup = None,
    gm_model: Annotated[
        str | None,
        typer.Option("--gm-model", help="Model spec of the game master (default: --model's)."),
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the episode.")] = 0,
    write: Annotated[
        Path | None,
        typer.Option(
            "--write",
            metavar="FILE",
            help="Copy the built-in world NAME to FILE for editing instead of running it "
            "(an existing different file is kept unless --force).",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="With --write: overwrite FILE.")] = False,
    run: RunGroup = None,
) -> None:
    """Run a simulation and write its run directory: record.json, outcome.csv and
    timeline.csv (the outcome tables), transcript.html and report.html.

    Offline by default: every language-model person and game master answers from the
    world's offline script, rule-based ones need no model. --model SPEC (or a configured
    subject role) makes them real language-model agents; --model sets the subject role's
    model, never the scientist's. A killed run continues with --resume.
    """
    if write is not None:
        from silicolab.sim.worlds import write_world

        path = write_world(name, write, force=force)
        typer.echo(f"wrote {path}: edit it, then run 'silicolab sim run {path}'")
        return
    from silicolab.cli.options import explicit_options
    from silicolab.cli.sim._run import run_sim

    run_sim(
        name,
        seed=seed,
        gm_model=gm_model,
        explicit=explicit_options(),
        **(models or {}),
        **(run or {}),
    )
