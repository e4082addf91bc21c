"""What the ``silicolab study ...`` commands do (the typer wiring is in ``study_app``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from silicolab.cli.flow import runs_root, shown_run_dir, write_html_report
from silicolab.cli.resume_target import resume_target
from silicolab.core.config import load_settings
from silicolab.core.errors import InputError
from silicolab.core.files import dumps

SUBJECTS = ("llm", "rule", "world")
#: The kinds of run whose study part ``study fit|predict|follow-on`` read.
STUDY_KINDS = ("study", "demo")


#: ``study run`` options stored in run.json (the others say where and how to run, not what).
STORED = (
    "subjects", "conditions", "replicates", "aggregate_replicates", "agent_names", "seed",
    "max_conditions", "jobs", "statement_tokens", "interactions", "drop_capped", "predict",
    "predict_conditions", "follow_on", "scientist_temperature",
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
    subjects: str,
    hypothesis: Any,
    *,
    model: str | None,
    base_url: str | None,
    config: Path | None,
    seed: int = 0,
    prices: Any = None,
    budget: Any = None,
) -> Any:
    """The models by role (scientist, subject, coordinator), or ``None`` when no model is
    used at all (rule-based subjects and no usable scientist). A scientist that is the
    offline ``scripted`` test double is no scientist (``StudyModels.scientist`` is None);
    for ``world`` subjects the offline world plays subjects and coordinator and, without a
    usable scientist, its scripted scientist answers the scientist's steps. ``prices``
    (``--price-in/--price-out``) bill the paid roles, ``budget`` (``--max-cost``) limits
    every role's spending together (:mod:`silicolab.cli.study_money`)."""
    from silicolab.cli.study_money import role_overrides
    from silicolab.llm.roles import model_for_role
    from silicolab.studies.pipeline import StudyModels

    settings = load_settings(config)
    overrides: dict[str, Any] = {}
    if model:
        overrides["spec"] = model
    if base_url:
        overrides["base_url"] = base_url
    money = {"prices": prices, "budget": budget}
    scientist = model_for_role(
        "scientist", settings, **role_overrides("scientist", settings, overrides, **money)
    )
    usable = usable_scientist(scientist)
    if subjects == "rule":
        return StudyModels(scientist, scientist, scientist) if usable else None
    if subjects == "world":  # the one offline builder (the demo's and Python's too)
        from silicolab.studies.offline import offline_study_models

        return offline_study_models(
            hypothesis,
            seed=seed,
            cache_path=settings.resolved_cache_path,
            scientist=scientist if usable else None,
        )
    roles = {
        r: model_for_role(r, settings, **role_overrides(r, settings, overrides, **money))
        for r in ("subject", "coordinator")
    }
    return StudyModels(scientist if usable else None, **roles)


def usable_scientist(model: Any) -> bool:
    """Whether ``model`` can play the scientist: anything but the bare ``scripted`` test
    double (the default when no model is configured), which has no script for it."""
    return getattr(model, "spec", "scripted") != "scripted"


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
    prices: Any = None,
    retry_failed: bool = False,
) -> dict[str, Any]:
    """``study run``: check the options, plan, confirm, run (or resume: ``retry_failed``
    also reruns the failed conditions) the study and print its summary; ``executor`` (an
    :class:`~silicolab.runtime.ExecutorChoice`, default local) says where the conditions
    run, ``prices`` (``--price-in/--price-out``) what the paid roles' calls cost. Every
    refusal happens before a run directory exists; the spending limit ``max_cost`` holds
    during the run too (exit 4 when reached)."""
    from silicolab.cli.study_money import (
        check_spending_limit,
        confirm_cost,
        make_budget,
        study_plan,
    )
    from silicolab.llm.base import run_sync
    from silicolab.report.study_report import study_report
    from silicolab.runs import DEGRADED_EXIT, open_run
    from silicolab.studies.applicable import check_applicable
    from silicolab.studies.files import read_hypothesis, same_study
    from silicolab.studies.pipeline import HYPOTHESIS_FILE, StudyOptions
    from silicolab.studies.study import arun_study

    root, resume = runs_root(runs_dir, config), resume or retry_failed
    if resume:
        run, used = open_run(root, "study", settings=settings, explicit=explicit,
                             resume=resume_target(True),
                             retry_failed=retry_failed)  # fmt: skip
        hypothesis = read_hypothesis(run.path / HYPOTHESIS_FILE)
        if example is not None or hypothesis_file is not None:  # the same command + --resume
            same_study(run.path, hypothesis, load_study_hypothesis(example, hypothesis_file))
    else:
        hypothesis = load_study_hypothesis(example, hypothesis_file)
        used, run = settings, None
    options = StudyOptions.from_dict(used)
    if options.subjects == "rule":
        from silicolab.studies.rule_worlds import rule_world

        rule_world(hypothesis)  # refuses a study without rule-based subjects, before any run
    models = study_models(
        options.subjects, hypothesis, model=model, base_url=base_url, config=config,
        seed=options.seed, prices=prices, budget=make_budget(max_cost, run),
    )  # fmt: skip
    scientist = models is not None and models.scientist is not None
    notes = check_applicable(options, typed=() if resume else explicit, scientist=scientist)
    check_spending_limit(models, options, max_cost=max_cost, executor=executor)
    plan, paid = study_plan(hypothesis, options, models)
    confirm_cost(plan, paid=paid, yes=yes, max_cost=max_cost)
    for note in notes:
        typer.echo(f"note: {note}", err=True)
    if run is None:
        run, _ = open_run(root, "study", settings=settings, slug=hypothesis.name)
    with run:
        kind = {} if executor is None else {"executor": executor}
        record = run_sync(arun_study(hypothesis, options, run=run, models=models, **kind))
        run.write_report(study_report(record, run.info))
        write_html_report(run)
    summary = {"run_dir": str(shown_run_dir(run.path)), "status": run.status}
    summary.update(plan=plan.to_dict(), **_summary_figures(record, run.info))
    summary["notes"] = notes
    _print(record, summary, json_out, run.info)
    if run.status == "degraded":
        typer.echo(run.info.get("health_summary", "the run is degraded"), err=True)
        raise typer.Exit(DEGRADED_EXIT)
    return summary


