"""Fitting the hypothesized SCM to a study's data, with interactions and nested tests.

The main fit is :func:`silicolab.scm.estimate_paths` on the hypothesis' equations (lavaan's
ML standard errors and z-tests, standardized estimates). Optional: every pairwise
interaction of each equation's causes, compared with the main model by LR and Wald tests;
dropping conditions whose conversation hit the statement cap (the paper drops the 80
capped auctions); and alternative models on the hypothesis' derived variables
(:mod:`silicolab.studies.derived`, e.g. the auction's second-highest budget), each tested
against the main model within a model that nests both.

Every model is checked for estimability first (:mod:`silicolab.scm.estimability`). A main
model that cannot be estimated raises :class:`~silicolab.scm.NotEstimable`; an interaction
or alternative model that cannot be estimated is listed in ``StudyFit.skipped`` with its
problems, and a nested test that would involve it is listed with the reason instead of a
statistic, so no LR or Wald test is ever computed from a degenerate fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from silicolab.core.errors import InputError
from silicolab.scm import NotEstimable, Variable, estimate_paths
from silicolab.scm.estimation import PathEstimates
from silicolab.studies.derived import derived_columns
from silicolab.studies.hypothesis import Hypothesis

#: Table columns that are never an outcome.
NOT_OUTCOMES = ("condition_id", "replicate", "replicates", "stop_reason")


@dataclass
class StudyFit:
    """The fitted SCM and the tests around it; ``skipped`` lists the models that were not
    estimable (``{"model": name, "problems": [...]}``) and ``outcome`` the fitted outcome
    column."""

    main: PathEstimates
    interactions: PathEstimates | None = None
    tests: list[dict[str, Any]] = field(default_factory=list)
    alternatives: dict[str, PathEstimates] = field(default_factory=dict)
    dropped_capped: int = 0
    skipped: list[dict[str, Any]] = field(default_factory=list)
    outcome: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "main": self.main.to_dict(),
            "outcome": self.outcome,
            "interactions": self.interactions.to_dict() if self.interactions else None,
            "tests": self.tests,
            "alternatives": {k: v.to_dict() for k, v in self.alternatives.items()},
            "skipped": self.skipped,
            "dropped_capped": self.dropped_capped,
        }

    def paths(self) -> pd.DataFrame:
        """The main fit's path rows (``op == "~"``)."""
        return self.main.table[self.main.table.op == "~"].reset_index(drop=True)


def scm_variables(hypothesis: Hypothesis) -> list[Variable]:
    """Estimation's view of the variables: numbers are continuous; nominal ones keep their
    levels so they are dummy-coded (a nominal outcome becomes k-1 indicator outcomes)."""
    out = []
    for v in hypothesis.variables:
        if v.type == "nominal":
            levels = tuple(v.levels or v.values)
            out.append(Variable(name=v.name, type="nominal", levels=levels))
        else:
            out.append(Variable(name=v.name, type="continuous"))
    return out


def outcome_choices(hypothesis: Hypothesis, table: pd.DataFrame) -> list[str]:
    """The columns of ``table`` that :func:`fit_study` accepts as ``outcome``: measured
    variables and numeric run columns such as ``n_statements`` (not the outcome's causes)."""
    causes = set(hypothesis.equations()[hypothesis.outcome.name])
    measured = {v.name for v in hypothesis.measured}
    return [
        str(c)
        for c in table.columns
        if c not in NOT_OUTCOMES
        and c not in causes
        and (c in measured or pd.api.types.is_numeric_dtype(table[c]))
    ]


def _equations(hypothesis: Hypothesis, outcome: str) -> dict[str, list[str]]:
    """The hypothesis' equations with ``outcome`` in place of the hypothesized outcome."""
    equations = hypothesis.equations()
    causes = equations.pop(hypothesis.outcome.name)
    equations.pop(outcome, None)  # a mediator fitted as the outcome gets the outcome's causes
    equations[outcome] = causes
    return equations


