"""``silicolab study ...``: the automated social science pipeline on the command line.

Kept apart from ``app.py`` so the study commands are one module; heavy imports happen
inside the commands, so ``silicolab --help`` stays fast.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from silicolab.cli.bounds import IN_FLIGHT_JOBS_HELP, LARGE_RUN
from silicolab.cli.common import (
    ConfigOpt,
    ExecutorOpt,
    JsonOpt,
    RayAddressOpt,
    ResumeOpt,
    RetryFailedOpt,
    RunsDirOpt,
    UsageCommand,
)
from silicolab.cli.option_groups import OptionGroup, with_groups

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


RunDirArg = Annotated[
    Path,
    typer.Argument(
        metavar="RUN_DIR", help="A study run directory (runs/...-study-...) or the demo's."
    ),
]


@study_app.command("list-examples")
def list_examples(
    write: Annotated[
        Path | None,
        typer.Option(
            "--write",
            help="Copy the examples' YAML files into the folder DIR; a file you edited "
            "there is kept unless you add --force.",
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="With --write: overwrite edited example files.")
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """The paper's four studies, built in: name, scenario, causes, conditions."""
    from silicolab.report import print_table
    from silicolab.studies.design import factorial_size
    from silicolab.studies.examples import EXAMPLES, load_example, write_examples

    if write is not None:
        write_examples(write, force=force)
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
    if json_out:
        from silicolab.core.files import dumps

        typer.echo(dumps({"examples": rows}))
        return
    columns = [(k, k) for k in ("name", "conditions", "outcome", "causes", "protocol")]
    print_table(rows, columns, title="built-in studies (silicolab study run NAME)")


#: ``--model``, ``--base-url``: the scientist's (and, in ``study run``, every role's) model.
ScientistGroup = Annotated[
    dict[str, Any] | None, OptionGroup((("model", ModelOpt, None), ("base_url", BaseUrlOpt, None)))
]
ScientistTemperatureOpt = Annotated[
    float | None,
    typer.Option(
        "--scientist-temperature",
        min=0.0,
        max=2.0,
        help="Sampling temperature of the scientist model (default: 0.4 for hypotheses and "
        "the follow-on plan, 0 for predictions); recorded with the result.",
    ),
]
PredictConditionsOpt = Annotated[
    int | None,
    typer.Option(
        "--predict-conditions",
        min=1,
        help="Conditions the scientist predicts (predict-y, model LOO); default: every "
        "one, as in the paper; N: a seeded sample of N.",
    ),
]


