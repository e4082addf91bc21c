"""What ``silicolab demo`` shows: the study's fitted SCM beside the hidden truth, the
follow-on experiment, the predictions, then the tour's sections.

The truth is the quantity the fit estimates (the demo world's
:meth:`~silicolab.studies.world.HiddenWorld.truth` for the causes each stage varied: for
the mug's binary outcome, the change in the probability of a deal per unit of a cause)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from silicolab.report.study_report import (
    path_rows,
    prediction_line,
    study_report,
    summary_lines,
)
from silicolab.report.tables import print_lines, print_table

TRUTH_COLUMNS = (
    ("rhs", "cause"),
    ("est", "estimate"),
    ("ci_low", "CI low"),
    ("ci_high", "CI high"),
    ("p", "p"),
    ("truth", "truth"),
)


def _with_truth(rows: list[dict[str, Any]], truth: dict[str, Any]) -> list[dict[str, Any]]:
    """The path rows with the true effect, shown to three significant digits (the table's
    three decimals would print the truths 0.0185 and -0.0175 alike)."""
    out = []
    for r in rows:
        value = truth["effects"].get(r["rhs"])
        out.append({**r, "truth": f"{value:.3g}" if isinstance(value, float) else value})
    return out


def _title(record: dict[str, Any], truth: dict[str, Any]) -> str:
    scale = f" (effects on the {truth['scale']})" if truth.get("scale") else ""
    return f"study '{record['scenario']}': fitted SCM beside the hidden truth{scale}"


def demo_report(
    record: dict[str, Any], tour_lines: Sequence[str], info: Mapping[str, Any] | None = None
) -> str:
    """``report.md`` of a demo run: the study report, then the tour (``info``: the run's
    ``run.json``, for the model calls)."""
    return study_report(record, info) + "\n" + "\n".join(tour_lines) + "\n"


def print_demo(record: dict[str, Any], path: Path, info: Mapping[str, Any] | None = None) -> None:
    """The study part of the demo on the terminal (tables as Markdown in a pipe)."""
    truth = record["truth"]
    print_table(
        _with_truth(path_rows(record.get("estimation")), truth),
        TRUTH_COLUMNS,
        title=_title(record, truth),
    )
    follow = record.get("follow_on") or {}
    plan = follow.get("plan") or {}
    if follow:
        print_table(
            _with_truth(path_rows(follow.get("estimation")), follow.get("truth") or truth),
            TRUTH_COLUMNS,
            title=f"follow-on: dropped {plan.get('dropped')}, added {plan.get('added')}",
        )
    lines = summary_lines(record, info)
    predicted = prediction_line(record, "scripted scientist's guesses vs mechanical LOO")
    if predicted:
        lines.append(predicted)
    lines.append(f"{len(record['decisions'])} scientist decisions with explanations in {path}")
    print_lines(lines)


__all__ = ["demo_report", "print_demo"]
