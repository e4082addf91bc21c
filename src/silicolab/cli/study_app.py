"""``silicolab study ...``: the automated social science pipeline on the command line.

Kept apart from ``app.py`` so the study commands are one module; heavy imports happen
inside the commands, so ``silicolab --help`` stays fast.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from silicolab.cli.common import (
    ConfigOpt,
    ExecutorOpt,
    JsonOpt,
    RayAddressOpt,
    ResumeOpt,
    RunsDirOpt,
)
from silicolab.core.errors import InputError

study_app = typer.Typer(
    help=(
        "Automated social science: scenario -> hypothesized SCM -> LLM-agent experiment -> "
        "fitted SCM -> predictions -> follow-on. Start with 'silicolab study list-examples' "
        "or 'silicolab study run auction --subjects rule'."
    ),
    no_args_is_help=True,
)

ModelOpt = Annotated[
    str | None,
    typer.Option("--model", help="Model spec for every role, e.g. openai:gpt-4o-mini."),
]
BaseUrlOpt = Annotated[
    str | None, typer.Option("--base-url", help="OpenAI-compatible server URL for --model.")
]


class Subjects(StrEnum):
    llm = "llm"
    rule = "rule"
    world = "world"


class PriceRule(StrEnum):
    second_dropout = "second_dropout"
    next_increment = "next_increment"


RunDirArg = Annotated[Path, typer.Argument(help="A study run directory (runs/...-study-...).")]


@study_app.command("list-examples")
def list_examples(
    write: Annotated[
        Path | None, typer.Option("--write", help="Copy the examples' YAML files into DIR.")
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """The paper's four studies, built in: name, scenario, causes, conditions."""
    from silicolab.report import print_table
    from silicolab.studies.design import factorial_size
    from silicolab.studies.examples import EXAMPLES, example_text, load_example

    rows = []
    for name in EXAMPLES:
        h = load_example(name)
        rows.append(
            {
                "name": name,
                "scenario": h.scenario,
                "outcome": h.outcome.name,
                "causes": ", ".join(v.name for v in h.treatments),
                "conditions": factorial_size(h),
                "protocol": h.protocol,
            }
        )
        if write is not None:
            write.mkdir(parents=True, exist_ok=True)
            (write / f"{name}.yaml").write_text(example_text(name), encoding="utf-8")
    if json_out:
        typer.echo(json.dumps({"examples": rows}))
        return
    columns = [(k, k) for k in ("name", "conditions", "outcome", "causes", "protocol")]
    print_table(rows, columns, title="built-in studies (silicolab study run NAME)")


