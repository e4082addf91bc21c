"""What the ``silicolab study ...`` commands print: each calls its facade
(:mod:`silicolab.api.study`, :mod:`silicolab.api.study_after`); the typer wiring is in
``_app``."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from silicolab.cli.resume_target import resume_target
from silicolab.core.errors import InputError
from silicolab.core.files import dumps


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


def _not_estimable(exc: Exception, json_out: bool, extra: dict[str, Any] | None = None) -> None:
    """Report a model that cannot be fitted (with its problems) and exit 3 (degraded)."""
    from silicolab.runs import DEGRADED_EXIT

    problems = [dict(p) for p in getattr(exc, "problems", None) or []]
    if json_out:
        typer.echo(dumps({**(extra or {}), "fit_error": str(exc), "fit_problems": problems}))
    typer.echo(f"DEGRADED: {' '.join(str(exc).split())}", err=True)
    raise typer.Exit(DEGRADED_EXIT)


@contextlib.contextmanager
def degraded_if_not_estimable(json_out: bool) -> Iterator[None]:
    """A study's model that cannot be fitted ends the command degraded (exit 3); other
    bad input stays one line, exit 2."""
    try:
        yield
    except InputError as exc:
        if getattr(exc, "problems", None) is None:
            raise
        _not_estimable(exc, json_out)


def predict_command(
    run_dir: Path, *, conditions: int | None, temperature: float | None, model: str | None,
    base_url: str | None, config: Path | None, json_out: bool,
) -> None:  # fmt: skip
    """``study predict``: :func:`silicolab.api.study_after.predict`, then its summary."""
    from silicolab.api.study_after import predict
    from silicolab.runs import DEGRADED_EXIT

    with degraded_if_not_estimable(json_out):
        done = predict(run_dir, conditions=conditions, temperature=temperature, model=model,
                       base_url=base_url, config=config)  # fmt: skip
    if done.mechanical_only:
        typer.echo("note: no scientist model (--model SPEC): only the mechanical "
                   "leave-one-out runs", err=True)  # fmt: skip
    data = done.data
    if json_out:
        typer.echo(
            dumps({"path": str(done.path), "mse": data.get("mse"), "health": data["health"]})
        )
    else:
        typer.echo(f"predictions written to {done.path}; MSE {data.get('mse')}")
    if done.health.degraded:  # no prediction reply could be parsed
        typer.echo(done.health.summary_line(), err=True)
        raise typer.Exit(DEGRADED_EXIT)


def follow_on_command(
    run_dir: Path, *, out: Path, temperature: float | None, model: str | None,
    base_url: str | None, config: Path | None, json_out: bool,
) -> None:  # fmt: skip
    """``study follow-on``: :func:`silicolab.api.study_after.plan_follow_on`, then its
    summary."""
    from silicolab.api.study_after import plan_follow_on

    with degraded_if_not_estimable(json_out):
        done = plan_follow_on(run_dir, out=out, temperature=temperature, model=model,
                              base_url=base_url, config=config)  # fmt: skip
    summary = {"path": str(done.path), **done.plan.to_dict()}
    if json_out:
        typer.echo(dumps(summary))
        return
    causes = [v.name for v in done.plan.hypothesis.treatments]
    typer.echo(f"follow-on hypothesis written to {done.path}: causes {causes}; run it with "
               f"'silicolab study run --hypothesis {done.path}'")  # fmt: skip


__all__ = [
    "cli_prices",
    "degraded_if_not_estimable",
    "follow_on_command",
    "hypothesis_command",
    "predict_command",
    "run_study_command",
    "typed_settings",
]
