"""Planning a follow-on experiment from a fitted SCM (paper §6.5, automated).

The causes of the outcome whose path is not significant (``p >= alpha``) are dropped,
together with anything that only fed them (a dropped mediator's own causes); the scientist
model is shown what was tested and proposes ``n_new`` new causes fixed before the run,
which are built exactly as in hypothesis generation
(:func:`~silicolab.studies.scientist.build_cause`); the §6.2.1 overlap check is
run again for the new attributes. Agents and the conversation protocol stay the same;
derived variables (and the theory) stay when every cause they use does; the follow-on is
run by language-model subjects, never a rule-based world. Every drop, keep and addition is
a :class:`Decision` with its reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from silicolab.core.errors import InputError
from silicolab.core.records import SCHEMA_VERSION
from silicolab.core.sync import sync_twin
from silicolab.llm import LanguageModel
from silicolab.scm import PathEstimates
from silicolab.studies.hypothesis import Decision, Hypothesis, StudyVariable
from silicolab.studies.scientist import (
    MAX_DEPTH,
    Scientist,
    build_cause,
    cross_check,
    propose_causes,
)


@dataclass(frozen=True)
class FollowOnPlan:
    """The next experiment: its :class:`Hypothesis`, the causes dropped, kept and added,
    the decisions (with explanations) that led to it and the scientist's temperature."""

    hypothesis: Hypothesis
    dropped: list[str]
    kept: list[str]
    added: list[str]
    decisions: list[Decision]
    temperature: float = 0.4

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "dropped": list(self.dropped),
            "kept": list(self.kept),
            "added": list(self.added),
            "decisions": [d.model_dump(mode="json") for d in self.decisions],
            "temperature": self.temperature,
            "hypothesis": self.hypothesis.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FollowOnPlan:
        """The plan back from :meth:`to_dict` (how a resumed study reuses a kept plan)."""
        from silicolab.studies.files import hypothesis_from_data

        return cls(
            hypothesis=hypothesis_from_data(data["hypothesis"], source="the kept follow-on plan"),
            dropped=list(data.get("dropped", [])),
            kept=list(data.get("kept", [])),
            added=list(data.get("added", [])),
            decisions=[Decision.model_validate(d) for d in data.get("decisions", [])],
            temperature=float(data.get("temperature", 0.4)),
        )


def path_test(fit: PathEstimates, hypothesis: Hypothesis, effect: str, cause: str) -> dict:
    """Estimate, SE and p of the path ``cause -> effect``; a nominal cause (k-1 dummies)
    reports its smallest p."""
    table = fit.table[(fit.table.lhs == effect) & (fit.table.op == "~")]
    nominal = hypothesis.variable(cause).type == "nominal"
    rows = table[(table.rhs == cause) | (nominal & table.rhs.str.startswith(f"{cause}_"))]
    if rows.empty:
        raise InputError(
            f"the fit has no path {cause} -> {effect}; fit the hypothesis' own equations "
            "(estimate_paths(data, hypothesis.equations(), ...))"
        )
    best = rows.loc[rows.p.idxmin()] if rows.p.notna().any() else rows.iloc[0]
    return {"estimate": float(best.est), "se": float(best.se), "p": float(best.p)}


def _prune(hypothesis: Hypothesis, dropped: set[str]) -> list[StudyVariable]:
    """The variables left after removing ``dropped`` and whatever no longer feeds a kept
    measured variable."""
    keep = [v for v in hypothesis.variables if v.name not in dropped]
    while True:
        used = {c for v in keep if v.measured for c in v.causes}
        orphans = {v.name for v in keep if v.role != "outcome" and v.name not in used}
        if not orphans:
            return keep
        keep = [v for v in keep if v.name not in orphans]


def _judge(
    sci: Scientist, hypothesis: Hypothesis, fit: PathEstimates, alpha: float
) -> tuple[list[str], list[str], list[str]]:
    """Keep or drop each cause of the outcome; returns (kept, dropped, findings)."""
    outcome = hypothesis.outcome.name
    kept, dropped, findings = [], [], []
    for cause in hypothesis.outcome.causes:
        test = path_test(fit, hypothesis, outcome, cause)
        significant = not math.isnan(test["p"]) and test["p"] < alpha
        verdict = "significant" if significant else "not significant"
        findings.append(
            f"{cause} -> {outcome}: estimate {test['estimate']:.4g} (SE {test['se']:.3g}), "
            f"p = {test['p']:.3g}, {verdict} at {alpha}"
        )
        (kept if significant else dropped).append(cause)
        reason = (
            f"below alpha = {alpha}: kept"
            if significant
            else f"not below alpha = {alpha}: dropped from the follow-on experiment"
        )
        sci.record(
            f"{cause}.{'keep' if significant else 'drop'}",
            test,
            f"the path {cause} -> {outcome} has p = {test['p']:.3g}, {reason}",
        )
    return kept, dropped, findings


async def afollow_on(
    hypothesis: Hypothesis,
    fit: PathEstimates,
    model: LanguageModel,
    *,
    alpha: float = 0.05,
    n_new: int = 2,
    seed: int = 0,
    temperature: float = 0.4,
) -> FollowOnPlan:
    """Plan the follow-on experiment of ``hypothesis`` given its ``fit`` (see the module
    docstring). New causes are proposed even when every tested cause is significant."""
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be between 0 and 1, e.g. 0.05; got {alpha}")
    if not 0 <= n_new <= 10:
        raise InputError(f"n_new must be between 0 and 10, got {n_new}")
    sci = Scientist(model, hypothesis.scenario, temperature, seed, agents=list(hypothesis.agents))
    sci.taken.update(a.name for a in hypothesis.agents)
    sci.taken.update(v.name for v in hypothesis.variables)
    kept, dropped, findings = _judge(sci, hypothesis, fit, alpha)
    variables = _prune(hypothesis, set(dropped))
    new: list[StudyVariable] = []
    if n_new:
        ideas = await propose_causes(
            sci,
            hypothesis.outcome,
            n_new,
            exact=True,
            fixed_before=True,
            existing=list(hypothesis.variables),
            findings=findings,
        )
        for idea in ideas:
            new += await build_cause(sci, idea, depth=MAX_DEPTH + 1, n_causes=1)
        for v in new:
            sci.record(f"{v.name}.add", v.name, f"proposed as a new cause: {v.description}")
    causes = kept + [v.name for v in new]
    variables = [v.model_copy(update={"causes": causes}) if v.role == "outcome" else v
                 for v in variables]  # fmt: skip
    agents, variables = await cross_check(sci, list(hypothesis.agents), variables + new)
    derived = hypothesis.derived_over(v.name for v in variables if v.role == "cause")
    data = hypothesis.model_dump() | {
        "name": f"{hypothesis.name}_follow_on",
        "agents": [a.model_dump() for a in agents],
        "variables": [v.model_dump() for v in variables],
        "derived": [d.model_dump() for d in derived],
        "theory": hypothesis.theory if hypothesis.theory in {d.name for d in derived} else None,
        "rule_world": None,  # a rule-based world plays only its own study's causes
        "decisions": [d.model_dump() for d in sci.decisions],
    }
    try:
        plan = Hypothesis.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise InputError(f"the follow-on hypothesis is not valid: {problem}") from None
    added = [v.name for v in new]
    return FollowOnPlan(plan, dropped, kept, added, list(sci.decisions), temperature)


follow_on = sync_twin(afollow_on)


__all__ = ["FollowOnPlan", "afollow_on", "follow_on", "path_test"]
