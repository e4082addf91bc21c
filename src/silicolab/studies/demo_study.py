"""The offline demo study: the paper's mug bargaining, end to end, with known truth.

Every role is a scripted test double (:mod:`.offline`): the scientist rebuilds the mug
hypothesis from the one-line scenario, the subjects and coordinator answer from a hidden
linear probability model whose coefficients are the paper's estimates (Manning, Zhu &
Horton 2024, Fig. 2) with the seller's attachment set to zero and two causes the paper did
not test (the buyer's hurry and the mug's condition). So the demo can show a fitted SCM
beside the truth, a follow-on experiment that drops what did not matter and tests what
the scientist proposes next, and predictions scored against the data.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml

from silicolab.runs import Run
from silicolab.studies.examples import load_example
from silicolab.studies.files import hypothesis_from_data
from silicolab.studies.hypothesis import Hypothesis
from silicolab.studies.offline import offline_scientist
from silicolab.studies.pipeline import StudyModels, StudyOptions
from silicolab.studies.scientist import agenerate_hypothesis
from silicolab.studies.study import arun_study
from silicolab.studies.world import HiddenWorld

#: The hidden truth: change in the probability of a deal per unit of each cause.
TRUTH = {
    "buyer_budget": 0.037,
    "seller_min_price": -0.035,
    "seller_attachment": 0.0,
    "buyer_hurry": 0.08,
    "mug_condition": 0.1,
}
INTERCEPT = 0.32


def demo_universe() -> Hypothesis:
    """The mug study with the two extra causes the follow-on may propose."""
    text = resources.files("silicolab.studies").joinpath("examples/mug_universe.yaml")
    return hypothesis_from_data(yaml.safe_load(text.read_text(encoding="utf-8")))


def demo_models(seed: int, cache_path: Any) -> StudyModels:
    """Scripted scientist (target: the paper's mug hypothesis; follow-on pool: the
    universe) and the hidden-world subjects and coordinator."""
    from silicolab.llm import load_model

    universe = demo_universe()
    world = HiddenWorld(universe, TRUTH, intercept=INTERCEPT, noise_sd=0.0, seed=seed)
    scientist = load_model(
        "scripted:scientist",
        fn=offline_scientist(load_example("mug"), seed, follow_on=universe),
        cache_path=cache_path,
    )
    subjects = load_model("scripted:world", fn=world, cache_path=cache_path)
    return StudyModels(scientist=scientist, subject=subjects, coordinator=subjects)


async def arun_demo_study(
    run: Run, *, seed: int, jobs: int, conditions: int | None, cache_path: Any
) -> dict[str, Any]:
    """Hypothesis from the scenario, runs, survey, fit, predictions and follow-on, all in
    ``run``; returns the study record with the truth attached."""
    models = demo_models(seed, cache_path)
    scenario = load_example("mug").scenario
    hypothesis = await agenerate_hypothesis(
        scenario, models.scientist, n_causes=3, seed=seed, name="mug"
    )
    options = StudyOptions(
        conditions=conditions, seed=seed, jobs=jobs, predict=True, predict_conditions=20,
        follow_on=True,
    )  # fmt: skip
    record = await arun_study(hypothesis, options, run=run, models=models)
    record["truth"] = {"intercept": INTERCEPT, "effects": TRUTH}
    return record


__all__ = ["INTERCEPT", "TRUTH", "arun_demo_study", "demo_models", "demo_universe"]
