"""A study replicated across subject models, wordings and seeds, offline: each variant's
subjects are the hidden-SCM world (known effects), so the verdicts can be checked against
the truth."""

from __future__ import annotations

from pathlib import Path

import pytest

from silicolab.runs import open_run
from silicolab.studies import load_example
from silicolab.studies.hypothesis import Hypothesis
from silicolab.studies.offline import default_effects, offline_study_models
from silicolab.studies.pipeline import StudyOptions
from silicolab.studies.replication.run import Variant, arun_replication, variant_grid

MUG = load_example("mug")
EFFECTS = default_effects(MUG)  # buyer_budget +1, seller_min_price -0.5, attachment 0
FIRST, SECOND = (f"{v.name} -> {MUG.outcome.name}" for v in MUG.treatments[:2])


def _models(flip: str | None = None):
    """Each variant's subjects: the hidden world with the default effects; the model
    spec ``flip`` answers with the first cause's effect reversed."""

    def models_for(variant: Variant, worded: Hypothesis):
        effects = dict(EFFECTS)
        if variant.model == flip:
            effects[MUG.treatments[0].name] *= -1
        return offline_study_models(worded, seed=variant.seed, effects=effects)

    return models_for


async def _replicate(tmp_path: Path, models: list[str], seeds: list[int], flip: str | None):
    variants = variant_grid(models, 1, seeds)
    options = StudyOptions(subjects="llm", conditions=30, seed=0)
    run, _ = open_run(tmp_path, "replication", settings={"t": 1}, slug="mug")
    with run:
        rep = await arun_replication(MUG, variants, options, run=run, models_for=_models(flip))
    return run, rep


async def test_a_common_effect_is_robust_and_recovered(tmp_path: Path) -> None:
    run, rep = await _replicate(tmp_path, ["a", "b", "c"], [0, 1], flip=None)
    by_path = {p["path"]: p for p in rep.paths()}
    assert by_path[FIRST]["verdict"]["name"] == "robust"
    pooled = by_path[FIRST]["random"]
    assert pooled["ci_low"] <= EFFECTS[MUG.treatments[0].name] <= pooled["ci_high"]
    assert by_path[SECOND]["verdict"]["name"] == "robust"
    assert len(rep.variants) == 6 and all(v.fit_error is None for v in rep.variants)
    # every (variant, condition) is one unit of the run, exactly once
    keys = [e["unit"] for e in run.finished_events().values()]
    assert len(keys) == len(set(keys)) == 6 * 30
    assert {k.split("/", 1)[0] for k in keys} == {v.variant.id for v in rep.variants}


async def test_a_model_that_flips_one_path_makes_it_model_dependent(tmp_path: Path) -> None:
    _, rep = await _replicate(tmp_path, ["a", "b", "flip"], [0, 1], flip="flip")
    by_path = {p["path"]: p for p in rep.paths()}
    assert by_path[FIRST]["verdict"]["name"] == "model-dependent"
    shares = by_path[FIRST]["decomposition"]["shares"]
    assert shares["model"] == max(shares.values()) and shares["model"] > 0.5
    assert by_path[SECOND]["verdict"]["name"] == "robust"


def test_the_grid_is_every_combination_and_refuses_repeats() -> None:
    grid = variant_grid(["x", "y"], 2, [0, 5])
    assert [v.id for v in grid] == [
        "m0w0s0", "m0w0s5", "m0w1s0", "m0w1s5", "m1w0s0", "m1w0s5", "m1w1s0", "m1w1s5",
    ]  # fmt: skip
    with pytest.raises(Exception, match="repeats"):
        variant_grid(["x", "x"], 1, [0])


async def test_a_world_that_heeds_a_wording_cue_makes_the_path_wording_dependent(
    tmp_path: Path,
) -> None:
    from silicolab.studies.replication.wordings import Wording, check_wording, original

    cue = Wording(index=1, texts={"scenario": "Two people haggle over a mug at a flea market."})
    plain = Wording(index=2, texts={"scenario": "Two people negotiate over a mug."})
    assert check_wording(MUG, cue) == [] and check_wording(MUG, plain) == []

    def models_for(variant: Variant, worded: Hypothesis):
        effects = dict(EFFECTS)
        if "haggle" in worded.scenario:  # the cue reverses the first cause's effect
            effects[MUG.treatments[0].name] *= -1
        return offline_study_models(worded, seed=variant.seed, effects=effects)

    variants = variant_grid(["a", "b"], 3, [0, 1])
    options = StudyOptions(subjects="llm", conditions=30, seed=0)
    run, _ = open_run(tmp_path, "replication", settings={"t": 2}, slug="mug")
    with run:
        rep = await arun_replication(MUG, variants, options, run=run, models_for=models_for,
                                     wordings=[original(MUG), cue, plain])  # fmt: skip
    by_path = {p["path"]: p for p in rep.paths()}
    assert by_path[FIRST]["verdict"]["name"] == "wording-dependent"
    shares = by_path[FIRST]["decomposition"]["shares"]
    assert shares["wording"] == max(shares.values())


async def test_a_path_no_variant_could_estimate_keeps_a_named_reason(tmp_path: Path) -> None:
    variants = variant_grid(["a"], 1, [0, 1])
    options = StudyOptions(subjects="llm", conditions=3, seed=0)  # 3 rows for 4 coefficients
    run, _ = open_run(tmp_path, "replication", settings={"t": 3}, slug="mug")
    with run:
        rep = await arun_replication(MUG, variants, options, run=run, models_for=_models())
    assert all(v.fit_error for v in rep.variants) and rep.rows == []
    paths = rep.paths()
    assert [p["path"] for p in paths] == [f"{v.name} -> deal" for v in MUG.treatments]
    assert {p["verdict"]["name"] for p in paths} == {"no estimate"}
    assert "not estimable" in paths[0]["verdict"]["detail"]
