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

The paper's protocol: every prediction is scored on the rows the fit used. With
``drop_capped`` the conversations stopped by the statement cap are removed from all of
them (the paper removes its 80 capped auctions: theory says nothing about a partly run
auction); predict-y and (b) ask about every condition (``conditions=N`` asks about a
seeded sample of N instead, and the mechanical LOO is then also scored on that sample).
Where the hypothesis declares a theory, theory's prediction is a per-condition column and
is scored against the data and the predictions (:mod:`silicolab.studies.theory`).

A nominal outcome has no mean squared error: predict-y and both LOOs are skipped with the
reason in ``skipped``; predict-β (the coefficients of its indicator equations) still runs.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from silicolab.core.errors import InputError, ParseFailure
from silicolab.core.files import finite
from silicolab.core.sync import sync_twin
from silicolab.llm import LanguageModel
from silicolab.runs.health import UnitHealth
from silicolab.scm import PathEstimates
from silicolab.studies.hypothesis import Decision, Hypothesis
from silicolab.studies.predict_rows import (
    NOMINAL,
    choose_conditions,
    complete_rows,
    mechanical_loo,
    predict_from_fit,
    row_ids,
    uncapped,
)
from silicolab.studies.predict_schemas import (
    PredictionReply,
    beta_schema,
    outcome_scale,
    path_label,
    scoring_notes,
    treatment_texts,
)
from silicolab.studies.scientist import Scientist
from silicolab.studies.theory import mse, theory_scores, theory_values

SCHEMA_VERSION = 2
TASKS = ("y", "beta", "loo", "loo_mechanical")


