"""The offline demo study: the paper's mug bargaining, end to end, with known truth.

Every role is a scripted test double (:mod:`.offline`): the scientist rebuilds the mug
hypothesis from the one-line scenario, the subjects and coordinator answer from a hidden
linear probability model built on the paper's estimates (Manning, Zhu & Horton 2024,
Fig. 2: +0.037 per dollar of the buyer's budget, -0.035 per dollar of the seller's
minimum), with the seller's attachment set to zero and two causes the paper did not test
(the buyer's hurry and the mug's condition). The paper's two slopes are scaled down by
half (their ratio kept): at full size they would push the probability of a deal below 0
and above 1 within the design, and a linear fit to clipped probabilities does not
estimate the coefficients. At half size the probability stays inside (0, 1) in every
cell of the follow-on's design too, so the truth column is exactly what the fit
estimates: the change in the probability of a deal per unit of each cause. So the demo
can show a fitted SCM beside the truth, a follow-on experiment that drops what did not
matter and tests what the scientist proposes next, and predictions scored against the
data.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml

from silicolab.runs import Run
from silicolab.studies.examples import load_example
from silicolab.studies.files import hypothesis_from_data
from silicolab.studies.hypothesis import Hypothesis
from silicolab.studies.offline import offline_study_models, offline_world
from silicolab.studies.pipeline import StudyModels, StudyOptions
from silicolab.studies.scientist import agenerate_hypothesis
from silicolab.studies.study import arun_study
from silicolab.studies.world import HiddenWorld

#: The hidden truth: change in the probability of a deal per unit of each cause's coding
#: (dollars; attachment 1..5, hurry 1..3, condition 1..3).
TRUTH = {
    "buyer_budget": 0.0185,
    "seller_min_price": -0.0175,
    "seller_attachment": 0.0,
    "buyer_hurry": 0.03,
    "mug_condition": 0.04,
}
#: The probability of a deal at zero of every coding; with the budgets' ranges ($3-$25)
#: and the levels from 1, the probability spans 0.034 to 0.966 over the whole design.
INTERCEPT = 0.346


def demo_universe() -> Hypothesis:
    """The mug study with the two extra causes the follow-on may propose."""
    text = resources.files("silicolab.studies").joinpath("examples/mug_universe.yaml")
    return hypothesis_from_data(yaml.safe_load(text.read_text(encoding="utf-8")))


def demo_world(seed: int) -> HiddenWorld:
    """The demo's hidden world: the universe's outcome under :data:`TRUTH`."""
    return offline_world(demo_universe(), seed=seed, effects=TRUTH, intercept=INTERCEPT)


def demo_models(seed: int, cache_path: Any) -> StudyModels:
    """Scripted scientist (target: the paper's mug hypothesis; follow-on pool: the
    universe) and the hidden-world subjects and coordinator."""
    return offline_study_models(
        load_example("mug"),
        seed=seed,
        world=demo_world(seed),
        follow_on=demo_universe(),
        cache_path=cache_path,
    )


def _truth(world: HiddenWorld, stage: dict[str, Any]) -> dict[str, Any]:
    """What the stage's fit estimates: the world's truth for the causes it varied."""
    causes = [v["name"] for v in stage["hypothesis"]["variables"] if v["role"] == "cause"]
    return world.truth(causes)


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
    world = demo_world(seed)
    record["truth"] = _truth(world, record)
    if record.get("follow_on") and record["follow_on"].get("hypothesis"):
        record["follow_on"]["truth"] = _truth(world, record["follow_on"])
    return record


__all__ = [
    "INTERCEPT",
    "TRUTH",
    "arun_demo_study",
    "demo_models",
    "demo_universe",
    "demo_world",
]
