"""The offline world scales its hidden effects to the outcome's type and levels; one
builder serves the CLI, the demo and Python; the truth is what the fit estimates, and the
fitted 95 % intervals cover it about 95 % of the time."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from silicolab.core.errors import InputError
from silicolab.llm.base import run_sync
from silicolab.runs import Run
from silicolab.sim.survey import parse_number
from silicolab.studies import load_example
from silicolab.studies.demo_study import TRUTH, arun_demo_study, demo_universe, demo_world
from silicolab.studies.files import hypothesis_from_data
from silicolab.studies.offline import (
    default_effects,
    offline_study_models,
    offline_world,
    truth_rows,
)
from silicolab.studies.pipeline import StudyOptions
from silicolab.studies.study import run_study
from silicolab.studies.world import HiddenWorld

EXAMPLES = ("mug", "bail", "lawyer", "auction")


def _cells(hypothesis):
    """Every cell of the full factorial design, as treatment values by cause."""
    causes = hypothesis.treatments
    for values in itertools.product(*(v.values for v in causes)):
        yield dict(zip((v.name for v in causes), values, strict=True))


def _expected(truth: dict, hypothesis, cell: dict) -> float:
    """The expected outcome of ``cell`` from the truth's intercept and effects."""
    return truth["intercept"] + sum(
        effect * float(hypothesis.variable(name).numeric(cell[name]))
        for name, effect in truth["effects"].items()
    )


def _with_outcome(name: str, **changes) -> object:
    """A built-in example whose outcome is changed (e.g. to an ordinal or count)."""
    data = load_example(name).to_dict()
    for v in data["variables"]:
        if v["role"] == "outcome":
            v.update(changes)
    return hypothesis_from_data(data)


VARIANTS = {
    "lawyer-ordinal": lambda: _with_outcome(
        "lawyer", type="ordinal", levels=["no", "unlikely", "maybe", "likely", "yes"]
    ),
    "mug-count": lambda: _with_outcome("mug", type="count", levels=[], units="offers"),
}


@pytest.mark.parametrize("name", [*EXAMPLES, *VARIANTS])
def test_default_effects_keep_the_outcome_inside_its_range_over_the_whole_design(name) -> None:
    hypothesis = VARIANTS[name]() if name in VARIANTS else load_example(name)
    world = offline_world(hypothesis)
    truth = world.truth()
    assert truth["effects"] == pytest.approx(default_effects(hypothesis))
    means = np.array([_expected(truth, hypothesis, cell) for cell in _cells(hypothesis)])
    assert means == pytest.approx([world.expected(cell) for cell in _cells(hypothesis)])
    outcome = hypothesis.outcome
    if outcome.type == "binary":
        assert means.min() > 0.0 and means.max() < 1.0  # strictly, no clipping needed
        assert means.max() - means.min() == pytest.approx(0.8)  # and it varies
    elif outcome.type == "ordinal":
        assert means.min() >= 1.0 and means.max() <= len(outcome.levels)
        assert means.max() - means.min() == pytest.approx(0.8 * (len(outcome.levels) - 1))
    elif outcome.type == "count":
        assert means.min() >= 0.0 and means.max() > means.min()
    # the first cause matters, the third does not (something to find, something not to)
    causes = [v.name for v in hypothesis.treatments]
    assert truth["effects"][causes[0]] > 0 > truth["effects"][causes[1]]
    assert truth["effects"][causes[2]] == 0.0


def test_effects_that_leave_the_range_are_refused_with_the_fix() -> None:
    mug = load_example("mug")
    paper = {"buyer_budget": 0.037, "seller_min_price": -0.035}
    with pytest.raises(InputError, match=r"strictly inside \(0, 1\).*default_effects"):
        HiddenWorld(mug, paper, intercept=0.5)
    with pytest.raises(InputError, match="within"):
        HiddenWorld(VARIANTS["mug-count"](), {"buyer_budget": -1.0}, intercept=5.0)
    with pytest.raises(InputError, match="unknown causes"):
        HiddenWorld(mug, {"price": 1.0})


