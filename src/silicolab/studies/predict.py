"""Can the language model predict the experiment it was part of? (paper §4)

Three comparisons, each against the data of the experiment:

* **predict-y**: the scientist model sees the scenario, the variables and one condition's
  treatments, and predicts that condition's outcome;
* **predict-β**: it sees the SCM (variables, data summary, paths) and predicts every path
  coefficient and whether it is significant; compared with the fitted estimates (error,
  sign, significance, |predicted / actual|, a z-test of the prediction against the estimate);
* **predict-y given β₋ᵢ**: for each condition i the SCM is refitted without i
  (leave-one-out). (a) *mechanical*: y_i is predicted from the refit and i's treatments
  (through any mediators); (b) the model is shown the refit's coefficients and predicts y_i.

The model is asked once per condition for predict-y and (b), so those run on a seeded
subset of at most ``max_conditions`` conditions; the mechanical LOO runs on all of them and
is also scored on that subset for a like-for-like comparison.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from silicolab.core.errors import InputError, ParseFailure
from silicolab.core.seeding import rng
from silicolab.llm import LanguageModel
from silicolab.llm.base import run_sync
from silicolab.runs.health import UnitHealth
from silicolab.scm import PathEstimates, estimate_paths
from silicolab.studies.fit import scm_variables
from silicolab.studies.hypothesis import Decision, Hypothesis
from silicolab.studies.predict_schemas import PredictionReply, beta_schema, path_label
from silicolab.studies.scientist_steps import Scientist

SCHEMA_VERSION = 1
TASKS = ("y", "beta", "loo", "loo_mechanical")


@dataclass(frozen=True)
class Predictions:
    """What :func:`apredict` found: per-condition rows (``observed``, ``predict_y``,
    ``loo_mechanical``, ``loo_llm``), per-path rows (predict-β against the fit), the
    mean squared error of each method, how many model calls each task made, and each
    model answer with its explanation (``decisions``, step ``<condition>.predict_y``...).

    A reply that stayed invalid costs only its own prediction (NaN, left out of the MSE;
    predict-β: no path rows): ``health`` counts the model steps and those failures."""

    outcome: str
    conditions: list[dict[str, Any]]
    paths: list[dict[str, Any]]
    mse: dict[str, float | None]
    beta_summary: dict[str, float | None]
    calls: dict[str, int]
    llm_conditions: list[str] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    health: UnitHealth = field(default_factory=lambda: UnitHealth(unit="predictions"))

    @property
    def table(self) -> pd.DataFrame:
        """The per-condition rows as a DataFrame."""
        return pd.DataFrame(self.conditions)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record (NaN becomes ``None``) with ``schema_version``."""
        return _clean(
            {
                "schema_version": SCHEMA_VERSION,
                "outcome": self.outcome,
                "mse": self.mse,
                "beta_summary": self.beta_summary,
                "calls": self.calls,
                "llm_conditions": self.llm_conditions,
                "conditions": self.conditions,
                "paths": self.paths,
                "decisions": [d.model_dump(mode="json") for d in self.decisions],
                "health": self.health.to_dict(),
            }
        )


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _model_columns(hypothesis: Hypothesis) -> list[str]:
    equations = hypothesis.equations()
    return list(dict.fromkeys([*equations, *(c for cs in equations.values() for c in cs)]))


def complete_rows(hypothesis: Hypothesis, data: pd.DataFrame) -> pd.DataFrame:
    """The rows with a value in every model column, indexed by ``condition_id``."""
    columns = _model_columns(hypothesis)
    missing = [c for c in ["condition_id", *columns] if c not in data.columns]
    if missing:
        raise InputError(f"the data has no column for {missing}; it needs {columns}")
    return data.dropna(subset=columns).set_index("condition_id", drop=False)


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
    hypothesis: Hypothesis, data: pd.DataFrame
) -> tuple[pd.Series, dict[str, PathEstimates]]:
    """Leave-one-out predictions of the outcome for every complete condition, and the fit
    without each condition (a condition whose removal leaves the model unidentified gets
    NaN and no fit)."""
    rows = complete_rows(hypothesis, data)
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


def choose_conditions(ids: Sequence[str], max_conditions: int, seed: int | None) -> list[str]:
    """All of ``ids``, or a seeded random ``max_conditions`` of them in their order."""
    if max_conditions < 1:
        raise InputError(f"max_conditions must be at least 1, got {max_conditions}")
    if len(ids) <= max_conditions:
        return list(ids)
    picks = rng(seed, "predict", "conditions").choice(len(ids), max_conditions, replace=False)
    return [ids[i] for i in sorted(int(p) for p in picks)]