@study_app.command("hypothesis", cls=UsageCommand)
@with_groups
def hypothesis(
    scenario: Annotated[
        str | None,
        typer.Argument(help="The social scenario, in a sentence or two (not with --resume)."),
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the YAML.")] = Path(
        "hypothesis.yaml"
    ),
    causes: Annotated[
        int | None, typer.Option(min=1, max=6, help="How many causes to propose [default: 3].")
    ] = None,
    seed: Annotated[
        int | None, typer.Option(min=0, help="Seed of the scientist's samples [default: 0].")
    ] = None,
    scientist_temperature: ScientistTemperatureOpt = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            help="Continue a chain that failed: FILE is its hypothesis file (or its "
            "FILE.steps.jsonl journal); accepted steps are replayed without a model call.",
        ),
    ] = None,
    scientist: ScientistGroup = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Ask the scientist model for a hypothesized SCM of SCENARIO and write it as an
    editable YAML file; then run it with 'silicolab study run --hypothesis FILE'. Every
    accepted step is kept in FILE's .steps.jsonl journal as it is taken, so a failed chain
    continues with 'silicolab study hypothesis --resume FILE'."""
    from silicolab.cli.study._run import hypothesis_command

    hypothesis_command(
        scenario, out=out, causes=causes, seed=seed, temperature=scientist_temperature,
        resume=resume, config=config, json_out=json_out, **(scientist or {}),
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
ReplicatesOpt = Annotated[
    int,
    typer.Option(
        min=1, help="Run each condition R independent times (each replicate its own draws)."
    ),
]
AggregateOpt = Annotated[
    bool,
    typer.Option(
        "--aggregate-replicates",
        help="Fit on each condition's mean over its replicates (default: every run a row).",
    ),
]


class AgentNames(StrEnum):
    roles = "roles"
    random = "random"


AgentNamesOpt = Annotated[
    AgentNames,
    typer.Option(
        help="roles: agents are called by their role (buyer, seller); random: seeded human "
        "names, recorded per condition (LLM subjects)."
    ),
]


class SurveyOrder(StrEnum):
    at_once = "at_once"
    in_turn = "in_turn"


SurveyOpt = Annotated[
    SurveyOrder,
    typer.Option(
        help="at_once: each respondent answers all its survey questions from its state "
        "after the conversation, concurrently (no answer sees another); in_turn: one after "
        "another, each seeing the earlier answers (LLM subjects)."
    ),
]
MaxConditionsOpt = Annotated[
    int,
    typer.Option(min=1, help="Refuse designs of more runs (conditions x replicates) than this."),
]
SeedOpt = Annotated[int, typer.Option(min=0, help="Seed (design subset, conversations).")]
JobsOpt = Annotated[
    int, typer.Option(min=1, help=f"Conditions run concurrently {IN_FLIGHT_JOBS_HELP}.")
]
StatementTokensOpt = Annotated[
    int, typer.Option(min=8, help="Cap on the length of each statement, in tokens.")
]
InteractionsOpt = Annotated[
    bool, typer.Option("--interactions", help="Also fit pairwise interactions (LR/Wald).")
]
DropCappedOpt = Annotated[
    bool,
    typer.Option(
        "--drop-capped",
        help="Leave out runs that hit the statement cap, in the fit and the predictions.",
    ),
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
    float | None,
    typer.Option(
        min=0,
        help="Spending limit in USD: refused up front when a paid model's price is unknown "
        "or the plan may cost more; during the run no new paid call is made once the "
        "actual spend reaches it (the run ends interrupted, exit 4; continue with "
        "--resume and a higher --max-cost). Cached and local calls are free.",
    ),
]
PriceInOpt = Annotated[
    float | None,
    typer.Option(
        "--price-in",
        min=0,
        help="USD per 1M input tokens of the paid models (with --price-out); overrides "
        "silicolab.yaml's prices: and the built-in table. Not stored in run.json.",
    ),
]
PriceOutOpt = Annotated[
    float | None,
    typer.Option(
        "--price-out", min=0, help="USD per 1M output tokens of the paid models (with --price-in)."
    ),
]


@study_app.command("run", cls=UsageCommand)
@with_groups
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
    replicates: ReplicatesOpt = 1,
    aggregate_replicates: AggregateOpt = False,
    agent_names: AgentNamesOpt = AgentNames.roles,
    survey: SurveyOpt = SurveyOrder.at_once,
    max_conditions: MaxConditionsOpt = LARGE_RUN,
    seed: SeedOpt = 0,
    jobs: JobsOpt = 16,
    statement_tokens: StatementTokensOpt = 300,
    interactions: InteractionsOpt = False,
    drop_capped: DropCappedOpt = False,
    predict: PredictOpt = False,
    predict_conditions: PredictConditionsOpt = None,
    follow_on: FollowOnOpt = False,
    scientist_temperature: ScientistTemperatureOpt = None,
    price_rule: PriceRuleOpt = PriceRule.second_dropout,
    yes: YesOpt = False,
    max_cost: MaxCostOpt = None,
    price_in: PriceInOpt = None,
    price_out: PriceOutOpt = None,
    resume: ResumeOpt = False,
    retry_failed: RetryFailedOpt = False,
    scientist: ScientistGroup = None,
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

    Money: the plan shows the cost range and where its prices come from (silicolab.yaml,
    --price-in/--price-out, or the built-in table of common OpenAI and Anthropic models,
    with its date); --max-cost USD is a limit that holds during the run.
    """
    from silicolab.cli.options import explicit_options
    from silicolab.cli.study._run import cli_prices, run_study_command
    from silicolab.runtime.choice import ExecutorChoice

    options = {
        name: getattr(value, "value", value)
        for name, value in ctx.params.items()
        if name not in ("ctx", "example", "hypothesis", "yes", "resume", "retry_failed",
                        "json_out", "executor", "ray_address", "price_in", "price_out")
    }  # fmt: skip
    options["prices"] = cli_prices(price_in, price_out)
    options["executor"] = ExecutorChoice(executor, ray_address).check()
    run_study_command(
        example=example, hypothesis_file=hypothesis, options=options,
        typed=explicit_options(ctx), resume=resume, retry_failed=retry_failed, yes=yes,
        json_out=json_out,
    )  # fmt: skip