@pytest.mark.parametrize("name", ["lawyer", "lawyer-ordinal", "mug-count", "bail"])
def test_answers_are_drawn_with_the_expected_mean_and_stay_in_range(name) -> None:
    hypothesis = VARIANTS[name]() if name in VARIANTS else load_example(name)
    world = offline_world(hypothesis, seed=5)
    outcome = hypothesis.outcome
    cells = list(_cells(hypothesis))
    for cell in (cells[0], cells[len(cells) // 2], cells[-1]):
        mean = world.expected(cell)
        n = 4000
        answers = [world.answer(cell, sample=i) for i in range(n)]
        if outcome.type in ("binary", "ordinal"):
            levels = [a.split(".")[0] for a in answers]
            assert set(levels) <= set(outcome.levels)
            offset = 0 if outcome.type == "binary" else 1
            values = np.array([outcome.levels.index(x) + offset for x in levels], float)
        else:
            values = np.array([parse_number(a.split(" ")[0].rstrip(".")) for a in answers])
        if outcome.type == "count":
            assert values.min() >= 0 and np.all(values == np.round(values))
        if outcome.type == "binary":
            sd = math.sqrt(mean * (1 - mean))
        elif outcome.type == "ordinal":
            k = len(outcome.levels)
            q = (mean - 1) / (k - 1)
            sd = math.sqrt((k - 1) * q * (1 - q))
        elif outcome.type == "count":
            sd = math.sqrt(mean)
        else:
            sd = world.noise_sd
        # the draws' mean is the linear predictor (4.5 standard errors: fails 1 in 150,000)
        assert abs(values.mean() - mean) < 4.5 * sd / math.sqrt(n), (cell, mean)
    # a rerun of one sample gives the same answer; another sample is a new draw
    assert world.answer(cells[0], sample=7) == world.answer(cells[0], sample=7)


@pytest.mark.parametrize("name", ["lawyer-ordinal", "mug-count"])
def test_a_study_recovers_the_truth_of_other_outcome_types(tmp_path, name) -> None:
    hypothesis = VARIANTS[name]()
    world = offline_world(hypothesis, seed=2)
    models = offline_study_models(hypothesis, seed=2, world=world)
    with Run.create(tmp_path, kind="study", slug=name) as run:
        record = run_study(hypothesis, StudyOptions(seed=2, jobs=8), run=run, models=models)
    rows = truth_rows(record["estimation"], world.truth())
    assert len(rows) == 4 and all(row["covered"] for row in rows), rows


def test_the_cli_world_study_of_the_mug_gives_a_varying_outcome_and_recovers_the_truth(
    tmp_path,
) -> None:
    """``silicolab study run mug --subjects world`` through the one builder the CLI uses
    (it gave deal = 1 in all 405 rows when every cause had 1.0 per unit)."""
    mug = load_example("mug")
    models = offline_study_models(mug, seed=0)
    with Run.create(tmp_path, kind="study", slug="mug") as run:
        record = run_study(mug, StudyOptions(), run=run, models=models)
    deals = [row["deal"] for row in record["data"]["rows"]]
    assert len(deals) == 405 and set(deals) == {0.0, 1.0}
    assert 0.2 < np.mean(deals) < 0.8
    rows = truth_rows(record["estimation"], offline_world(mug, seed=0).truth())
    assert len(rows) == 4 and all(row["covered"] for row in rows), rows


def test_the_demo_truth_is_what_its_fits_estimate_and_inside_every_interval(tmp_path) -> None:
    universe = demo_universe()
    world = demo_world(0)
    means = [world.expected(cell) for cell in _cells(universe)]
    assert min(means) > 0.0 and max(means) < 1.0  # the follow-on's design included
    # the paper's slopes, halved: their ratio is kept
    assert TRUTH["buyer_budget"] / TRUTH["seller_min_price"] == pytest.approx(0.037 / -0.035)
    with Run.create(tmp_path, kind="demo", slug="mug") as run:
        record = run_sync(
            arun_demo_study(run, seed=0, jobs=16, conditions=None, cache_path=None)
        )  # the demo's defaults: every condition, seed 0
    assert record["truth"]["scale"] == "probability of 'yes'"
    follow = record["follow_on"]
    for stage in (record, follow):
        rows = truth_rows(stage["estimation"], stage["truth"])
        causes = [v["name"] for v in stage["hypothesis"]["variables"] if v["role"] == "cause"]
        assert {r["term"] for r in rows} == {"(intercept)", *causes}
        assert all(row["covered"] for row in rows), rows
    # the follow-on's intercept holds the dropped causes at their first value
    assert follow["truth"]["intercept"] == pytest.approx(
        world.truth([*follow["truth"]["effects"]])["intercept"]
    )


def test_coverage_over_seeds_is_plausible_for_95_percent_intervals(tmp_path) -> None:
    """The lawyer (binary) and bail (continuous) studies on the worlds of 6 seeds: the
    number of true effects inside their 95 % intervals is at least the 0.1 % quantile of
    Binomial(n, 0.95) (``benchmarks/bench_world_coverage.py`` runs 20 seeds)."""
    covered = []
    for seed, name in itertools.product(range(6), ("lawyer", "bail")):
        hypothesis = load_example(name)
        world = offline_world(hypothesis, seed=seed)
        models = offline_study_models(hypothesis, seed=seed, world=world)
        with Run.create(tmp_path, kind="study", slug=f"{name}-{seed}") as run:
            record = run_study(hypothesis, StudyOptions(seed=seed, jobs=16), run=run,
                               models=models)  # fmt: skip
        rows = truth_rows(record["estimation"], world.truth())
        covered += [row["covered"] for row in rows if row["term"] != "(intercept)"]
    n = len(covered)
    assert n == 36 and None not in covered
    floor = int(stats.binom.ppf(0.001, n, 0.95))
    assert sum(covered) >= floor, (sum(covered), n, floor)