def mse(observed: pd.Series, predicted: pd.Series) -> float | None:
    """Mean squared error over the rows where both are known (``None`` when none are)."""
    both = pd.concat([observed, predicted], axis=1).dropna()
    if both.empty:
        return None
    return float(np.mean((both.iloc[:, 0] - both.iloc[:, 1]) ** 2))


def treatment_texts(hypothesis: Hypothesis, row: pd.Series) -> dict[str, str]:
    """The treatment values of a data row as the agents saw them (``"$20"``, not 20.0)."""
    out = {}
    for v in hypothesis.treatments:
        value = row[v.name]
        by_number = {v.numeric(text): text for text in v.values}
        out[v.name] = by_number.get(value, str(value))
    return out


def scoring_notes(hypothesis: Hypothesis) -> list[str]:
    """How non-numeric variables are scored as numbers in the data."""
    notes = []
    for v in hypothesis.variables:
        order = v.levels or v.values
        if v.type == "binary" and order:
            notes.append(f"{v.name} is scored 0 for '{order[0]}' and 1 for '{order[1]}'.")
        elif v.type == "ordinal" and order:
            scores = ", ".join(f"{i} = '{x}'" for i, x in enumerate(order, start=1))
            notes.append(f"{v.name} is scored {scores}.")
        elif v.type == "nominal" and order:
            notes.append(f"{v.name} is coded by indicators against '{order[0]}'.")
    return notes


def outcome_scale(hypothesis: Hypothesis) -> str:
    """What kind of number the outcome prediction should be."""
    o = hypothesis.outcome
    order = o.levels
    if o.type == "binary" and order:
        return f"a number from 0 ('{order[0]}') to 1 ('{order[1]}'), e.g. a probability"
    if o.type == "ordinal" and order:
        return f"a number from 1 ('{order[0]}') to {len(order)} ('{order[-1]}')"
    return f"one number{f' in {o.units}' if o.units else ''}"


async def apredict(
    hypothesis: Hypothesis,
    data: pd.DataFrame,
    fit: PathEstimates,
    model: LanguageModel | None,
    *,
    max_conditions: int = 50,
    seed: int = 0,
    tasks: Sequence[str] = ("y", "beta", "loo"),
    alpha: float = 0.05,
    temperature: float = 0.0,
) -> Predictions:
    """Run the prediction ``tasks`` (``"y"``, ``"beta"``, ``"loo"`` = mechanical and
    model LOO, ``"loo_mechanical"`` = mechanical only) for the experiment's ``data``
    (one row per condition) and its ``fit``; see the module docstring."""
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        raise InputError(f"unknown prediction tasks {unknown}; choose from {list(TASKS)}")
    if model is None and set(tasks) - {"loo_mechanical"}:
        raise InputError("predict-y, predict-beta and model LOO need a scientist model")
    rows = complete_rows(hypothesis, data)
    outcome = hypothesis.outcome.name
    chosen = choose_conditions(list(rows.index), max_conditions, seed)
    table = pd.DataFrame({"condition_id": rows.index, "observed": rows[outcome]}, index=rows.index)
    sci = Scientist(model, hypothesis.scenario, temperature, seed, agents=hypothesis.agents)  # type: ignore[arg-type]
    calls = {"predict_y": 0, "predict_beta": 0, "loo_llm": 0}
    health = UnitHealth(unit="predictions")
    context = {"hypothesis": hypothesis, "scale": outcome_scale(hypothesis)}
    if "y" in tasks:
        table["predict_y"] = await _ask_each(sci, "predict_y", rows.loc[chosen], context, health)
        calls["predict_y"] = len(chosen)
    if "loo" in tasks or "loo_mechanical" in tasks:
        loo, fits = mechanical_loo(hypothesis, data)
        table["loo_mechanical"] = loo
        if "loo" in tasks:
            usable = [c for c in chosen if c in fits]
            table["loo_llm"] = await _ask_each(
                sci, "predict_loo", rows.loc[usable], context, health, fits
            )
            calls["loo_llm"] = len(usable)
    paths, summary = [], {}
    if "beta" in tasks:
        paths, summary = await _predict_beta(sci, hypothesis, rows, fit, alpha, health)
        calls["predict_beta"] = 1
    errors = {
        "predict_y": ("predict_y", chosen),
        "loo_llm": ("loo_llm", chosen),
        "loo_mechanical": ("loo_mechanical", list(rows.index)),
        "loo_mechanical_subset": ("loo_mechanical", chosen),
    }
    scores = {
        key: mse(table.loc[ids, "observed"], table.loc[ids, column])
        for key, (column, ids) in errors.items()
        if column in table
    }
    return Predictions(
        outcome=outcome,
        conditions=table.reset_index(drop=True).to_dict(orient="records"),
        paths=paths,
        mse=scores,
        beta_summary=summary,
        calls=calls,
        llm_conditions=chosen if set(tasks) & {"y", "loo"} else [],
        decisions=sorted(sci.decisions, key=lambda d: d.step),
        health=health,
    )