def _summary_figures(record: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
    """The ``--json`` figures of a study's record; its model calls from ``info`` (run.json)."""
    from silicolab.report.study_report import path_rows, run_ledger

    main = (record.get("estimation") or {}).get("main") or {}
    health = record.get("health") or {}
    return {
        "study": record["study"],
        "conditions": len(record["runs"]),
        "n": main.get("n"),
        "r2": main.get("r2"),
        "paths": path_rows(record.get("estimation")),
        "fit_error": record.get("fit_error"),
        "fit_problems": record.get("fit_problems") or [],
        "na_counts": record["data"]["na_counts"],
        "capped": record["data"]["capped"],
        "stages": record.get("stages"),
        "health": health.get("totals"),
        "problems": health.get("problems") or [],
        "predictions": (record.get("predictions") or {}).get("mse"),
        "follow_on": (record.get("follow_on") or {}).get("comparison"),
        "ledger": run_ledger(record, info) or None,
    }


def _print(record: dict[str, Any], summary: dict[str, Any], json_out: bool, info: Any) -> None:
    from silicolab.report import print_lines, print_table
    from silicolab.report.study_report import (
        PATH_COLUMNS,
        path_rows,
        prediction_line,
        summary_lines,
    )

    if json_out:
        typer.echo(dumps(summary))
        return
    print_table(
        path_rows(record.get("estimation")),
        PATH_COLUMNS,
        title=f"fitted SCM: {record['study']} ({record['scenario']})",
    )
    predicted = prediction_line(record)
    lines = [*summary_lines(record, info), *([predicted] if predicted else [])]
    print_lines([*lines, f"run directory: {summary['run_dir']}"])


def _finished_study(run_dir: Path) -> tuple[Any, Any, dict[str, Any]]:
    """(run, hypothesis, record) of a study run or of the demo's study, once its main
    study is on disk (its data, hypothesis and record), or a clear error."""
    from silicolab.runs import Run
    from silicolab.studies.files import read_hypothesis
    from silicolab.studies.pipeline import HYPOTHESIS_FILE

    run = Run.open(run_dir)
    record = run.read_record()
    ready = all((run.path / name).is_file() for name in (HYPOTHESIS_FILE, "data.csv"))
    if run.kind not in STUDY_KINDS or record is None or not ready:
        raise InputError(
            f"{run_dir} is not a study run whose main study finished; pass a "
            "runs/...-study-... or runs/...-demo-... folder (an interrupted one: finish it "
            "with 'silicolab study run --resume' first)"
        )
    return run, read_hypothesis(run.path / HYPOTHESIS_FILE), record


def _study_data(run: Any, hypothesis: Any, record: dict[str, Any]) -> Any:
    """The rows the study's fit used: ``data.csv``, averaged over each condition's
    replicates when the study was run with ``--aggregate-replicates``."""
    import io

    import pandas as pd

    from silicolab.core.files import read_user_text
    from silicolab.runs.run_dir import RECORD_FIX

    path = run.path / "data.csv"
    text = read_user_text(path, what="the study's data", missing=RECORD_FIX, damaged=RECORD_FIX)
    try:
        table = pd.read_csv(io.StringIO(text))
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise InputError(f"{path} is damaged (not CSV: {reason}): {RECORD_FIX}") from None
    if (record.get("options") or {}).get("aggregate_replicates"):
        from silicolab.studies.data import aggregate_replicates

        return aggregate_replicates(hypothesis, table)
    return table


def scientist_model(
    model: str | None,
    base_url: str | None,
    config: Path | None,
    *,
    needed_for: str = "",
    demo_seed: int | None = None,
) -> Any:
    """The scientist-role model with command-line overrides. Without a usable one (the
    bare ``scripted`` test double): the demo's own scripted scientist for a demo run
    (``demo_seed``: its seed), else with ``needed_for`` a refusal naming the fix."""
    from silicolab.llm.roles import model_for_role

    settings = load_settings(config)
    overrides = {k: v for k, v in (("spec", model), ("base_url", base_url)) if v}
    scientist = model_for_role("scientist", settings, **overrides)
    if demo_seed is not None and not usable_scientist(scientist):
        from silicolab.studies.demo_study import demo_models

        return demo_models(demo_seed, settings.resolved_cache_path).scientist
    if needed_for and not usable_scientist(scientist):
        raise InputError(
            f"the scientist model is the offline 'scripted' test double, which cannot "
            f"{needed_for}: pass --model SPEC (e.g. openai:gpt-4o-mini, or a local server "
            "with --base-url), or configure the scientist role in silicolab.yaml"
        )
    return scientist


def hypothesis_command(
    scenario: str | None, *, out: Path, causes: int | None, seed: int | None,
    temperature: float | None, resume: Path | None, model: str | None, base_url: str | None,
    config: Path | None, json_out: bool,
) -> None:  # fmt: skip
    """``study hypothesis``: the scientist model's SCM for ``scenario``, as editable YAML.
    Every accepted step is journaled beside ``out`` as it is taken; ``resume`` (that
    journal or its hypothesis file) replays them without a call and continues from the
    first missing step (:mod:`silicolab.studies.scientist_journal`)."""
    from silicolab.llm.base import run_sync
    from silicolab.studies.design import factorial_size
    from silicolab.studies.files import write_hypothesis
    from silicolab.studies.scientist import ajournaled_hypothesis, open_chain

    if resume is None and (scenario is None or len(scenario.strip()) < 10):
        raise InputError("the scenario is empty or too short; describe it in a sentence")
    scientist = scientist_model(
        model, base_url, config, needed_for="propose hypotheses (start from a built-in "
        "study instead: 'silicolab study list-examples --write DIR')",
    )  # fmt: skip
    journal = open_chain(
        out, resume=resume, model=scientist.spec, scenario=scenario, n_causes=causes,
        seed=seed, temperature=temperature,
    )  # fmt: skip
    result = run_sync(ajournaled_hypothesis(journal, scientist))
    path = write_hypothesis(result, journal.settings.get("out") or out)
    journal.path.unlink(missing_ok=True)  # the hypothesis file holds every decision now
    summary = {
        "path": str(path),
        "agents": [a.name for a in result.agents],
        "outcome": result.outcome.name,
        "causes": [v.name for v in result.treatments],
        "conditions": factorial_size(result),
        "seed": journal.settings["seed"],
        "scientist_temperature": journal.settings["temperature"],
        "ledger": scientist.ledger.summary(),
    }
    if json_out:
        typer.echo(dumps(summary))
        return
    typer.echo(
        f"wrote {path}: agents {summary['agents']}, outcome {summary['outcome']}, causes "
        f"{summary['causes']} ({summary['conditions']} conditions). Edit it, then run "
        f"'silicolab study run --hypothesis {path}'."
    )


def _demo_seed(run: Any, options: dict[str, Any]) -> int | None:
    """The seed of a demo run (whose scripted scientist then stands in), else None."""
    return int(options.get("seed", 0)) if run.kind == "demo" else None


def _not_estimable(exc: Exception, json_out: bool, extra: dict[str, Any] | None = None) -> None:
    """Report a model that cannot be fitted (with its problems) and exit 3 (degraded)."""
    from silicolab.runs import DEGRADED_EXIT

    problems = [dict(p) for p in getattr(exc, "problems", None) or []]
    if json_out:
        typer.echo(dumps({**(extra or {}), "fit_error": str(exc), "fit_problems": problems}))
    typer.echo(f"DEGRADED: {' '.join(str(exc).split())}", err=True)
    raise typer.Exit(3 if DEGRADED_EXIT == 3 else DEGRADED_EXIT)


def _fit(hypothesis: Any, table: Any, json_out: bool, **options: Any) -> Any:
    """``fit_study`` whose not-estimable model ends the command degraded (exit 3)."""
    from silicolab.studies.fit import fit_study

    try:
        return fit_study(hypothesis, table, **options)
    except InputError as exc:
        if getattr(exc, "problems", None) is None:
            raise  # bad input (e.g. an unknown column): one line, exit 2
        _not_estimable(exc, json_out)


def predict_command(
    run_dir: Path, *, conditions: int | None, temperature: float | None, model: str | None,
    base_url: str | None, config: Path | None, json_out: bool,
) -> None:  # fmt: skip
    """``study predict``: the scientist's predictions against a study's fit, on the rows
    the fit used (the stored ``--drop-capped`` and ``--aggregate-replicates`` apply)."""
    from silicolab.core.files import atomic_write_text
    from silicolab.llm.base import run_sync
    from silicolab.runs import DEGRADED_EXIT, RunHealth
    from silicolab.studies.predict import apredict

    run, hypothesis, record = _finished_study(run_dir)
    _can_write(run.path, "predictions.json and the page belong to the run: make it writable")
    opts = record.get("options") or {}
    table = _study_data(run, hypothesis, record)
    drop = bool(opts.get("drop_capped"))
    fit = _fit(hypothesis, table, json_out, alternatives=False, drop_capped=drop)
    scientist = scientist_model(model, base_url, config, demo_seed=_demo_seed(run, opts))
    usable = usable_scientist(scientist)
    if not usable:
        typer.echo("note: no scientist model (--model SPEC): only the mechanical "
                   "leave-one-out runs", err=True)  # fmt: skip
    tasks = ("y", "beta", "loo") if usable else ("loo_mechanical",)
    predictions = run_sync(
        apredict(hypothesis, table, fit.main, scientist if usable else None, tasks=tasks,
                 conditions=conditions, drop_capped=drop, seed=int(opts.get("seed", 0)),
                 temperature=0.0 if temperature is None else temperature)
    )  # fmt: skip
    data = predictions.to_dict()
    path = atomic_write_text(run.path / "predictions.json", dumps(data) + "\n")
    write_html_report(run)  # the study's page now shows them
    if json_out:
        typer.echo(dumps({"path": str(path), "mse": data.get("mse"), "health": data["health"]}))
    else:
        typer.echo(f"predictions written to {path}; MSE {data.get('mse')}")
    health = RunHealth.of([predictions.health])
    if health.degraded:  # no prediction reply could be parsed
        typer.echo(health.summary_line(), err=True)
        raise typer.Exit(DEGRADED_EXIT)


def _can_write(folder: Path, fix: str) -> None:
    """Refuse, before any model call, a command whose output could not be written."""
    from silicolab.core.files import can_create_in

    if not can_create_in(folder):
        raise InputError(f"cannot write into {folder}: the folder is not writable; {fix}")


def follow_on_command(
    run_dir: Path, *, out: Path, temperature: float | None, model: str | None,
    base_url: str | None, config: Path | None, json_out: bool,
) -> None:  # fmt: skip
    """``study follow-on``: plan the next experiment from a study's fit."""
    from silicolab.llm.base import run_sync
    from silicolab.studies.files import write_hypothesis
    from silicolab.studies.follow_on import afollow_on

    run, hypothesis, record = _finished_study(run_dir)
    _can_write(Path(out).parent, "pass --out in a folder you can write")
    opts = record.get("options") or {}
    fit = _fit(hypothesis, _study_data(run, hypothesis, record), json_out, alternatives=False,
               drop_capped=bool(opts.get("drop_capped")))  # fmt: skip
    scientist = scientist_model(model, base_url, config, needed_for="plan a follow-on",
                                demo_seed=_demo_seed(run, opts))  # fmt: skip
    plan = run_sync(
        afollow_on(hypothesis, fit.main, scientist, seed=int(opts.get("seed", 0)),
                   temperature=0.4 if temperature is None else temperature)
    )  # fmt: skip
    path = write_hypothesis(plan.hypothesis, out)
    summary = {"path": str(path), **plan.to_dict()}
    if json_out:
        typer.echo(dumps(summary))
        return
    causes = [v.name for v in plan.hypothesis.treatments]
    typer.echo(f"follow-on hypothesis written to {path}: causes {causes}; run it with "
               f"'silicolab study run --hypothesis {path}'")  # fmt: skip


__all__ = [
    "SUBJECTS",
    "follow_on_command",
    "hypothesis_command",
    "load_study_hypothesis",
    "predict_command",
    "run_study_command",
    "study_models",
]