def fit_study(
    hypothesis: Hypothesis,
    table: pd.DataFrame,
    *,
    interactions: bool = False,
    drop_capped: bool = False,
    alternatives: bool = True,
    outcome: str | None = None,
) -> StudyFit:
    """Fit the hypothesis to ``table`` (from :func:`silicolab.studies.data.study_table`).

    ``outcome`` fits another column of the table (a measured variable, or a numeric run
    column such as ``n_statements``) as the outcome, with the hypothesized outcome's
    causes. Raises :class:`~silicolab.scm.NotEstimable` when the main model cannot be
    estimated; see the module docstring for the other models.
    """
    outcome = outcome or hypothesis.outcome.name
    if outcome != hypothesis.outcome.name:
        choices = outcome_choices(hypothesis, table)
        if outcome not in choices:
            raise InputError(
                f"{outcome!r} cannot be fitted as the outcome: choose one of {choices} "
                "(measured variables and numeric run columns, not the outcome's causes)"
            )
    data = table
    dropped = 0
    if drop_capped:
        keep = data.stop_reason != "cap"
        dropped = int((~keep).sum())
        data = data[keep]
    equations = _equations(hypothesis, outcome)
    variables = scm_variables(hypothesis)
    usable = data.dropna(subset=list(equations))
    if len(usable) < 3:
        raise NotEstimable(
            [
                {
                    "equation": outcome,
                    "kind": "too_few_rows",
                    "detail": f"only {len(usable)} conditions have every measured value (of "
                    f"{len(table)}{f', {dropped} capped ones dropped' if dropped else ''}); "
                    "run more conditions or check the survey answers",
                }
            ],
            "the hypothesized SCM",
        )
    try:
        main = estimate_paths(data, equations, variables=variables)
    except NotEstimable as exc:
        raise NotEstimable(exc.problems, "the hypothesized SCM") from None
    fit = StudyFit(main=main, dropped_capped=dropped, outcome=outcome)
    if interactions:
        wide = _try(fit, "pairwise interactions", data, equations, variables, True)
        fit.interactions = wide[1]
        _test(fit, "main effects vs pairwise interactions", ("main", main), wide)
    if alternatives and hypothesis.derived:
        _fit_alternatives(hypothesis, data, fit, variables, outcome, equations[outcome])
    return fit


def _try(
    fit: StudyFit,
    name: str,
    data: pd.DataFrame,
    equations: dict[str, list[str]],
    variables: list[Variable],
    interactions: bool = False,
) -> tuple[str, PathEstimates | None]:
    """``(name, the fit)``, or ``(name, None)`` with the model listed in ``fit.skipped``."""
    try:
        return name, estimate_paths(data, equations, variables=variables, interactions=interactions)
    except NotEstimable as exc:
        fit.skipped.append({"model": name, "problems": exc.problems})
        return name, None


def _test(
    fit: StudyFit,
    name: str,
    a: tuple[str, PathEstimates | None],
    b: tuple[str, PathEstimates | None],
) -> None:
    """The LR and Wald tests between two nested models, or, when either is not estimable,
    the test listed with the reason and no statistic."""
    (a_name, a_fit), (b_name, b_fit) = a, b
    if a_fit is None or b_fit is None:
        missing = [label for label, model in (a, b) if model is None]
        kinds = {
            s["model"]: ", ".join(dict.fromkeys(p["kind"] for p in s["problems"]))
            for s in fit.skipped
        }
        reason = "; ".join(f"{m} is not estimable ({kinds[m]})" for m in missing)
        fit.tests.append({"name": name, "models": [a_name, b_name], "skipped": reason})
        return
    fit.tests.append({"name": name, "models": [a_name, b_name], **a_fit.compare(b_fit).to_dict()})


def _fit_alternatives(
    hypothesis: Hypothesis,
    data: pd.DataFrame,
    fit: StudyFit,
    variables: list[Variable],
    outcome: str,
    causes: list[str],
) -> None:
    """For each derived variable: the model with it as the only cause, the model with it
    added to the hypothesized causes, and the LR/Wald tests of each smaller model (all on
    the same rows: the outcome equation alone)."""
    extended = derived_columns(hypothesis, data)
    extra = [*variables, *(Variable(name=d.name) for d in hypothesis.derived)]
    main = _try(fit, f"{outcome} ~ {' + '.join(causes)}", extended, {outcome: causes}, extra)
    for derived in hypothesis.derived:
        name = derived.name
        alone = _try(fit, f"{outcome} ~ {name}", extended, {outcome: [name]}, extra)
        both_name = f"{outcome} ~ {' + '.join([*causes, name])}"
        both = _try(fit, both_name, extended, {outcome: [*causes, name]}, extra)
        for label, model in (alone, both):
            if model is not None:
                fit.alternatives[label] = model
        _test(fit, f"does {name} add to {', '.join(causes)}?", main, both)
        _test(fit, f"do {', '.join(causes)} add to {name}?", alone, both)


__all__ = ["NOT_OUTCOMES", "StudyFit", "fit_study", "outcome_choices", "scm_variables"]
