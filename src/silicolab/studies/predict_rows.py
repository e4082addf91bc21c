"""Which rows the predictions of :mod:`silicolab.studies.predict` use, and the model-free
leave-one-out predictions (the paper's mechanical LOO baseline, §4.3 fn. 19).

Every prediction is scored on the rows the fit used: the complete rows of the model's
columns, without the conversations stopped by the statement cap when the study drops them
(the paper removes its 80 capped auctions: "auction theory does not make predictions about
partially completed auctions"). Rows are keyed by their run id, so a study with
replicates keeps one row per run. The scientist model is asked about every one of them, or
about a seeded sample when a number of conditions is given.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from silicolab.core.errors import InputError
from silicolab.core.seeding import rng
from silicolab.scm import PathEstimates, estimate_paths
from silicolab.studies.fit import scm_variables
from silicolab.studies.hypothesis import Hypothesis

#: The stop reason of a conversation ended by the statement cap (see studies.data).
CAPPED = "cap"
#: Why a nominal outcome gets no numeric prediction.
NOMINAL = (
    "the outcome {name!r} is nominal (categories, dummy-coded in the fit): a predicted number "
    "has no squared error against a category, so this prediction is not made"
)


def _model_columns(hypothesis: Hypothesis) -> list[str]:
    equations = hypothesis.equations()
    return list(dict.fromkeys([*equations, *(c for cs in equations.values() for c in cs)]))


def row_ids(data: pd.DataFrame) -> pd.Index:
    """Each row's run id: ``condition_id``, with ``/r<k>`` for the replicates after the
    first when the table has a ``replicate`` column (as :attr:`Condition.unit_id
    <silicolab.studies.design.Condition.unit_id>`). Duplicates are refused."""
    ids = data["condition_id"].astype(str)
    if "replicate" in data.columns:
        k = pd.to_numeric(data["replicate"], errors="coerce").fillna(0).astype(int)
        ids = ids.where(k == 0, ids + "/r" + k.astype(str))
    if ids.duplicated().any():
        raise InputError(
            f"the data has several rows for {ids[ids.duplicated()].iloc[0]!r}; give each run "
            "its own row (a replicate column numbers the replicates of a condition)"
        )
    return pd.Index(ids, name="unit_id")


def complete_rows(hypothesis: Hypothesis, data: pd.DataFrame) -> pd.DataFrame:
    """The rows with a value in every model column, indexed by their run id
    (:func:`row_ids`: the ``condition_id``, or the replicate's unit id)."""
    columns = _model_columns(hypothesis)
    missing = [c for c in ["condition_id", *columns] if c not in data.columns]
    if missing:
        raise InputError(f"the data has no column for {missing}; it needs {columns}")
    rows = data.dropna(subset=columns)
    return rows.set_axis(row_ids(rows), axis=0)


def uncapped(data: pd.DataFrame, drop_capped: bool) -> tuple[pd.DataFrame, int]:
    """``data`` without the conversations stopped by the statement cap when
    ``drop_capped`` (``stop_reason == "cap"``), and how many were removed."""
    if not drop_capped:
        return data, 0
    if "stop_reason" not in data.columns:
        raise InputError(
            "drop_capped needs the data's stop_reason column (the study's data.csv has it); "
            "pass the study table, or drop_capped=False"
        )
    capped = data["stop_reason"] == CAPPED
    return data[~capped], int(capped.sum())


def _design_rows(hypothesis: Hypothesis, rows: pd.DataFrame) -> pd.DataFrame:
    """Numeric design columns (dummies for nominal causes), indexed like ``rows``."""
    from silicolab.scm.estimation_design import build_design

    declared = {v.name: v for v in scm_variables(hypothesis)}
    design = build_design(rows.reset_index(drop=True), hypothesis.equations(), declared)
    return design.columns.set_index(rows.index)


def predict_from_fit(fit: PathEstimates, row: pd.Series | dict[str, float], outcome: str) -> float:
    """The fitted SCM's prediction of ``outcome`` from the exogenous design values in
    ``row``; mediators are predicted first and their predictions used downstream."""
    values = {k: float(v) for k, v in dict(row).items() if not isinstance(v, str)}
    for lhs, eq in fit.equations.items():
        terms = np.array([values[t] for t in eq.terms], dtype=float)
        values[lhs] = float(eq.params[0] + eq.params[1:] @ terms)
    return values[outcome]


def mechanical_loo(
    hypothesis: Hypothesis, data: pd.DataFrame, *, drop_capped: bool = False
) -> tuple[pd.Series, dict[str, PathEstimates]]:
    """Leave-one-out predictions of the outcome for every complete row (capped runs removed
    first with ``drop_capped``), and the fit without each row. A row whose removal leaves
    the model not estimable (e.g. the only row with another value of a cause) gets NaN and
    no fit. A nominal outcome has no numeric prediction: an :class:`InputError`."""
    if hypothesis.outcome.type == "nominal":
        raise InputError(NOMINAL.format(name=hypothesis.outcome.name))
    rows = complete_rows(hypothesis, uncapped(data, drop_capped)[0])
    design = _design_rows(hypothesis, rows)
    equations = hypothesis.equations()
    variables = scm_variables(hypothesis)
    predictions, fits = {}, {}
    for cid in rows.index:
        try:
            fit = estimate_paths(
                rows.drop(index=cid), equations, variables=variables, standardize=False
            )
        except InputError:
            predictions[cid] = float("nan")
            continue
        fits[cid] = fit
        predictions[cid] = predict_from_fit(fit, design.loc[cid], hypothesis.outcome.name)
    return pd.Series(predictions, name="loo_mechanical", dtype=float), fits


def choose_conditions(ids: Sequence[str], conditions: int | None, seed: int | None) -> list[str]:
    """All of ``ids`` (``conditions=None``, the paper's protocol), or a seeded random
    ``conditions`` of them in their order."""
    if conditions is None:
        return list(ids)
    if isinstance(conditions, bool) or not isinstance(conditions, int | np.integer):
        raise InputError(f"conditions must be a whole number or None, got {conditions!r}")
    if conditions < 1:
        raise InputError(f"conditions must be at least 1 (or None for all), got {conditions}")
    if len(ids) <= conditions:
        return list(ids)
    picks = rng(seed, "predict", "conditions").choice(len(ids), int(conditions), replace=False)
    return [ids[i] for i in sorted(int(p) for p in picks)]


__all__ = [
    "CAPPED",
    "NOMINAL",
    "choose_conditions",
    "complete_rows",
    "mechanical_loo",
    "predict_from_fit",
    "row_ids",
    "uncapped",
]
