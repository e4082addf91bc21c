"""What the ``silicolab study ...`` commands do (the typer wiring is in ``study_app``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from silicolab.api.study_models import scientist_model, usable_scientist
from silicolab.cli.flow import write_html_report
from silicolab.cli.resume_target import resume_target
from silicolab.core.errors import InputError
from silicolab.core.files import dumps

#: The kinds of run whose study part ``study fit|predict|follow-on`` read.
STUDY_KINDS = ("study", "demo")


def typed_settings(typed: set[str]) -> set[str]:
    """Which stored settings the user typed (the auction's price rule is stored inside
    ``rule_options``)."""
    from silicolab.api.study import DEFAULTS

    return (typed & set(DEFAULTS)) | ({"rule_options"} if "price_rule" in typed else set())


def run_study_command(
    *,
    example: str | None,
    hypothesis_file: Path | None,
    options: dict[str, Any],
    typed: set[str],
    resume: bool,
    retry_failed: bool,
    yes: bool,
    json_out: bool,
) -> dict[str, Any]:
    """``study run``: :func:`silicolab.api.study.run_study` with the command's options
    (``options``: its keyword arguments; ``typed``: the ones the user typed), asking for
    the paid plan's confirmation unless ``yes``; then print its summary (exit 3 when the
    study ended degraded)."""
    from silicolab.api.study import run_study
    from silicolab.runs import DEGRADED_EXIT

    if (example is not None and hypothesis_file is not None) or not (
        example is not None or hypothesis_file is not None or resume or retry_failed
    ):
        raise InputError(
            "name a built-in study (e.g. 'silicolab study run auction') or pass "
            "--hypothesis FILE, not both; 'silicolab study list-examples' lists them"
        )
    result = run_study(
        example if example is not None else hypothesis_file,
        resume=resume_target(resume or retry_failed) or None, retry_failed=retry_failed,
        confirm=_confirm_paid(yes), notify=_notify, typed=typed_settings(typed), **options,
    )  # fmt: skip
    summary = result.to_dict()
    _print(result.record, summary, json_out, result.info)
    if result.status == "degraded":
        typer.echo(result.info.get("health_summary", "the run is degraded"), err=True)
        raise typer.Exit(DEGRADED_EXIT)
    return summary


def cli_prices(price_in: float | None, price_out: float | None) -> tuple[float, float] | None:
    """The prices typed as ``--price-in/--price-out`` (USD per 1M tokens), or None."""
    if price_in is None and price_out is None:
        return None
    if price_in is None or price_out is None:
        raise InputError(
            "give both --price-in and --price-out (USD per 1M input and output tokens), "
            "e.g. --price-in 0.15 --price-out 0.6"
        )
    return (float(price_in), float(price_out))


def _notify(line: str) -> None:
    """A line of the study's progress (plan, notes) on stderr, in the command's flags."""
    import inspect

    from silicolab.api.study import run_study
    from silicolab.cli.flags import as_flags

    params = tuple(inspect.signature(run_study).parameters)
    typer.echo(as_flags(line, params), err=True)


def _confirm_paid(yes: bool) -> Any:
    """The confirmation of a paid plan: ``--yes``, or a yes at the prompt (a terminal)."""

    def confirm(plan: Any) -> bool:
        if yes:
            return True
        if not sys.stdin.isatty():
            raise InputError("this study makes paid LLM calls: add --yes to confirm the plan above")
        if not typer.confirm("run it?", default=False, err=True):
            raise InputError("cancelled; nothing was run")
        return True

    return confirm


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


def hypothesis_command(
    scenario: str | None, *, out: Path, causes: int | None, seed: int | None,
    temperature: float | None, resume: Path | None, model: str | None, base_url: str | None,
    config: Path | None, json_out: bool,
) -> None:  # fmt: skip
    """``study hypothesis``: :func:`silicolab.api.study.generate_hypothesis` (the scientist
    model's SCM for ``scenario``, as editable YAML in ``out``; every accepted step is
    journaled beside it, and ``resume`` continues a failed chain), then its summary."""
    from silicolab.api.study import propose_hypothesis
    from silicolab.studies.design import factorial_size

    proposal = propose_hypothesis(
        scenario, out=out, causes=causes, seed=seed, temperature=temperature, resume=resume,
        model=model, base_url=base_url, config=config,
    )  # fmt: skip
    result = proposal.hypothesis
    summary = {
        "path": str(proposal.path),
        "agents": [a.name for a in result.agents],
        "outcome": result.outcome.name,
        "causes": [v.name for v in result.treatments],
        "conditions": factorial_size(result),
        "seed": proposal.settings["seed"],
        "scientist_temperature": proposal.settings["temperature"],
        "ledger": proposal.ledger,
    }
    if json_out:
        typer.echo(dumps(summary))
        return
    typer.echo(
        f"wrote {proposal.path}: agents {summary['agents']}, outcome {summary['outcome']}, "
        f"causes {summary['causes']} ({summary['conditions']} conditions). Edit it, then run "
        f"'silicolab study run --hypothesis {proposal.path}'."
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
    "cli_prices",
    "follow_on_command",
    "hypothesis_command",
    "predict_command",
    "run_study_command",
    "typed_settings",
]