@study_app.command("fit", cls=UsageCommand)
def fit(
    run_dir: RunDirArg,
    interactions: Annotated[
        bool, typer.Option("--interactions", help="Also fit pairwise interactions (LR/Wald).")
    ] = False,
    drop_capped: Annotated[
        bool,
        typer.Option(
            "--drop-capped",
            help="Leave out runs that hit the statement cap (always, if the run did).",
        ),
    ] = False,
    outcome: Annotated[
        str | None,
        typer.Option(
            "--outcome",
            help="Fit the hypothesized causes to another measured column, e.g. n_statements.",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Write the fit JSON here (a file or a folder), not into RUN_DIR."
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Refit a study's data (e.g. with interactions, or for another outcome column)
    without rerunning anything; the result is printed and written as fit-*.json beside
    the record (or to --out: a read-only run needs it). Works on study runs and on the
    demo's run."""
    from silicolab.cli.study._fit import fit_command

    fit_command(
        run_dir, interactions=interactions, drop_capped=drop_capped, outcome=outcome,
        json_out=json_out, out=out,
    )  # fmt: skip


@study_app.command("predict", cls=UsageCommand)
@with_groups
def predict_cmd(
    run_dir: RunDirArg,
    predict_conditions: Annotated[
        int | None,
        typer.Option(
            "--predict-conditions",
            "--max-conditions",
            min=1,
            help="Conditions the scientist predicts; default: every one (the paper's "
            "protocol); N: a seeded sample of N.",
        ),
    ] = None,
    scientist_temperature: ScientistTemperatureOpt = None,
    scientist: ScientistGroup = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Predict-y, predict-β and leave-one-out predictions for a study (or the demo's), on
    the rows its fit used; written as predictions.json beside its record."""
    from silicolab.cli.study._run import predict_command

    predict_command(
        run_dir, conditions=predict_conditions, temperature=scientist_temperature,
        config=config, json_out=json_out, **(scientist or {}),
    )  # fmt: skip


@study_app.command("follow-on", cls=UsageCommand)
@with_groups
def follow_on_cmd(
    run_dir: RunDirArg,
    scientist: ScientistGroup = None,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Where to write the follow-on hypothesis.")
    ] = Path("follow-on.yaml"),
    scientist_temperature: ScientistTemperatureOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Plan the follow-on experiment of a study (or the demo's) from its fit: drop
    non-significant causes, propose new ones, and write its hypothesis; run it with
    'study run --hypothesis'."""
    from silicolab.cli.study._run import follow_on_command

    follow_on_command(
        run_dir, out=out, temperature=scientist_temperature, config=config, json_out=json_out,
        **(scientist or {}),
    )  # fmt: skip


class DiscoveryMethod(StrEnum):
    ges = "ges"
    pc = "pc"


@study_app.command("discover", cls=UsageCommand)
def discover_cmd(
    run_dir: RunDirArg,
    method: Annotated[
        DiscoveryMethod,
        typer.Option(
            "--method",
            help="Discovery algorithm on the study's numeric data: ges (greedy equivalence "
            "search, as in the paper's section 5) or pc.",
        ),
    ] = DiscoveryMethod.ges,
    json_out: JsonOpt = False,
) -> None:
    """Causal discovery (GES or PC, causal-learn) on a finished study's data, compared with
    the hypothesized graph: an edge table, SHD and edge precision/recall/F1; written as
    discovery-<method>.json beside the record. The algorithm is not told which variables
    were randomized."""
    from silicolab.cli.study._discover import discover_study_command

    discover_study_command(run_dir, method=method.value, json_out=json_out)


__all__ = ["study_app"]
