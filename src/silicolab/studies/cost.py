"""The cost of a study before any paid call: planned calls and a token and price range.

A conversation's length is only known afterwards, so the plan is a range: the low end
assumes the coordinator ends every conversation once each agent has spoken, the high
end that every conversation runs to the statement cap. Prompts grow with the
transcript; token counts are estimated at four characters a token (a range, as EDSL's
users asked for, never a point). Cached calls cost nothing, so a rerun's real cost,
printed after the run from the ledger, can be far below the plan.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from silicolab.llm.ledger import Prices
from silicolab.studies.conduct import opening_text
from silicolab.studies.hypothesis import Hypothesis

_CHARS_PER_TOKEN = 4
_STATEMENT_TOKENS = 60  # a typical reply: a few sentences
_PERSONA_TOKENS = 120  # identity, goal, constraint and attributes
_PREDICTION_TOKENS = 400  # the variables, one condition or the fitted paths, instructions


@dataclass(frozen=True)
class CostPlan:
    """Planned calls and tokens (low, high) for ``conditions`` conditions, and the price
    range at the given per-million-token prices (``None`` when the price is unknown) and
    where those prices come from (``price_source``: ``"built-in, as of DATE"``,
    ``"config"``, ``"--price-in/--price-out"``: the caller's ``prices``); ``scientist_calls``
    of them are the scientist's predictions (the follow-on's plan and conditions come on
    top: they depend on what the main fit finds)."""

    conditions: int
    calls: tuple[int, int]
    input_tokens: tuple[int, int]
    output_tokens: tuple[int, int]
    cost_usd: tuple[float, float] | None
    scientist_calls: int = 0
    price_source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary_line(self) -> str:
        if self.calls[1] == 0:
            return f"plan: {self.conditions} conditions with rule-based subjects, no LLM calls"
        if self.calls[1] == self.scientist_calls:
            return (
                f"plan: {self.conditions} conditions with rule-based subjects, no LLM calls "
                f"for them; {self.scientist_calls} scientist calls for the predictions, "
                f"{self._cost()}"
            )
        science = f" ({self.scientist_calls} of them the scientist's)" * bool(self.scientist_calls)
        return (
            f"plan: {self.conditions} conditions, {self.calls[0]}-{self.calls[1]} LLM calls"
            f"{science}, {self.input_tokens[0]:,}-{self.input_tokens[1]:,} input and "
            f"{self.output_tokens[0]:,}-{self.output_tokens[1]:,} output tokens, {self._cost()}"
        )

    def _cost(self) -> str:
        if self.cost_usd is None:
            return (
                "price unknown (give prices=, or prices: for the model in "
                "silicolab.yaml; offline models cost $0)"
            )
        where = f" (prices: {self.price_source})" if self.price_source else ""
        return f"${self.cost_usd[0]:.2f}-${self.cost_usd[1]:.2f}{where}"


def _conversation(hypothesis: Hypothesis, statements: int) -> tuple[int, int, int]:
    """(calls, input tokens, output tokens) of one conversation of ``statements``."""
    n_agents = len(hypothesis.agents)
    drafts = n_agents - 1 if hypothesis.protocol == "coordinator_after" else 1
    base = len(opening_text(hypothesis)) // _CHARS_PER_TOKEN + _PERSONA_TOKENS
    calls = input_tokens = output_tokens = 0
    for k in range(statements):
        prompt = base + k * _STATEMENT_TOKENS
        calls += drafts + 1  # the statement (or drafts) and the coordinator's decision
        input_tokens += (drafts + 1) * prompt
        output_tokens += drafts * _STATEMENT_TOKENS + 5
    questions = sum(len(v.questions) for v in hypothesis.measured)
    survey_prompt = base + statements * _STATEMENT_TOKENS
    calls += questions * 2  # an answer, and at most one parsing call
    input_tokens += questions * 2 * survey_prompt
    output_tokens += questions * (_STATEMENT_TOKENS + 5)
    return calls, input_tokens, output_tokens


def plan_cost(
    hypothesis: Hypothesis,
    conditions: int,
    prices: Prices | None = None,
    *,
    llm: bool = True,
    scientist_calls: int = 0,
) -> CostPlan:
    """The planned calls, tokens and price range of running ``conditions`` conditions
    (``llm=False``: rule-based subjects, no calls for them) plus ``scientist_calls``
    prediction calls."""
    low = high = (0, 0, 0)
    if llm:
        low = _conversation(hypothesis, min(len(hypothesis.agents), hypothesis.max_statements))
        high = _conversation(hypothesis, hypothesis.max_statements)
    science = _scientist(hypothesis, scientist_calls)
    calls = (low[0] * conditions + science[0], high[0] * conditions + science[0])
    inputs = (low[1] * conditions + science[1], high[1] * conditions + science[1])
    outputs = (low[2] * conditions + science[2], high[2] * conditions + science[2])
    if calls[1] == 0:
        return CostPlan(conditions, (0, 0), (0, 0), (0, 0), (0.0, 0.0))
    cost = source = None
    if prices is not None and prices.known:
        low_usd, high_usd = prices.cost(inputs[0], outputs[0]), prices.cost(inputs[1], outputs[1])
        cost, source = (low_usd or 0.0, high_usd or 0.0), prices.source or None
    return CostPlan(conditions, calls, inputs, outputs, cost, scientist_calls, source)


def prediction_calls(options: Any, design: Any) -> int:
    """The scientist calls a study's ``--predict`` makes (``options``: its
    :class:`~silicolab.studies.pipeline.StudyOptions`, ``design`` its design): one per
    predicted condition for predict-y and for the model's leave-one-out, one for
    predict-β; none without ``--predict``."""
    if not options.predict:
        return 0
    cells = len({c.id for c in design.conditions})
    rows = cells if options.aggregate_replicates else len(design.conditions)
    asked = rows if options.predict_conditions is None else min(options.predict_conditions, rows)
    return 2 * asked + 1


def _scientist(hypothesis: Hypothesis, calls: int) -> tuple[int, int, int]:
    """(calls, input tokens, output tokens) of ``calls`` prediction prompts: the scenario,
    the variables and a condition or the paths, and a short JSON reply."""
    prompt = len(opening_text(hypothesis)) // _CHARS_PER_TOKEN + _PREDICTION_TOKENS
    return calls, calls * prompt, calls * _STATEMENT_TOKENS


__all__ = ["CostPlan", "plan_cost", "prediction_calls"]
