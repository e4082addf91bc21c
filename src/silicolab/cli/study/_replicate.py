"""``silicolab study replicate``: one study under every subject model x wording x seed,
meta-analyzed per path (the work is :func:`silicolab.api.study_replicate.replicate_study`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from silicolab.cli.common import ConfigOpt, JsonOpt, RunsDirOpt, UsageCommand
from silicolab.cli.option_groups import ExecutorGroup, OptionGroup, with_groups
from silicolab.cli.study._app import (
    ConditionsOpt,
    MaxConditionsOpt,
    MaxCostOpt,
    StatementTokensOpt,
    study_app,
)

ModelsOpt = Annotated[
    str | None,
    typer.Option(
        "--models",
        help="Subject models to compare, comma-separated specs "
        "(e.g. openai:gpt-4o-mini,anthropic:claude-3-5-haiku-latest).",
    ),
]
WordingsOpt = Annotated[
    str,
    typer.Option(
        "--wordings",
        metavar="K|FILE",
        help="K wordings: the original and K-1 paraphrases by the scientist model (each "
        "checked to keep every treatment value, level and unit), or a YAML file of yours.",
    ),
]
#: ``--model``, ``--base-url`` in a replication: the scientist's model (the paraphrases);
#: the subjects' and the coordinator's are each variant's ``--models``.
ReplicationModelGroup = Annotated[
    dict[str, Any] | None,
    OptionGroup(
        (
            ("model", Annotated[str | None, typer.Option(
                "--model", help="The scientist's model spec: it writes the paraphrases of "
                "--wordings K. The subjects and the coordinator are each variant's --models.",
            )], None),
            ("base_url", Annotated[str | None, typer.Option(
                "--base-url", help="OpenAI-compatible server for --model and the --models.",
            )], None),
        )
    ),
]  # fmt: skip
ReplicationJobsOpt = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Conditions in flight in all, over every variant (default: 16 per variant, "
        "at most 256); each subject model's concurrency limit paces its calls.",
    ),
]


@study_app.command("replicate", cls=UsageCommand)
@with_groups
def replicate(
    ctx: typer.Context,
    example: Annotated[
        str | None, typer.Argument(help="A built-in study: mug, bail, lawyer, auction.")
    ] = None,
    hypothesis: Annotated[
        Path | None, typer.Option("--hypothesis", help="A hypothesis YAML/JSON file.")
    ] = None,
    models: ModelsOpt = None,
    wordings: WordingsOpt = "1",
    seeds: Annotated[int, typer.Option(min=1, help="Seeds per model and wording.")] = 1,
    subjects: Annotated[
        str,
        typer.Option(help="llm: the --models; world: the offline hidden-SCM world (a test)."),
    ] = "llm",
    conditions: ConditionsOpt = None,
    max_conditions: MaxConditionsOpt = 1000,
    jobs: ReplicationJobsOpt = None,
    statement_tokens: StatementTokensOpt = 300,
    max_cost: MaxCostOpt = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Finish the newest unfinished replication.")
    ] = False,
    scientist: ReplicationModelGroup = None,
    executor: ExecutorGroup = None,
    runs_dir: RunsDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Replicate a study across subject models, wordings and seeds and meta-analyze every
    path: pooled estimates, heterogeneity (tau², I², Q), a prediction interval, where the
    spread comes from, and a verdict per path with its rule.

    Example: 'silicolab study replicate mug --models openai:gpt-4o-mini,openai:gpt-4.1-mini
    --wordings 3 --seeds 2 --conditions 40'. Every (variant, condition) is a unit of one run:
    a killed replication continues with --resume (its stored settings; an option given
    with --resume must agree with them). --executor ray runs the units on a Ray cluster.
    """
    from silicolab.api.study_replicate import DEFAULTS
    from silicolab.cli.flow import emit
    from silicolab.cli.options import explicit_options
    from silicolab.cli.resume_target import resume_target

    if example is not None and hypothesis is not None:
        raise typer.BadParameter("give a built-in study or --hypothesis FILE, not both")
    from silicolab.api.study_replicate import replicate_study

    typed = explicit_options(ctx) & set(DEFAULTS)
    result = replicate_study(
        hypothesis if hypothesis is not None else example,
        models=models or (), wordings=int(wordings) if wordings.isdigit() else wordings,
        seeds=seeds, subjects=subjects, conditions=conditions, max_conditions=max_conditions,
        jobs=jobs, statement_tokens=statement_tokens, max_cost=max_cost,
        resume=resume_target(resume) if resume else None, runs_dir=runs_dir, config=config,
        typed=typed, **(scientist or {}), **(executor or {}),
    )  # fmt: skip
    out = result.to_dict()
    emit(out, json_out=json_out, show=lambda: _show(result), status=result.status,
         health=result.health)  # fmt: skip


def _show(result: Any) -> None:
    from silicolab.report import print_lines, print_table

    rows = result.to_dict()["paths"]
    columns = [("path", "path"), ("verdict", "verdict"), ("k", "k"), ("random", "random effects"),
               ("i2", "I²"), ("same_sign_share", "same sign"),
               ("significant_share", "p < .05")]  # fmt: skip
    print_table(rows, columns, title=f"replication: {result.record.get('study')}")
    lines = [f"{r['verdict']}: {r['rule']}" for r in {r["verdict"]: r for r in rows}.values()]
    lines.append(f"run directory: {result.run_dir}  (report: {result.run_dir / 'report.html'})")
    print_lines(lines)
