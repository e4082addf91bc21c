"""The shared BoxingGym base: scoring and standardisation, the text loop, records, parsing,
posterior helpers, and lazy registration."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any, ClassVar

import numpy as np
import pytest

from silicolab.core.errors import InputError
from silicolab.envs import make, registered
from silicolab.envs.boxinggym import ENV_IDS, parsing
from silicolab.envs.boxinggym.base import (
    BoxingEnv,
    Goal,
    InvalidDesign,
    Question,
    grid_posterior,
    importance_posterior,
    smc_posterior,
    systematic_resample,
)
from silicolab.envs.boxinggym.linear_gaussian import LinearGaussian, make_linear_gaussian


class _AccuracyGoal(Goal):
    name = "direct"
    norm_mu = 0.5
    norm_sigma = 0.25
    kind = "accuracy"

    def system_message(self, include_prior: bool) -> str:
        return "classify"

    def questions(self, n: int, rng: np.random.Generator) -> list[Question]:
        return [Question("q", 1) for _ in range(n)]

    def parse_answer(self, text: str) -> Any | None:
        return parsing.binary_answer(text)

    def question_value(self, prediction: Any, question: Question) -> float:
        return float(prediction == question.truth)


class _AccuracyEnv(LinearGaussian):
    goals: ClassVar[tuple[str, ...]] = ("direct",)

    def make_goal(self, name: str) -> Goal:
        return _AccuracyGoal(self)


def test_error_goal_standardizes_the_same_in_both_fidelities_and_drops_missing():
    for fidelity in ("fixed", "faithful"):
        env = make_linear_gaussian(fidelity=fidelity)
        questions = [Question("q", 1.0), Question("q", 2.0), Question("q", 0.0)]
        score = env.goal.score([2.0, None, 2.0], questions)
        assert score.n == 2 and score.n_missing == 1
        assert score.raw == pytest.approx(2.5)  # errors 1 and 4
        assert score.raw_std == pytest.approx(1.5)
        assert score.standardized == pytest.approx((2.5 - 1.0) / 1.0)


def test_accuracy_goal_fixed_standardizes_error_faithful_reports_one_minus_z():
    questions = [Question("q", 1)] * 4
    predictions = [1, 1, 1, None]  # None counts as wrong for accuracy goals
    fixed = _AccuracyEnv(fidelity="fixed").goal.score(predictions, questions)
    faithful = _AccuracyEnv(fidelity="faithful").goal.score(predictions, questions)
    assert fixed.raw == faithful.raw == pytest.approx(0.75)
    assert fixed.n == 4 and fixed.n_missing == 1
    z_acc = (0.75 - 0.5) / 0.25
    assert faithful.standardized == pytest.approx(1 - z_acc)
    # fixed: error 1 - acc standardised with mu_err = 1 - mu -> (mu - acc) / sigma
    assert fixed.standardized == pytest.approx(((1 - 0.75) - (1 - 0.5)) / 0.25)
    assert faithful.standardized - fixed.standardized == pytest.approx(1.0)


def test_raw_clip_all_missing_and_length_mismatch():
    env = make_linear_gaussian()
    goal = env.goal
    type(goal).raw_clip = (0.0, 3.0)
    try:
        assert goal.standardize(100.0) == pytest.approx(2.0)
    finally:
        type(goal).raw_clip = None
    empty = goal.score([None], [Question("q", 1.0)])
    assert empty.n == 0 and math.isnan(empty.standardized)
    with pytest.raises(InputError):
        goal.score([1.0], [])


def test_run_validates_simulates_records_and_formats():
    env = make_linear_gaussian(seed=4)
    text = env.run("2.0")
    assert env.data and env.data[0][0] == 2.0 and text == parsing.format_number(env.data[0][1], 3)
    with pytest.raises(InvalidDesign) as err:
        env.run("two")
    assert err.value.message == "Error: the input must be a real number."
    assert len(env.data) == 1  # a refused design costs no step


def test_reset_is_seeded_and_reproducible():
    a, b = make_linear_gaussian(seed=7), make_linear_gaussian(seed=7)
    assert a.theta["theta"][0] == b.theta["theta"][0]
    assert a.run("1.5") == b.run("1.5")
    c = make_linear_gaussian(seed=8)
    assert c.theta["theta"][0] != a.theta["theta"][0]
    a.reset()
    assert a.data == [] and a.theta["theta"][0] == b.theta["theta"][0]


def test_to_record_is_json_ready():
    env = make_linear_gaussian(seed=2, prior_sd=2.0)
    env.run("1")
    record = env.to_record()
    json.dumps(record)
    assert record["env"] == "boxinggym/linear_gaussian" and record["fidelity"] == "fixed"
    assert record["params"] == {"prior_sd": 2.0, "sigma": 1.0} and len(record["data"]) == 1


def test_constructor_rejects_unknown_goal_and_fidelity():
    with pytest.raises(InputError):
        make_linear_gaussian(goal="nope")
    with pytest.raises(InputError):
        make_linear_gaussian(fidelity="exact")


def test_default_cross_log_likelihood_matches_the_broadcast_override():
    env = make_linear_gaussian()
    rng = np.random.default_rng(0)
    theta = env.prior_sample(7, rng)
    y = rng.normal(size=5)
    generic = BoxingEnv.cross_log_likelihood(env, y, theta, 1.3)
    assert np.allclose(generic, env.cross_log_likelihood(y, theta, 1.3))


def test_parsing_helpers():
    assert parsing.parse_number_list("[0.5, 1]") == [0.5, 1.0]
    assert parsing.parse_number_list("(1,2)", cast=int) == [1, 2]
    for bad in ("", "[1,,2]", "[a, 1]"):
        with pytest.raises(ValueError):
            parsing.parse_number_list(bad)
    assert parsing.float_answer("intensity = 3.25") == 3.25
    assert parsing.float_answer(" 4 ") == 4.0 and parsing.float_answer("about four") is None
    assert parsing.binary_answer("10") == 1 and parsing.binary_answer("0") == 0
    assert parsing.binary_answer("yes") is None
    assert parsing.int_from_float("3.7") == 3
    assert parsing.numeric_matrix("[[1, 2], [3, 4]]", 2, 2) == [[1.0, 2.0], [3.0, 4.0]]
    assert parsing.numeric_matrix("__import__('os')", 2, 2) is None
    assert parsing.last_number("it is 3 or 4.5") == 4.5
    assert parsing.extract_tag("a <answer> 7 </answer>", "answer") == "7"
    assert parsing.format_number(1234.5678) == "1234.57"
    assert parsing.format_list([0.5, 1]) == "[0.5, 1.0]"


def test_systematic_resample_matches_weights():
    rng = np.random.default_rng(1)
    weights = np.array([0.1, 0.6, 0.3])
    index = systematic_resample(weights, 1000, rng)
    counts = np.bincount(index, minlength=3)
    assert np.all(np.abs(counts - 1000 * weights) <= 1)


@pytest.mark.parametrize("sampler", ["importance", "grid", "smc"])
def test_posterior_helpers_match_the_conjugate_posterior(sampler):
    env = make_linear_gaussian(prior_sd=1.0, sigma=0.5, seed=3)
    for x in ("1.0", "-0.5", "2.0"):
        env.run(x)
    mean, variance = env.posterior_moments()
    rng = np.random.default_rng(5)
    info: dict[str, float] = {}
    if sampler == "importance":
        theta = importance_posterior(env, 4000, rng, env.data, diagnostics=info)
        assert info["ess"] > 1000
    elif sampler == "grid":
        axes = {"theta": np.linspace(-5, 5, 2001)}
        theta = grid_posterior(env, 4000, rng, env.data, axes, env.log_prior)
    else:
        theta = smc_posterior(env, 4000, rng, env.data, diagnostics=info)
        assert info["unique_fraction"] > 0.5
    sd = math.sqrt(variance)
    assert np.mean(theta["theta"]) == pytest.approx(mean, abs=0.08 * sd + 0.01)
    assert np.std(theta["theta"]) == pytest.approx(sd, rel=0.08)


def test_all_ten_ids_register_lazily_without_importing_numpy():
    assert set(ENV_IDS) <= set(registered()) and len(ENV_IDS) == 10
    code = "import sys, silicolab.envs as e; print('numpy' in sys.modules, len(e.registered()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == "False"
    assert make("boxinggym/location_finding", seed=0).name == "location_finding"