@study_app.command("hypothesis")
def hypothesis(
    scenario: Annotated[str, typer.Argument(help="The social scenario, in a sentence or two.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the YAML.")] = Path(
        "hypothesis.yaml"
    ),
    causes: Annotated[int, typer.Option(min=1, max=6, help="How many causes to propose.")] = 3,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the scientist's samples.")] = 0,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Ask the scientist model for a hypothesized SCM of SCENARIO and write it as an
    editable YAML file; then run it with 'silicolab study run --hypothesis FILE'."""
    from silicolab.cli.study import hypothesis_command

    hypothesis_command(
        scenario, out=out, causes=causes, seed=seed, model=model, base_url=base_url,
        config=config, json_out=json_out,
    )  # fmt: skip


SubjectsOpt = Annotated[
    Subjects,
    typer.Option(
        help="llm: language-model agents; rule: rule-based agents (auction); world: the "
        "offline scripted world whose answers follow a hidden SCM."
    ),
]
ConditionsOpt = Annotated[
    int | None, typer.Option(min=1, help="Run a seeded random subset of N conditions.")
]
MaxConditionsOpt = Annotated[int, typer.Option(min=1, help="Refuse designs larger than this.")]
SeedOpt = Annotated[int, typer.Option(min=0, help="Seed (design subset, conversations).")]
JobsOpt = Annotated[int, typer.Option(min=1, help="Conditions run concurrently.")]
StatementTokensOpt = Annotated[
    int, typer.Option(min=8, help="Cap on the length of each statement, in tokens.")
]
InteractionsOpt = Annotated[
    bool, typer.Option("--interactions", help="Also fit pairwise interactions (LR/Wald).")
]
DropCappedOpt = Annotated[
    bool, typer.Option("--drop-capped", help="Leave out runs that hit the statement cap.")
]
PredictOpt = Annotated[
    bool, typer.Option("--predict", help="Ask the scientist for predict-y/β and LOO.")
]
FollowOnOpt = Annotated[
    bool, typer.Option("--follow-on", help="Plan and run the follow-on experiment.")
]
PriceRuleOpt = Annotated[
    PriceRule, typer.Option(help="Auction price convention for --subjects rule.")
]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Skip the cost confirmation.")]
MaxCostOpt = Annotated[
    float | None, typer.Option(min=0, help="Refuse if the planned cost may exceed USD.")
]


@study_app.command("run")
def run(
    ctx: typer.Context,
    example: Annotated[
        str | None, typer.Argument(help="A built-in study: mug, bail, lawyer, auction.")
    ] = None,
    hypothesis: Annotated[
        Path | None, typer.Option("--hypothesis", help="A hypothesis YAML/JSON file.")
    ] = None,
    subjects: SubjectsOpt = Subjects.llm,
    conditions: ConditionsOpt = None,
    max_conditions: MaxConditionsOpt = 1000,
    seed: SeedOpt = 0,
    jobs: JobsOpt = 16,
    statement_tokens: StatementTokensOpt = 300,
    interactions: InteractionsOpt = False,
    drop_capped: DropCappedOpt = False,
    predict: PredictOpt = False,
    follow_on: FollowOnOpt = False,
    price_rule: PriceRuleOpt = PriceRule.second_dropout,
    yes: YesOpt = False,
    max_cost: MaxCostOpt = None,
    resume: ResumeOpt = False,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    runs_dir: RunsDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
    executor: ExecutorOpt = "local",
    ray_address: RayAddressOpt = None,
) -> None:
    """Run a study: every condition as a conversation, the survey, the fitted SCM.

    Examples: 'silicolab study run auction --subjects rule',
    'silicolab study run mug --conditions 40 --model openai:gpt-4o-mini',
    'silicolab study run --hypothesis my.yaml --predict --follow-on'.
    """
    from silicolab.cli.options import explicit_options
    from silicolab.cli.study import run_study_command, study_settings
    from silicolab.runtime.choice import ExecutorChoice

    settings, explicit = study_settings(ctx.params, explicit_options(ctx))
    if resume and (example is not None or hypothesis is not None):
        raise InputError("--resume continues the stored study; drop the study name/--hypothesis")
    run_study_command(
        example=example, hypothesis_file=hypothesis, settings=settings, explicit=explicit,
        resume=resume, yes=yes, max_cost=max_cost, model=model, base_url=base_url,
        runs_dir=runs_dir, config=config, json_out=json_out,
        executor=ExecutorChoice(executor, ray_address).check(),
    )  # fmt: skip


@study_app.command("fit")
def fit(
    run_dir: RunDirArg,
    interactions: Annotated[bool, typer.Option("--interactions")] = False,
    drop_capped: Annotated[bool, typer.Option("--drop-capped")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Refit a finished study's data (e.g. with interactions) without rerunning anything;
    the result is printed and written as fit-*.json beside the record."""
    from silicolab.cli.study import fit_command

    fit_command(run_dir, interactions=interactions, drop_capped=drop_capped, json_out=json_out)


@study_app.command("predict")
def predict_cmd(
    run_dir: RunDirArg,
    max_conditions: Annotated[int, typer.Option(min=1, help="LLM predictions to ask.")] = 50,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Predict-y, predict-β and leave-one-out predictions for a finished study; written
    as predictions.json beside its record."""
    from silicolab.cli.study import predict_command

    predict_command(
        run_dir, max_conditions=max_conditions, model=model, base_url=base_url,
        config=config, json_out=json_out,
    )  # fmt: skip


@study_app.command("follow-on")
def follow_on_cmd(
    run_dir: RunDirArg,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Where to write the follow-on hypothesis.")
    ] = Path("follow-on.yaml"),
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Plan the follow-on experiment of a finished study (drop non-significant causes,
    propose new ones) and write its hypothesis; run it with 'study run --hypothesis'."""
    from silicolab.cli.study import follow_on_command

    follow_on_command(
        run_dir, out=out, model=model, base_url=base_url, config=config, json_out=json_out
    )


__all__ = ["study_app"]