def predict(
    hypothesis: Hypothesis, data: pd.DataFrame, fit: PathEstimates, model: LanguageModel | None,
    **options: Any,
) -> Predictions:  # fmt: skip
    """The synchronous twin of :func:`apredict`."""
    return run_sync(apredict(hypothesis, data, fit, model, **options), twin="apredict")


async def _ask_each(
    sci: Scientist,
    step: str,
    rows: pd.DataFrame,
    context: dict[str, Any],
    health: UnitHealth,
    fits: dict[str, PathEstimates] | None = None,
) -> pd.Series:
    """One model prediction of the outcome per row (concurrently), keyed by condition; NaN
    where the reply stayed invalid (counted in ``health``)."""
    hypothesis: Hypothesis = context["hypothesis"]

    async def one(cid: str) -> float:
        extra: dict[str, Any] = {}
        if fits is not None:
            table = fits[cid].table
            kept = table[table.op.isin(["~", "~1"])]
            extra = {
                "n": fits[cid].n,
                "coefficients": kept.to_dict(orient="records"),
                "scoring": scoring_notes(hypothesis),
            }
        health.steps += 1
        try:
            reply = await sci.ask(
                step,
                PredictionReply,
                subject=cid,
                treatments=treatment_texts(hypothesis, rows.loc[cid]),
                **context,
                **extra,
            )
        except ParseFailure as exc:
            health.note_failure("parse_failures", exc.raw)
            return float("nan")
        return reply.prediction

    values = await asyncio.gather(*(one(cid) for cid in rows.index))
    return pd.Series(values, index=rows.index, dtype=float)


async def _predict_beta(
    sci: Scientist,
    hypothesis: Hypothesis,
    rows: pd.DataFrame,
    fit: PathEstimates,
    alpha: float,
    health: UnitHealth,
) -> tuple[list[dict[str, Any]], dict[str, float | None]]:
    """Ask for every path's coefficient and significance; compare with ``fit`` (no rows
    and an empty summary when the reply stayed invalid, counted in ``health``)."""
    from scipy import stats

    actual = fit.table[fit.table.op == "~"]
    labels = tuple(path_label(r.rhs, r.lhs) for r in actual.itertuples())
    # treatments only: the outcome's spread would give away the answer
    summary = {
        v.name: (float(rows[v.name].mean()), float(rows[v.name].std()))
        for v in hypothesis.treatments
        if v.type != "nominal"
    }
    health.steps += 1
    try:
        reply = await sci.ask(
            "predict_beta",
            beta_schema(labels),
            hypothesis=hypothesis,
            n=len(rows),
            summary=summary,
            scoring=scoring_notes(hypothesis),
            alpha=alpha,
            paths=labels,
        )
    except ParseFailure as exc:
        health.note_failure("parse_failures", exc.raw)
        return [], {}
    guesses = {g.path: g for g in reply.paths}  # type: ignore[attr-defined]
    out = []
    for label, r in zip(labels, actual.itertuples(), strict=True):
        guess = guesses[label]
        significant = bool(r.p < alpha)
        out.append(
            {
                "lhs": r.lhs,
                "rhs": r.rhs,
                "estimate": float(r.est),
                "se": float(r.se),
                "p": float(r.p),
                "significant": significant,
                "predicted": float(guess.estimate),
                "predicted_significant": bool(guess.significant),
                "error": float(guess.estimate - r.est),
                "sign_correct": bool(np.sign(guess.estimate) == np.sign(r.est)),
                "significance_correct": bool(guess.significant) == significant,
                "ratio": abs(guess.estimate / r.est) if r.est != 0 else float("nan"),
                "z_test_p": float(2 * stats.norm.sf(abs(guess.estimate - r.est) / r.se))
                if r.se > 0
                else float("nan"),
            }
        )
    frame = pd.DataFrame(out)
    ratios = frame.ratio.replace([np.inf], np.nan).dropna()
    summary_out = {
        "mean_abs_error": float(frame.error.abs().mean()),
        "share_sign_correct": float(frame.sign_correct.mean()),
        "share_significance_correct": float(frame.significance_correct.mean()),
        "mean_ratio": float(ratios.mean()) if len(ratios) else None,
        "share_overestimates": float((frame.predicted.abs() > frame.estimate.abs()).mean()),
    }
    return out, summary_out


__all__ = [
    "Predictions",
    "apredict",
    "complete_rows",
    "mechanical_loo",
    "mse",
    "predict",
    "predict_from_fit",
]
