"""Follow-on planning: drop the non-significant causes, add new ones, keep the rest."""

from __future__ import annotations

import json

import pytest

from silicolab.core.errors import InputError
from silicolab.llm import load_model
from silicolab.studies import Hypothesis
from silicolab.studies.follow_on import afollow_on, follow_on
from silicolab.studies.hypothesis import StudyVariable
from silicolab.studies.scripted import scripted_scientist, step_of

from .synthetic import synthetic_auction

NEW = [
    StudyVariable(
        name="reserve_price",
        role="cause",
        type="continuous",
        units="dollars",
        description="The lowest price the auctioneer may sell at.",
        values=["$0", "$50", "$100", "$150", "$200"],
        scope="individual",
        agent="auctioneer",
        attribute="your reserve price for the piece of art",
    ),
    StudyVariable(
        name="bidder_1_eagerness",
        role="cause",
        type="ordinal",
        units="level of eagerness",
        description="How much bidder 1 wants the piece.",
        levels=["indifferent", "mildly keen", "keen", "very keen", "desperate"],
        values=["indifferent", "mildly keen", "keen", "very keen", "desperate"],
        agent="bidder_1",
        attribute="how much you want the piece of art",
        visibility="public",
        public_name="how much bidder 1 wants the piece",
    ),
]


def _target(hypothesis: Hypothesis) -> Hypothesis:
    """The study with the two new causes added: what the scripted scientist proposes."""
    outcome = hypothesis.outcome
    causes = outcome.causes + [v.name for v in NEW]
    variables = [outcome.model_copy(update={"causes": causes}), *hypothesis.treatments, *NEW]
    return Hypothesis.model_validate(hypothesis.model_dump() | {
        "variables": [v.model_dump() for v in variables]
    })  # fmt: skip


async def test_drops_exactly_the_null_cause_and_adds_new_ones() -> None:
    hypothesis, _, fit = synthetic_auction()  # budget_3 has no effect
    seen: list[str] = []
    scientist = scripted_scientist(_target(hypothesis))

    def reply(request):
        step, _, prompt = step_of(request)
        if step == "causes":
            seen.append(prompt)
        return scientist(request)

    plan = await afollow_on(hypothesis, fit, load_model("scripted", fn=reply), n_new=2)
    assert plan.dropped == ["budget_3"]
    assert plan.kept == ["budget_1", "budget_2"]
    assert plan.added == ["reserve_price", "bidder_1_eagerness"]
    new = plan.hypothesis
    assert isinstance(new, Hypothesis)
    assert new.outcome.causes == ["budget_1", "budget_2", "reserve_price", "bidder_1_eagerness"]
    assert "budget_3" not in [v.name for v in new.variables]
    for v in NEW:  # (an empty operationalization comes back as the description)
        assert new.variable(v.name) == v.model_copy(update={"operationalization": v.description})
    assert new.agents == hypothesis.agents
    assert (new.protocol, new.order, new.central) == (
        hypothesis.protocol,
        hypothesis.order,
        hypothesis.central,
    )
    steps = {d.step: d for d in plan.decisions}
    assert steps["budget_3.drop"].value["p"] >= 0.05
    assert "dropped" in steps["budget_3.drop"].explanation
    assert steps["budget_1.keep"].value["p"] < 0.05
    assert {"reserve_price.add", "bidder_1_eagerness.variation", "overlap"} <= set(steps)
    assert new.decisions == plan.decisions
    # the scientist saw the tested paths and the variables it must not propose again
    assert "budget_3 -> final_price" in seen[0] and "not significant" in seen[0]
    assert "budget_1, budget_2, budget_3" in seen[0]
    assert json.loads(json.dumps(plan.to_dict()))["dropped"] == ["budget_3"]


def test_new_causes_are_proposed_even_when_all_are_significant() -> None:
    hypothesis, _, fit = synthetic_auction(effects={"budget_1": 0.3, "budget_2": 0.5,
                                                    "budget_3": 0.4})  # fmt: skip
    model = load_model("scripted", fn=scripted_scientist(_target(hypothesis)))
    plan = follow_on(hypothesis, fit, model, n_new=1)
    assert plan.dropped == []
    assert plan.added == ["reserve_price"]
    assert plan.hypothesis.outcome.causes == [*hypothesis.outcome.causes, "reserve_price"]


def test_a_plan_without_any_cause_is_refused() -> None:
    hypothesis, _, fit = synthetic_auction(effects={"budget_1": 0, "budget_2": 0, "budget_3": 0})
    model = load_model("scripted", fn=scripted_scientist(hypothesis))
    with pytest.raises(InputError, match="follow-on hypothesis is not valid"):
        follow_on(hypothesis, fit, model, n_new=0, alpha=1e-9)
