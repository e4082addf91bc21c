"""From condition runs to a tidy data table a researcher can analyse, with a dictionary.

One row per finished run: ``condition_id`` and ``replicate`` (which independent run of
the condition, 0-based), one column per variable (treatments as the numbers they stand
for, measured variables as parsed and aggregated survey values, NaN for NA), then
``stop_reason`` and ``n_statements``. Ordinal answers are scored 1..k like ordinal
treatments (the survey parser returns a 0-based level index); binary ones 0/1. The column
dictionary says for every column what it is and how it is coded, and the NA count per
measured variable is reported. :func:`aggregate_replicates` turns the replicates of each
condition into one row of condition means.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from silicolab.studies.conduct import ConditionRun
from silicolab.studies.hypothesis import Hypothesis, StudyVariable


def _measured_value(variable: StudyVariable, value: Any) -> Any:
    if value is None:
        return float("nan")
    if variable.type == "nominal":
        return value
    if variable.type == "ordinal":
        return float(value) + 1.0
    return float(value)


def study_table(hypothesis: Hypothesis, runs: Sequence[ConditionRun]) -> pd.DataFrame:
    """The analysis table of the runs that finished without an error."""
    rows = []
    for run in runs:
        if run.error is not None:
            continue
        row: dict[str, Any] = {
            "condition_id": run.condition.id,
            "replicate": run.condition.replicate,
        }
        for v in hypothesis.treatments:
            row[v.name] = v.numeric(run.condition.treatments[v.name])
        for v in hypothesis.measured:
            row[v.name] = _measured_value(v, run.values.get(v.name))
        row["stop_reason"] = run.stop_reason
        row["n_statements"] = len(run.statements)
        rows.append(row)
    columns = [
        "condition_id",
        "replicate",
        *(v.name for v in hypothesis.treatments),
        *(v.name for v in hypothesis.measured),
        "stop_reason",
        "n_statements",
    ]
    return pd.DataFrame(rows, columns=columns)


def _coding(v: StudyVariable) -> str:
    levels = v.levels or v.values
    if v.type == "ordinal":
        return "; ".join(f"{i + 1} = {level}" for i, level in enumerate(levels))
    if v.type == "binary":
        return f"0 = {levels[0]}; 1 = {levels[1]}" if len(levels) == 2 else "0/1"
    if v.type == "nominal":
        return "category text (dummy-coded in estimation)"
    return f"number in {v.units}" if v.units else "number"


def column_dictionary(hypothesis: Hypothesis) -> list[dict[str, str]]:
    """What each column of :func:`study_table` holds and how it is coded."""
    out = [
        {"column": "condition_id", "kind": "design", "description": "stable condition id"},
        {
            "column": "replicate",
            "kind": "design",
            "description": "which independent run of the condition (0-based; each replicate "
            "is a separate simulation with its own draws)",
        },
    ]
    for v in [*hypothesis.treatments, *hypothesis.measured]:
        out.append(
            {
                "column": v.name,
                "kind": "treatment" if v.role == "cause" else v.role,
                "type": v.type,
                "units": v.units,
                "coding": _coding(v),
                "description": v.description or v.operationalization,
            }
        )
    out += [
        {"column": "stop_reason", "kind": "run", "description": "why the conversation ended"},
        {"column": "n_statements", "kind": "run", "description": "statements made"},
    ]
    return out


def na_counts(hypothesis: Hypothesis, table: pd.DataFrame) -> dict[str, int]:
    """NA values per measured variable."""
    return {v.name: int(table[v.name].isna().sum()) for v in hypothesis.measured}


def _mode(values: pd.Series) -> Any:
    """The most frequent non-NA value (ties: the one seen first), NaN when all are NA."""
    present = values.dropna()
    if present.empty:
        return float("nan")
    counts = present.value_counts(sort=False)
    return counts.index[int(counts.to_numpy().argmax())]


def aggregate_replicates(hypothesis: Hypothesis, table: pd.DataFrame) -> pd.DataFrame:
    """One row per condition of :func:`study_table`'s ``table``: treatments as they are,
    each measured variable averaged over the condition's replicates (the mode for nominal
    ones), ``n_statements`` averaged, ``stop_reason`` the most frequent, and
    ``replicates`` the number of rows combined.

    NA answers are left out of a condition's mean (a condition whose every replicate is NA
    stays NA), so the mean of a binary outcome is the share of "yes" among the replicates
    that answered. Conditions keep the order in which they first appear."""
    measured = {v.name: v for v in hypothesis.measured}
    treatments = [v.name for v in hypothesis.treatments]
    rules: dict[str, Any] = {name: "first" for name in treatments}
    for name, v in measured.items():
        rules[name] = _mode if v.type == "nominal" else "mean"
    rules |= {"stop_reason": _mode, "n_statements": "mean", "replicate": "size"}
    grouped = table.groupby("condition_id", sort=False, dropna=False).agg(rules)
    out = grouped.rename(columns={"replicate": "replicates"}).reset_index()
    columns = ["condition_id", *treatments, *measured, "stop_reason", "n_statements"]
    return out[[*columns, "replicates"]]


__all__ = ["aggregate_replicates", "column_dictionary", "na_counts", "study_table"]
