"""Fitting the hypothesized SCM to a study's data, with interactions and nested tests.

The main fit is :func:`silicolab.scm.estimate_paths` on the hypothesis' equations (lavaan's
ML standard errors and z-tests, standardized estimates). Optional: every pairwise
interaction of each equation's causes, compared with the main model by LR and Wald tests;
dropping conditions whose conversation hit the statement cap (the paper drops the 80
capped auctions); and named alternative models on derived columns, such as the auction's
second-highest budget, each tested against the main model within a model that nests both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from silicolab.core.errors import InputError
from silicolab.scm import Variable, estimate_paths
from silicolab.scm.estimation import PathEstimates
from silicolab.studies.hypothesis import Hypothesis

#: Study name -> derived column name -> how to compute it from the table.
DERIVED: dict[str, dict[str, Callable[[pd.DataFrame], pd.Series]]] = {
    "auction": {
        "second_highest_budget": lambda t: pd.Series(
            np.sort(t[["budget_1", "budget_2", "budget_3"]].to_numpy(float), axis=1)[:, -2],
            index=t.index,
        )
    }
}


@dataclass
class StudyFit:
    """The fitted SCM and the tests around it."""

    main: PathEstimates
    interactions: PathEstimates | None = None
    tests: list[dict[str, Any]] = field(default_factory=list)
    alternatives: dict[str, PathEstimates] = field(default_factory=dict)
    dropped_capped: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "main": self.main.to_dict(),
            "interactions": self.interactions.to_dict() if self.interactions else None,
            "tests": self.tests,
            "alternatives": {k: v.to_dict() for k, v in self.alternatives.items()},
            "dropped_capped": self.dropped_capped,
        }

    def paths(self) -> pd.DataFrame:
        """The main fit's path rows (``op == "~"``)."""
        return self.main.table[self.main.table.op == "~"].reset_index(drop=True)


def scm_variables(hypothesis: Hypothesis) -> list[Variable]:
    """Estimation's view of the variables: numbers are continuous; nominal ones keep their
    levels so they are dummy-coded."""
    out = []
    for v in hypothesis.variables:
        if v.type == "nominal":
            levels = tuple(v.levels or v.values)
            out.append(Variable(name=v.name, type="nominal", levels=levels))
        else:
            out.append(Variable(name=v.name, type="continuous"))
    return out


def fit_study(
    hypothesis: Hypothesis,
    table: pd.DataFrame,
    *,
    interactions: bool = False,
    drop_capped: bool = False,
    alternatives: bool = True,
) -> StudyFit:
    """Fit the hypothesis to ``table`` (from :func:`silicolab.studies.data.study_table`)."""
    data = table
    dropped = 0
    if drop_capped:
        keep = data.stop_reason != "cap"
        dropped = int((~keep).sum())
        data = data[keep]
    equations = hypothesis.equations()
    measured = [v.name for v in hypothesis.measured if v.name in equations]
    usable = data.dropna(subset=measured)
    if len(usable) < 3:
        raise InputError(
            f"only {len(usable)} conditions have every measured value (of {len(table)}); "
            "too few to fit the SCM: run more conditions or check the survey answers"
        )
    variables = scm_variables(hypothesis)
    main = estimate_paths(data, equations, variables=variables)
    fit = StudyFit(main=main, dropped_capped=dropped)
    if interactions:
        fit.interactions = estimate_paths(data, equations, variables=variables, interactions=True)
        fit.tests.append(_test("main effects vs pairwise interactions", main, fit.interactions))
    if alternatives:
        _fit_alternatives(hypothesis, data, fit, variables)
    return fit


def _test(name: str, a: PathEstimates, b: PathEstimates) -> dict[str, Any]:
    return {"name": name, **a.compare(b).to_dict()}


def _fit_alternatives(
    hypothesis: Hypothesis, data: pd.DataFrame, fit: StudyFit, variables: list[Variable]
) -> None:
    """For each derived column: the model with it as the only cause, the model with it
    added to the hypothesized causes, and the LR/Wald tests of each smaller model."""
    outcome = hypothesis.outcome.name
    causes = hypothesis.equations()[outcome]
    for name, compute in DERIVED.get(hypothesis.name, {}).items():
        if not set(causes) <= set(data.columns):
            continue
        extended = data.assign(**{name: compute(data)})
        extra = [*variables, Variable(name=name, type="continuous")]
        alone = estimate_paths(extended, {outcome: [name]}, variables=extra)
        both = estimate_paths(extended, {outcome: [*causes, name]}, variables=extra)
        main = estimate_paths(extended, {outcome: causes}, variables=extra)
        fit.alternatives[f"{outcome} ~ {name}"] = alone
        fit.alternatives[f"{outcome} ~ {' + '.join([*causes, name])}"] = both
        fit.tests.append(_test(f"does {name} add to {', '.join(causes)}?", main, both))
        fit.tests.append(_test(f"do {', '.join(causes)} add to {name}?", alone, both))


__all__ = ["DERIVED", "StudyFit", "fit_study", "scm_variables"]
