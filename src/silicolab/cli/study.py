"""What the ``silicolab study ...`` commands do (the typer wiring is in ``study_app``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from silicolab.cli.flow import runs_root, write_html_report
from silicolab.core.config import load_settings
from silicolab.core.errors import InputError

SUBJECTS = ("llm", "rule", "world")


#: ``study run`` options stored in run.json (the others say where and how to run, not what).
STORED = (
    "subjects", "conditions", "seed", "max_conditions", "jobs", "statement_tokens",
    "interactions", "drop_capped", "predict", "follow_on",
)  # fmt: skip


def study_settings(params: dict[str, Any], typed: set[str]) -> tuple[dict[str, Any], set[str]]:
    """The study's stored settings from the command's parameters, and which of them the
    user typed (the auction's price rule is stored inside ``rule_options``)."""
    settings = {name: getattr(params[name], "value", params[name]) for name in STORED}
    settings["rule_options"] = {"price_rule": getattr(params["price_rule"], "value", None)}
    explicit = (typed & set(STORED)) | ({"rule_options"} if "price_rule" in typed else set())
    return settings, explicit


def load_study_hypothesis(example: str | None, hypothesis: Path | None) -> Any:
    """The hypothesis from a built-in example name or a file (exactly one of them)."""
    from silicolab.studies import load_example, read_hypothesis

    if (example is None) == (hypothesis is None):
        raise InputError(
            "name a built-in study (e.g. 'silicolab study run auction') or pass "
            "--hypothesis FILE, not both; 'silicolab study list-examples' lists them"
        )
    return load_example(example) if example is not None else read_hypothesis(hypothesis)


def study_models(
    subjects: str, hypothesis: Any, *, model: str | None, base_url: str | None, config: Path | None
) -> Any:
    """The models by role (scientist, subject, coordinator); for ``world`` subjects the
    scripted hidden-SCM world plays subjects and coordinator (offline)."""
    from silicolab.llm import load_model
    from silicolab.llm.roles import model_for_role
    from silicolab.studies.pipeline import StudyModels
    from silicolab.studies.world import HiddenWorld

    settings = load_settings(config)
    overrides: dict[str, Any] = {}
    if model:
        overrides["spec"] = model
    if base_url:
        overrides["base_url"] = base_url
    roles = {r: model_for_role(r, settings, **overrides) for r in StudyModels.roles()}
    if subjects == "world":
        world = load_model(
            "scripted",
            fn=HiddenWorld(hypothesis, world_effects(hypothesis)),
            cache_path=settings.resolved_cache_path,
        )
        roles["subject"] = roles["coordinator"] = world
    return StudyModels(**roles)


def world_effects(hypothesis: Any) -> dict[str, float]:
    """The offline world's hidden effects: 1 per unit of the first cause, half of that
    for the second, none for the rest (so a fit has something to find and something not
    to)."""
    causes = [v.name for v in hypothesis.treatments]
    return {name: effect for name, effect in zip(causes, (1.0, 0.5), strict=False)}


def confirm_cost(plan: Any, *, paid: bool, yes: bool, max_cost: float | None) -> None:
    """Show the plan on stderr; refuse above ``max_cost``; ask unless ``yes`` or unpaid."""
    typer.echo(plan.summary_line(), err=True)
    if max_cost is not None and plan.cost_usd is not None and plan.cost_usd[1] > max_cost:
        raise InputError(
            f"the planned cost may reach ${plan.cost_usd[1]:.2f}, above --max-cost "
            f"{max_cost:g}; run fewer conditions (--conditions N) or raise --max-cost"
        )
    if not paid or yes:
        return
    if not sys.stdin.isatty():
        raise InputError("this study makes paid LLM calls: add --yes to confirm the plan above")
    if not typer.confirm("run it?", default=False, err=True):
        raise InputError("cancelled; nothing was run")


def _paid(models: Any, subjects: str) -> bool:
    if subjects == "rule":
        return False
    return any(not str(m).startswith("scripted") for m in models.specs().values())


def run_study_command(
    *,
    example: str | None,
    hypothesis_file: Path | None,
    settings: dict[str, Any],
    explicit: set[str],
    resume: bool,
    yes: bool,
    max_cost: float | None,
    model: str | None,
    base_url: str | None,
    runs_dir: Path | None,
    config: Path | None,
    json_out: bool,
    executor: Any = None,
) -> dict[str, Any]:
    """``study run``: plan, confirm, run (or resume) the study and print its summary;
    ``executor`` (an :class:`~silicolab.runtime.ExecutorChoice`, default local) says where
    the conditions run."""
    from silicolab.llm.base import run_sync
    from silicolab.report.study_report import study_report
    from silicolab.runs import DEGRADED_EXIT, open_run
    from silicolab.studies.cost import plan_cost
    from silicolab.studies.design import make_design
    from silicolab.studies.files import read_hypothesis
    from silicolab.studies.pipeline import HYPOTHESIS_FILE, StudyOptions
    from silicolab.studies.study import arun_study

    root = runs_root(runs_dir, config)
    if resume:
        run, used = open_run(root, "study", settings=settings, explicit=explicit, resume=True)
        hypothesis = read_hypothesis(run.path / HYPOTHESIS_FILE)
    else:
        hypothesis = load_study_hypothesis(example, hypothesis_file)
        used, run = settings, None
    options = StudyOptions.from_dict(used)
    if options.subjects == "rule":
        from silicolab.studies.rule_worlds import rule_world

        rule_world(hypothesis)  # refuses a study without rule-based subjects, before any run
    design = make_design(
        hypothesis,
        conditions=options.conditions,
        seed=options.seed,
        max_conditions=options.max_conditions,
    )
    models = None
    if options.subjects != "rule":
        models = study_models(
            options.subjects, hypothesis, model=model, base_url=base_url, config=config
        )
    paid = models is not None and _paid(models, options.subjects)
    plan = plan_cost(
        hypothesis,
        len(design.conditions),
        _prices(models) if paid else None,
        llm=options.subjects != "rule",
    )
    confirm_cost(plan, paid=paid, yes=yes, max_cost=max_cost)
    if run is None:
        run, _ = open_run(root, "study", settings=settings, slug=hypothesis.name)
    with run:
        kind = {} if executor is None else {"executor": executor}
        record = run_sync(arun_study(hypothesis, options, run=run, models=models, **kind))
        run.write_report(study_report(record))
    write_html_report(run)
    summary = {"run_dir": str(run.path.resolve()), "status": run.status, "plan": plan.to_dict()}
    summary.update(_summary_figures(record))
    _print(record, summary, json_out)
    if run.status == "degraded":
        typer.echo(run.info.get("health_summary", "the run is degraded"), err=True)
        raise typer.Exit(DEGRADED_EXIT)
    return summary


def _prices(models: Any) -> Any:
    if models is None:
        return None
    ledger = getattr(models.subject, "ledger", None)
    return getattr(ledger, "prices", None)


def _summary_figures(record: dict[str, Any]) -> dict[str, Any]:
    from silicolab.report.study_report import path_rows

    main = (record.get("estimation") or {}).get("main") or {}
    return {
        "study": record["study"],
        "conditions": len(record["runs"]),
        "n": main.get("n"),
        "r2": main.get("r2"),
        "paths": path_rows(record.get("estimation")),
        "na_counts": record["data"]["na_counts"],
        "capped": record["data"]["capped"],
        "health": (record.get("health") or {}).get("totals"),
        "predictions": (record.get("predictions") or {}).get("mse"),
        "follow_on": (record.get("follow_on") or {}).get("comparison"),
        "ledger": record.get("llm_ledger"),
    }


def _print(record: dict[str, Any], summary: dict[str, Any], json_out: bool) -> None:
    from silicolab.report import print_lines, print_table
    from silicolab.report.study_report import PATH_COLUMNS, path_rows, summary_lines

    if json_out:
        typer.echo(json.dumps(summary, default=str))
        return
    print_table(
        path_rows(record.get("estimation")),
        PATH_COLUMNS,
        title=f"fitted SCM: {record['study']} ({record['scenario']})",
    )
    print_lines([*summary_lines(record), f"run directory: {summary['run_dir']}"])


def _finished_study(run_dir: Path) -> tuple[Any, Any, dict[str, Any]]:
    """(run, hypothesis, record) of a finished study run, or a clear error."""
    from silicolab.runs import Run
    from silicolab.studies.files import read_hypothesis
    from silicolab.studies.pipeline import HYPOTHESIS_FILE

    run = Run.open(run_dir)
    record = run.read_record()
    if run.kind != "study" or record is None:
        raise InputError(f"{run_dir} is not a finished study run; pass a runs/...-study-... folder")
    return run, read_hypothesis(run.path / HYPOTHESIS_FILE), record


def _study_data(run: Any) -> Any:
    import pandas as pd

    return pd.read_csv(run.path / "data.csv")


def scientist_model(model: str | None, base_url: str | None, config: Path | None) -> Any:
    """The scientist-role model with command-line overrides."""
    from silicolab.llm.roles import model_for_role

    overrides = {k: v for k, v in (("spec", model), ("base_url", base_url)) if v}
    return model_for_role("scientist", load_settings(config), **overrides)


def hypothesis_command(
    scenario: str, *, out: Path, causes: int, seed: int, model: str | None,
    base_url: str | None, config: Path | None, json_out: bool,
) -> None:  # fmt: skip
    """``study hypothesis``: the scientist model's SCM for ``scenario``, as editable YAML."""
    if len(scenario.strip()) < 10:
        raise InputError("the scenario is empty or too short; describe it in a sentence")
    from silicolab.llm.base import run_sync
    from silicolab.studies.design import factorial_size
    from silicolab.studies.files import write_hypothesis
    from silicolab.studies.scientist import agenerate_hypothesis

    scientist = scientist_model(model, base_url, config)
    if getattr(scientist, "spec", "") == "scripted":
        raise InputError(
            "the scientist model is the offline 'scripted' test double, which cannot propose "
            "hypotheses: pass --model SPEC (e.g. openai:gpt-4o-mini, or a local server with "
            "--base-url), configure one in silicolab.yaml, or start from a built-in study "
            "('silicolab study list-examples --write DIR')"
        )
    result = run_sync(agenerate_hypothesis(scenario, scientist, n_causes=causes, seed=seed))
    path = write_hypothesis(result, out)
    summary = {
        "path": str(path),
        "agents": [a.name for a in result.agents],
        "outcome": result.outcome.name,
        "causes": [v.name for v in result.treatments],
        "conditions": factorial_size(result),
        "ledger": scientist.ledger.summary(),
    }
    if json_out:
        typer.echo(json.dumps(summary))
        return
    typer.echo(
        f"wrote {path}: agents {summary['agents']}, outcome {summary['outcome']}, causes "
        f"{summary['causes']} ({summary['conditions']} conditions). Edit it, then run "
        f"'silicolab study run --hypothesis {path}'."
    )


def fit_command(run_dir: Path, *, interactions: bool, drop_capped: bool, json_out: bool) -> None:
    """``study fit``: refit a finished study's data; writes fit-<options>.json."""
    from silicolab.core.files import atomic_write_text
    from silicolab.report import print_table
    from silicolab.report.study_report import PATH_COLUMNS, path_rows
    from silicolab.studies.fit import fit_study

    run, hypothesis, _ = _finished_study(run_dir)
    fit = fit_study(
        hypothesis, _study_data(run), interactions=interactions, drop_capped=drop_capped
    )
    name = "fit" + ("-interactions" if interactions else "") + ("-uncapped" if drop_capped else "")
    data = fit.to_dict()
    path = atomic_write_text(run.path / f"{name}.json", json.dumps(data, default=str) + "\n")
    which = "interactions" if interactions else "main"
    if json_out:
        typer.echo(json.dumps({"path": str(path), "paths": path_rows(data, which),
                               "tests": data["tests"]}, default=str))  # fmt: skip
        return
    print_table(path_rows(data, which), PATH_COLUMNS, title=f"refit of {run.path.name}",
                footer=[f"written to {path}"])  # fmt: skip


def predict_command(
    run_dir: Path, *, max_conditions: int, model: str | None, base_url: str | None,
    config: Path | None, json_out: bool,
) -> None:  # fmt: skip
    """``study predict``: the scientist's predictions against a finished study's fit."""
    from silicolab.core.files import atomic_write_text
    from silicolab.llm.base import run_sync
    from silicolab.runs import DEGRADED_EXIT, RunHealth
    from silicolab.studies.fit import fit_study
    from silicolab.studies.predict import apredict

    run, hypothesis, record = _finished_study(run_dir)
    table = _study_data(run)
    fit = fit_study(hypothesis, table, alternatives=False)
    scientist = scientist_model(model, base_url, config)
    opts = record.get("options", {})
    predictions = run_sync(
        apredict(hypothesis, table, fit.main, scientist, max_conditions=max_conditions,
                 seed=int(opts.get("seed", 0)))
    )  # fmt: skip
    data = predictions.to_dict()
    path = atomic_write_text(run.path / "predictions.json", json.dumps(data, default=str) + "\n")
    write_html_report(run)  # the study's page now shows them
    if json_out:
        typer.echo(json.dumps({"path": str(path), "mse": data.get("mse"),
                               "health": data["health"]}, default=str))  # fmt: skip
    else:
        typer.echo(f"predictions written to {path}; MSE {data.get('mse')}")
    health = RunHealth.of([predictions.health])
    if health.degraded:  # no prediction reply could be parsed
        typer.echo(health.summary_line(), err=True)
        raise typer.Exit(DEGRADED_EXIT)


def follow_on_command(
    run_dir: Path, *, out: Path, model: str | None, base_url: str | None,
    config: Path | None, json_out: bool,
) -> None:  # fmt: skip
    """``study follow-on``: plan the next experiment from a finished study's fit."""
    from silicolab.llm.base import run_sync
    from silicolab.studies.files import write_hypothesis
    from silicolab.studies.fit import fit_study
    from silicolab.studies.follow_on import afollow_on

    run, hypothesis, _ = _finished_study(run_dir)
    fit = fit_study(hypothesis, _study_data(run), alternatives=False)
    plan = run_sync(afollow_on(hypothesis, fit.main, scientist_model(model, base_url, config)))
    path = write_hypothesis(plan.hypothesis, out)
    summary = {"path": str(path), **plan.to_dict()}
    if json_out:
        typer.echo(json.dumps(summary, default=str))
        return
    causes = [v.name for v in plan.hypothesis.treatments]
    typer.echo(f"follow-on hypothesis written to {path}: causes {causes}; run it with "
               f"'silicolab study run --hypothesis {path}'")  # fmt: skip


__all__ = [
    "SUBJECTS",
    "fit_command",
    "follow_on_command",
    "hypothesis_command",
    "load_study_hypothesis",
    "predict_command",
    "run_study_command",
    "study_models",
]
