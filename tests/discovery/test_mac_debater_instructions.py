"""MAC's debaters get the paper's instructions by default, ours with ``fidelity="fixed"``.

In the paper (Listings 1 and 3) the affirmative and the negative debater get the same
prompt apart from their name, and both are told to always disagree with the other side's
answer and look for its flaws. silicolab's own variant gives the sides different roles (an
affirmative that argues its answer, a negative that probes it). The debaters are the
deterministic agents of :mod:`tests.discovery.mac_fakes`; the prompts are read from the
requests the model received.
"""

from __future__ import annotations

import pytest
from tests.discovery.mac_fakes import Oracle

from silicolab.core.errors import InputError
from silicolab.discovery.datasets import load
from silicolab.discovery.mac import meta_debate
from silicolab.discovery.mac.coding import plan_debate
from silicolab.discovery.mac.common import variable_lines
from silicolab.discovery.mac.panel import DebateSettings
from silicolab.llm import load_model

DISAGREE = "always disagree with their view"


@pytest.fixture(scope="module")
def auto():
    return load("auto_mpg")


def systems(oracle: Oracle, prefix: str = "") -> dict[str, str]:
    """The system prompt each debater side received."""
    found = {}
    for role, messages in oracle.seen:
        side = role.removeprefix(prefix)
        if side in ("affirmative", "negative") and role.startswith(prefix):
            found[side] = messages[0]["content"]
    return found


def meta_systems(auto, **options) -> tuple[dict[str, str], dict]:
    columns = list(auto.data.columns)[:3]
    oracle = Oracle(auto.truth.edges)
    model = load_model("scripted", fn=oracle.scripted)
    variables = {c: auto.variables[c] for c in columns}
    result = meta_debate(auto.data[columns], model=model, variables=variables, **options)
    return systems(oracle), result.params


def test_meta_debaters_follow_the_paper_by_default(auto) -> None:
    prompts, params = meta_systems(auto)
    affirmative, negative = prompts["affirmative"], prompts["negative"]
    assert DISAGREE in affirmative and DISAGREE in negative  # both sides, as in Listing 1
    assert "Affirmative_Causal_Agent" in affirmative and "Negative_Causal_Agent" in negative
    # the sides differ only by their names
    assert affirmative.replace("Affirmative", "X").replace("affirmative", "x") == (
        negative.replace("Negative", "X").replace("negative", "x")
    )
    assert "-Action Input:" in affirmative  # the paper's ReAct answer format
    assert params["fidelity"] == "faithful" and params["debater_instructions"] == "paper"


def test_fixed_meta_debaters_keep_our_sided_roles(auto) -> None:
    prompts, params = meta_systems(auto, fidelity="fixed")
    assert "you speak first" in prompts["affirmative"]
    assert "Take the opposing view" in prompts["negative"]
    assert not any(DISAGREE in p for p in prompts.values())
    assert params["fidelity"] == "fixed" and params["debater_instructions"] == "silicolab"


@pytest.mark.parametrize(("fidelity", "paper"), [("faithful", True), ("fixed", False)])
async def test_plan_debaters_follow_the_fidelity(auto, fidelity, paper) -> None:
    oracle = Oracle(auto.truth.edges)
    settings = DebateSettings(
        model=load_model("scripted", fn=oracle.scripted), module="coding", fidelity=fidelity
    )
    await plan_debate(
        settings,
        algorithms=["pc", "ges"],
        data=auto.data,
        description=auto.description,
        variables=variable_lines(list(auto.data.columns), auto.variables),
        knowledge=None,
    )
    prompts = systems(oracle, "plan-")
    assert (DISAGREE in prompts["affirmative"]) is paper
    assert (DISAGREE in prompts["negative"]) is paper
    assert ("Disagree with its choice" in prompts["negative"]) is not paper


def test_an_unknown_fidelity_is_refused() -> None:
    with pytest.raises(InputError, match="fidelity must be"):
        DebateSettings(model=load_model("scripted", fn=lambda r: ""), fidelity="exact")
