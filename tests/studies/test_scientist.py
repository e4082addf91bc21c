"""The LLM-as-scientist chain, offline: scripted replies rebuild the paper's four studies."""

from __future__ import annotations

import json

import pytest

from silicolab.core.errors import ParseFailure
from silicolab.llm import load_model
from silicolab.studies import Hypothesis, load_example
from silicolab.studies.hypothesis import StudyVariable
from silicolab.studies.scientist import agenerate_hypothesis, generate_hypothesis
from silicolab.studies.scientist._steps import slug, unique
from silicolab.studies.scripted import scripted_scientist, step_of

EXAMPLES = ["mug", "bail", "lawyer", "auction"]


def _comparable(h: Hypothesis) -> dict:
    # The chain proposes the SCM; derived variables, a theory and a rule-based world are
    # declared by the researcher in the file, never by the chain.
    data = h.model_dump(exclude={"decisions", "name", "derived", "theory", "rule_world"})
    for v in data["variables"]:
        # The scripted scientist fills an empty operationalization with the description
        # (the step requires one); everything else must come back unchanged.
        v.pop("operationalization")
    return data


@pytest.mark.parametrize("name", EXAMPLES)
async def test_scripted_scientist_rebuilds_each_example(name: str) -> None:
    target = load_example(name)
    model = load_model("scripted", fn=scripted_scientist(target))
    got = await agenerate_hypothesis(
        target.scenario, model, n_causes=len(target.outcome.causes), seed=3
    )
    assert _comparable(got) == _comparable(target)
    assert got.outcome.operationalization == (
        target.outcome.operationalization or target.outcome.description
    )


async def test_every_step_is_a_decision_with_an_explanation() -> None:
    target = load_example("bail")
    seen = []
    model = load_model("scripted", fn=scripted_scientist(target))
    got = await agenerate_hypothesis(target.scenario, model, n_causes=3, on_step=seen.append)
    steps = [d.step for d in got.decisions]
    assert seen == got.decisions
    assert steps[:2] == ["agents", "outcome"]
    for expected in (
        "bail_amount.questions",
        "remorse.timing",
        "remorse.variation",
        "criminal_history.visibility",
        "judge.agent_profile",
        "overlap",
        "protocol",
    ):
        assert expected in steps
    assert all(d.explanation for d in got.decisions)
    assert got.variable("remorse").values == target.variable("remorse").values
    by_step = {d.step: d.value for d in got.decisions}
    assert by_step["remorse.variable_type"] == "ordinal"
    assert by_step["protocol"]["central"] == "judge"
    assert model.ledger.summary()["calls"] == len(got.decisions)


async def test_rerun_hits_the_cache_with_stable_sample_indexes(tmp_path) -> None:
    target = load_example("mug")
    requests = []

    def reply(request):
        requests.append(request)
        return scripted_scientist(target)(request)

    for _ in range(2):
        model = load_model("scripted", fn=reply, cache_path=tmp_path / "cache.sqlite")
        await agenerate_hypothesis(target.scenario, model, n_causes=3)
    assert len(requests) == len({r.sample_index for r in requests}) > 20


def test_garbage_replies_name_the_failing_step() -> None:
    model = load_model("scripted", fn=lambda request: "I would rather not say.")
    with pytest.raises(ParseFailure) as err:
        generate_hypothesis("Two people bargaining over a mug.", model)
    assert "step 'agents'" in str(err.value)
    assert "I would rather not say." in str(err.value)


def test_a_bad_reply_deep_in_the_chain_names_that_step() -> None:
    target = load_example("mug")
    good = scripted_scientist(target)

    def reply(request):
        step, subject, _ = step_of(request)
        if step == "variation" and subject == "buyer_budget":
            # numbers are required for a continuous treatment: words fail validation
            return json.dumps({"explanation": "x", "attribute": "your budget",
                               "values": ["low", "high"]})  # fmt: skip
        return good(request)

    with pytest.raises(ParseFailure, match=r"step 'buyer_budget\.variation'.*number"):
        generate_hypothesis(target.scenario, load_model("scripted", fn=reply))


def test_a_cause_realised_during_the_run_becomes_a_mediator() -> None:
    base = load_example("mug")
    trust = StudyVariable(
        name="trust",
        role="mediator",
        type="ordinal",
        units="level of trust",
        levels=["none", "some", "much"],
        questions=[{"addressee": "buyer", "text": "How much do you trust the seller?"}],
        causes=["seller_attachment"],
    )
    outcome = base.outcome.model_copy(update={"causes": ["buyer_budget", "trust"]})
    variables = [outcome, base.variable("buyer_budget"), trust, base.variable("seller_attachment")]
    target = base.model_copy(update={"variables": variables})
    target = Hypothesis.model_validate(target.model_dump())
    model = load_model("scripted", fn=scripted_scientist(target))
    got = generate_hypothesis(target.scenario, model, n_causes=2)
    assert _comparable(got) == _comparable(target)
    assert got.equations() == {"trust": ["seller_attachment"], "deal": ["buyer_budget", "trust"]}
    assert "seller_attachment.timing" not in [d.step for d in got.decisions]


def test_overlap_check_drops_conflicting_background_attributes() -> None:
    target = load_example("mug")
    buyer = target.agents[0].model_copy(
        update={"attributes": {"your budget": "$10", "your hometown": "Leeds"}}
    )
    target = target.model_copy(update={"agents": [buyer, target.agents[1]]})
    good = scripted_scientist(target)

    def reply(request):
        if step_of(request)[0] == "overlap":
            return json.dumps({
                "explanation": "a fixed budget contradicts the varied budget",
                "drop": [{"agent": "buyer", "attribute": "your budget"}],
                "revise": [{"variable": "seller_min_price",
                            "values": ["$2", "$4", "$6", "$9", "$12"]}],
            })  # fmt: skip
        return good(request)

    got = generate_hypothesis(target.scenario, load_model("scripted", fn=reply))
    assert got.agents[0].attributes == {"your hometown": "Leeds"}
    assert got.variable("seller_min_price").values == ["$2", "$4", "$6", "$9", "$12"]
    steps = {d.step: d for d in got.decisions}
    assert steps["buyer.drop_attribute"].value == "your budget"
    assert "contradicts" in steps["buyer.drop_attribute"].explanation
    assert "seller_min_price.revise_values" in steps


def test_slugs_are_identifiers_and_unique() -> None:
    taken: set[str] = set()
    assert slug("Buyer's budget ($)") == "buyers_budget"
    assert slug("2nd offer") == "v_2nd_offer"
    assert [unique(slug(n), taken) for n in ("Price", "price", "PRICE!")] == [
        "price",
        "price_2",
        "price_3",
    ]