@dataclass(frozen=True)
class Predictions:
    """What :func:`apredict` found: per-condition rows (``observed``, ``predict_y``,
    ``loo_mechanical``, ``loo_llm``, ``theory``), per-path rows (predict-β against the fit),
    the mean squared error of each method, how many model calls each task made, and each
    model answer with its explanation (``decisions``, step ``<condition>.predict_y``...).

    The protocol is recorded with them: the scientist ``model`` (its spec) and its
    ``temperature``, the ``rows`` scored (complete, and uncapped with ``drop_capped``;
    ``dropped_capped`` of them removed), the ``sample`` asked for (``None`` = every
    condition), the declared ``theory`` and the tasks ``skipped`` with their reasons.

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
    model: str | None = None
    temperature: float = 0.0
    seed: int = 0
    rows: int = 0
    sample: int | None = None
    drop_capped: bool = False
    dropped_capped: int = 0
    theory: str | None = None
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def table(self) -> pd.DataFrame:
        """The per-condition rows as a DataFrame."""
        return pd.DataFrame(self.conditions)

    def to_dict(self) -> dict[str, Any]:
        """A strict-JSON-ready record (NaN and ±inf become ``None``) with
        ``schema_version``."""
        return finite(
            {
                "schema_version": SCHEMA_VERSION,
                "outcome": self.outcome,
                "model": self.model,
                "temperature": self.temperature,
                "seed": self.seed,
                "rows": self.rows,
                "sample": self.sample,
                "drop_capped": self.drop_capped,
                "dropped_capped": self.dropped_capped,
                "theory": self.theory,
                "skipped": self.skipped,
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


def _sample_size(conditions: int | None, max_conditions: int | None) -> int | None:
    """``conditions``, or the deprecated ``max_conditions`` when only it is given."""
    if max_conditions is None:
        return conditions
    if conditions is not None:
        raise InputError("give conditions= (max_conditions= is its deprecated old name), not both")
    warnings.warn(
        "apredict(max_conditions=...) is deprecated: use conditions= (None = every condition)",
        DeprecationWarning,
        stacklevel=3,
    )
    return max_conditions


def _model_spec(model: LanguageModel | None) -> str | None:
    if model is None:
        return None
    return str(getattr(model, "spec", None) or type(model).__name__)


async def apredict(
    hypothesis: Hypothesis,
    data: pd.DataFrame,
    fit: PathEstimates,
    model: LanguageModel | None,
    *,
    conditions: int | None = None,
    seed: int = 0,
    tasks: Sequence[str] = ("y", "beta", "loo"),
    alpha: float = 0.05,
    temperature: float = 0.0,
    drop_capped: bool = False,
    max_conditions: int | None = None,
) -> Predictions:
    """Run the prediction ``tasks`` (``"y"``, ``"beta"``, ``"loo"`` = mechanical and
    model LOO, ``"loo_mechanical"`` = mechanical only) for the experiment's ``data`` (the
    study table, one row per run) and its ``fit``; see the module docstring.

    ``fit`` must be the fit of the same rows (``drop_capped`` as in the fit): a fit of
    another number of rows is refused, since predict-β would be scored against another
    experiment. ``conditions`` is how many conditions the model is asked about (``None``:
    all); ``max_conditions`` is its deprecated old name."""
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        raise InputError(f"unknown prediction tasks {unknown}; choose from {list(TASKS)}")
    if model is None and set(tasks) - {"loo_mechanical"}:
        raise InputError("predict-y, predict-beta and model LOO need a scientist model")
    sample = _sample_size(conditions, max_conditions)
    kept, rows, dropped = _fitted_rows(hypothesis, data, fit, drop_capped)
    chosen = choose_conditions(list(rows.index), sample, seed)
    table, skipped = _observed(hypothesis, rows, tasks)
    sci = Scientist(model, hypothesis.scenario, temperature, seed, agents=hypothesis.agents)  # type: ignore[arg-type]
    calls = {"predict_y": 0, "predict_beta": 0, "loo_llm": 0}
    health = UnitHealth(unit="predictions")
    context = {"hypothesis": hypothesis, "scale": outcome_scale(hypothesis)}
    if "y" in tasks and "y" not in skipped:
        table["predict_y"] = await _ask_each(sci, "predict_y", rows.loc[chosen], context, health)
        calls["predict_y"] = len(chosen)
    if {"loo", "loo_mechanical"} & set(tasks) and not {"loo", "loo_mechanical"} & set(skipped):
        loo, fits = mechanical_loo(hypothesis, kept)
        table["loo_mechanical"] = loo
        if "loo" in tasks:
            usable = [c for c in chosen if c in fits]
            table["loo_llm"] = await _ask_each(
                sci, "predict_loo", rows.loc[usable], context, health, fits
            )
            calls["loo_llm"] = len(usable)
    paths: list[dict[str, Any]] = []
    summary: dict[str, float | None] = {}
    if "beta" in tasks:
        if (fit.table.op == "~").any():
            paths, summary = await _predict_beta(sci, hypothesis, rows, fit, alpha, health)
            calls["predict_beta"] = 1
        else:
            skipped["beta"] = "the fitted model has no paths to predict"
    return Predictions(
        outcome=hypothesis.outcome.name,
        conditions=table.reset_index(drop=True).to_dict(orient="records"),
        paths=paths,
        mse=_scores(table, chosen),
        beta_summary=summary,
        calls=calls,
        llm_conditions=chosen if calls["predict_y"] or calls["loo_llm"] else [],
        decisions=sorted(sci.decisions, key=lambda d: d.step),
        health=health,
        model=_model_spec(model),
        temperature=float(temperature),
        seed=seed,
        rows=len(rows),
        sample=sample,
        drop_capped=drop_capped,
        dropped_capped=dropped,
        theory=hypothesis.theory,
        skipped=skipped,
    )


def _fitted_rows(
    hypothesis: Hypothesis, data: pd.DataFrame, fit: PathEstimates, drop_capped: bool
) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """``data`` without capped runs (with ``drop_capped``), its complete rows and how many
    capped runs were dropped; refused when ``fit`` was made on another number of rows."""
    kept, dropped = uncapped(data, drop_capped)
    rows = complete_rows(hypothesis, kept)
    if fit.n != len(rows):
        raise InputError(
            f"the fit used {fit.n} rows but the predictions would be scored on {len(rows)} "
            f"(drop_capped={drop_capped}, {dropped} capped removed): fit and predict the same "
            "rows (the fit's drop_capped)"
        )
    return kept, rows, dropped


def _observed(
    hypothesis: Hypothesis, rows: pd.DataFrame, tasks: Sequence[str]
) -> tuple[pd.DataFrame, dict[str, str]]:
    """The per-condition table before any prediction (``condition_id``, ``unit_id`` with
    replicates, ``observed`` and theory's prediction), and the tasks that cannot apply to
    this outcome with the reason (a nominal outcome: no squared error)."""
    outcome = hypothesis.outcome.name
    table = pd.DataFrame(
        {"condition_id": rows["condition_id"], "observed": rows[outcome]}, index=rows.index
    )
    if "replicate" in rows.columns:
        table.insert(1, "unit_id", rows.index)
    if hypothesis.outcome.type == "nominal":
        reason = NOMINAL.format(name=outcome)
        skipped = {t: reason for t in ("y", "loo", "loo_mechanical") if t in tasks}
        return table, skipped | ({"theory": reason} if hypothesis.theory else {})
    theory = theory_values(hypothesis, rows)
    if theory is not None:
        table["theory"] = theory
    return table, {}


def _scores(table: pd.DataFrame, chosen: list[str]) -> dict[str, float | None]:
    """The MSE of each prediction against the observed outcome (the model's on the
    ``chosen`` rows it was asked about, the mechanical LOO on every row and on those), and
    the theory benchmark (:func:`silicolab.studies.theory.theory_scores`)."""
    errors = {
        "predict_y": ("predict_y", chosen),
        "loo_llm": ("loo_llm", chosen),
        "loo_mechanical": ("loo_mechanical", list(table.index)),
        "loo_mechanical_subset": ("loo_mechanical", chosen),
    }
    scores = {
        key: mse(table.loc[ids, "observed"], table.loc[ids, column])
        for key, (column, ids) in errors.items()
        if column in table
    }
    return scores | theory_scores(table, chosen)


predict = sync_twin(apredict)


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
    "choose_conditions",
    "complete_rows",
    "mechanical_loo",
    "mse",
    "predict",
    "predict_from_fit",
    "row_ids",
    "uncapped",
]
