"""Rule-based subjects: studies whose conditions can run without any language model.

A rule world runs one condition with ``sim`` entities driven by Python policies and
answers the study's survey through the same :func:`silicolab.sim.aask_survey` path the
LLM subjects use, so everything after the runs (data, fit, predictions, record) is the
pipeline's own code. They are the reference against which LLM subjects are compared:
for the art auction, truthful clock bidders clear at the price theory predicts
(Manning, Zhu & Horton 2024, and the spec's auction anchor).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from silicolab.core.errors import InputError
from silicolab.runs.health import UnitHealth
from silicolab.sim import RuleAgent, aask_survey
from silicolab.sim.entity import ActionSpec
from silicolab.sim.examples.english_auction import arun_english_auction
from silicolab.studies.conduct import ConditionRun, survey_questions, survey_values
from silicolab.studies.design import Condition
from silicolab.studies.hypothesis import Hypothesis

RuleWorld = Callable[[Hypothesis, Condition, dict[str, Any]], Awaitable[ConditionRun]]

#: The options each rule world accepts, with their defaults.
AUCTION_DEFAULTS = {"increment": 50.0, "start_price": 50.0, "price_rule": "second_dropout"}


def _answering(name: str, answer: str) -> RuleAgent:
    """A respondent that gives ``answer`` to every free-text survey question."""

    def policy(_agent: RuleAgent, spec: ActionSpec) -> str:
        return answer if spec.kind == "free" else spec.options[0] if spec.options else answer

    return RuleAgent(name, policy)


async def auction_world(
    hypothesis: Hypothesis, condition: Condition, options: dict[str, Any]
) -> ConditionRun:
    """One English auction among truthful bidders whose budgets are the condition's
    treatments (in the order of the hypothesis' causes); the auctioneer reports the
    sale price when surveyed."""
    settings = {**AUCTION_DEFAULTS, **options}
    unknown = set(settings) - set(AUCTION_DEFAULTS)
    if unknown:
        raise InputError(f"unknown auction option(s) {sorted(unknown)}; use {AUCTION_DEFAULTS}")
    budgets = [float(v.numeric(condition.treatments[v.name])) for v in hypothesis.treatments]
    result = await arun_english_auction(
        budgets,
        increment=float(settings["increment"]),
        start_price=float(settings["start_price"]),
        price_rule=settings["price_rule"],
    )
    said = "no sale" if result.price is None else f"${result.price:g}"
    answer = f"NA, there was {said}." if result.price is None else f"{said}, the last bid."
    respondents = {
        name: _answering(name, answer)
        for name in {q.addressee for q in survey_questions(hypothesis)}
    }
    context = f"{hypothesis.scenario}\n\nTranscript:\n" + "\n".join(result.events)
    answers = await aask_survey(respondents, survey_questions(hypothesis), context=context)
    return ConditionRun(
        condition=condition,
        statements=[{"speaker": "game master", "text": e} for e in result.events],
        stop_reason="closed" if result.winner else "no_sale",
        survey=[a.to_dict() for a in answers],
        values=survey_values(hypothesis, answers),
        calls=0,
        health=UnitHealth(unit=condition.id),
    )


#: World name (a hypothesis' ``rule_world``) -> the world.
RULE_WORLDS: dict[str, RuleWorld] = {"english_auction": auction_world}


def rule_world(hypothesis: Hypothesis) -> RuleWorld:
    """The rule world ``hypothesis.rule_world`` names (never looked up by the study's
    name), or a clear error."""
    if hypothesis.rule_world is None:
        raise InputError(
            f"study {hypothesis.name!r} has no rule-based subjects: its hypothesis names no "
            f"'rule_world' (registered worlds: {', '.join(RULE_WORLDS)}); use subjects='llm'",
            params=("subjects",),
        )
    try:
        return RULE_WORLDS[hypothesis.rule_world]
    except KeyError:
        raise InputError(
            f"study {hypothesis.name!r} names the rule world {hypothesis.rule_world!r}, which "
            f"does not exist; use one of {', '.join(RULE_WORLDS)}, or subjects='llm'",
            params=("subjects",),
        ) from None


__all__ = ["AUCTION_DEFAULTS", "RULE_WORLDS", "auction_world", "rule_world"]
