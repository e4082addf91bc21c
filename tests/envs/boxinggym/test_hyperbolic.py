"""Hyperbolic temporal discounting: choice model, validation, goals, grid posterior, EIG."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from silicolab.envs import make
from silicolab.envs.boxinggym.base import InvalidDesign, Question
from silicolab.envs.boxinggym.eig import nmc_eig
from silicolab.envs.boxinggym.hyperbolic import (
    choice_probability,
    make_hyperbolic_temporal_discount,
)

DATA = [((50, 100, 30), 1), ((80, 100, 200), 0), ((20, 200, 300), 1), ((100, 120, 10), 1)]


def _p(log_k: float, alpha: float, design: tuple[int, int, int]) -> float:
    i_r, d_r, days = design
    v1 = d_r / (1 + np.exp(log_k) * days)
    return 0.01 + 0.98 * stats.norm.cdf((v1 - i_r) / alpha)


def test_registry_prior_and_record() -> None:
    env = make("boxinggym/hyperbolic_temporal_discount", seed=1)
    assert env.goal.name == "direct" and env.goal.kind == "accuracy"
    draws = env.prior_sample(200_000, np.random.default_rng(0))
    assert draws["log_k"].mean() == pytest.approx(-4.25, abs=0.01)
    assert draws["log_k"].std() == pytest.approx(0.5, abs=0.01)
    assert draws["alpha"].mean() == pytest.approx(2 * np.sqrt(2 / np.pi), abs=0.02)
    np.testing.assert_allclose(draws["k"], np.exp(draws["log_k"]))
    assert env.to_record()["params"]["epsilon"] == 0.01


def test_choice_frequency_and_likelihood() -> None:
    env = make_hyperbolic_temporal_discount(seed=0)
    theta = {"log_k": np.full(100_000, -3.0), "k": np.full(100_000, np.exp(-3.0))}
    theta["alpha"] = np.full(100_000, 20.0)
    design = (60, 100, 30)
    y = env.simulate(theta, design, np.random.default_rng(0))
    assert y.mean() == pytest.approx(_p(-3.0, 20.0, design), abs=0.005)
    th = {"log_k": np.array([-4.0, -2.0]), "alpha": np.array([1.5, 30.0])}
    th["k"] = np.exp(th["log_k"])
    got = env.log_likelihood(np.array([1, 0]), th, design)
    want = [np.log(_p(-4.0, 1.5, design)), np.log(1 - _p(-2.0, 30.0, design))]
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(
        np.diag(env.cross_log_likelihood(np.array([1, 0]), th, design)), want
    )
    # the ε floor: a certain choice still has probability at least 0.01
    assert choice_probability(-10.0, 1e-6, (1, 300, 1), 0.01) == pytest.approx(0.99)


@pytest.mark.parametrize(
    ("text", "fidelity", "message"),
    [
        ("[1, 2]", "fixed", "Item len not 3 [1, 2]"),
        ("[5, 2, 3]", "faithful", "item 0 not less than item 1, [5, 2, 3]"),
        ("[5, 5, 3]", "fixed", "item 0 not less than item 1, [5, 5, 3]"),
        ("[1, 2, 0]", "fixed", "item 2 not greater than 0, [1, 2, 0]"),
        ("[-3, 2, 4]", "fixed", "item 0 must not be negative, [-3, 2, 4]"),
        (
            "soon",
            "fixed",
            "Error: the input must be three numbers [iR, dR, D], for example [10, 20, 5].",
        ),
        (
            "[1, 2, 3] (trivial example)",
            "faithful",
            "could not convert string to float: ' 3] (trivial example)'",
        ),
    ],
)
def test_validation_messages(text: str, fidelity: str, message: str) -> None:
    env = make_hyperbolic_temporal_discount(fidelity=fidelity)
    with pytest.raises(InvalidDesign) as info:
        env.validate(text)
    assert info.value.message == message


def test_validation_accepts() -> None:
    assert make_hyperbolic_temporal_discount().validate("[1, 2, 3] (trivial example)") == (1, 2, 3)
    faithful = make_hyperbolic_temporal_discount(fidelity="faithful")
    assert faithful.validate("[5, 5, 3.9]") == (5, 5, 3)  # equal rewards allowed upstream
    env = make_hyperbolic_temporal_discount(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(200):
        i_r, d_r, days = env.sample_design(rng)
        assert 1 <= i_r < 200 and i_r < d_r < 300 and 1 <= days < 365
    assert env.run("[10, 300, 5]") in {"0", "1"} and len(env.data) == 1


def test_questions_balanced_and_parsing() -> None:
    env = make_hyperbolic_temporal_discount(seed=3)
    qs = env.goal.questions(10, np.random.default_rng(0))
    assert [q.truth for q in qs] == [1, 0] * 5
    assert all(f"D = {q.point[2]} days" in q.text for q in qs)
    fixed, faithful = env.goal, make_hyperbolic_temporal_discount(fidelity="faithful").goal
    assert fixed.parse_answer("<answer>0</answer>") == 0
    assert fixed.parse_answer("10 dollars, so 0") == 0
    assert faithful.parse_answer("10 dollars, so 0") == 1  # published substring rule
    assert fixed.parse_answer("no idea") is None
    score = fixed.score([1, 0, None], [Question("", 1), Question("", 1), Question("", 0)])
    assert score.raw == pytest.approx(1 / 3) and score.n_missing == 1
    assert score.standardized == pytest.approx((0.5 - 1 / 3) / 0.4692829610160591)
    faithful_score = faithful.score([1, 0], [Question("", 1), Question("", 1)])
    assert faithful_score.standardized == pytest.approx(1 - (0.5 - 0.5) / 0.4692829610160591)
    assert faithful.naive_system_message(True) == "Here is what you know about the environment:\n"


def test_discount_goal() -> None:
    env = make_hyperbolic_temporal_discount(goal="discount", seed=5)
    goal = env.goal
    assert (goal.norm_mu, goal.norm_sigma, goal.num_evals, goal.kind) == (0.25, 4.3, 1, "error")
    (q,) = goal.questions(1, np.random.default_rng(0))
    assert q.truth == pytest.approx(env.theta["k"][0])
    assert goal.parse_answer("k = 0.02") == pytest.approx(0.02)
    assert goal.parse_answer("roughly 0.03 per day") == pytest.approx(0.03)
    assert goal.score([q.truth + 0.1], [q]).raw == pytest.approx(0.01)
    assert goal.prior_mean_answer(q) == pytest.approx(np.exp(-4.25 + 0.125))
    assert "V1 = dR / (1 + k * D)" in env.describe()


def test_grid_posterior_matches_importance_sampling() -> None:
    env = make_hyperbolic_temporal_discount(seed=0)
    post = env.posterior_sample(200_000, np.random.default_rng(0), data=DATA)
    prior = env.prior_sample(1_000_000, np.random.default_rng(1))
    log_w = sum(env.log_likelihood(np.full(1_000_000, y), prior, d) for d, y in DATA)
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    for key in ("log_k", "alpha", "k"):
        assert post[key].mean() == pytest.approx(w @ prior[key], rel=0.02)
    goal = env.goal
    q = Question("", 1, (50, 100, 30))
    p = np.mean(env.probability(post, q.point))
    assert goal.bayes_answer(q, post, np.random.default_rng(0)) == int(p >= 0.5)


def test_exact_eig_is_entropy_difference() -> None:
    env = make_hyperbolic_temporal_discount(seed=0)
    prior = env.prior_sample(400_000, np.random.default_rng(2))
    design = (100, 150, 30)
    p = env.probability(prior, design)

    def h(x: np.ndarray) -> np.ndarray:
        return -(x * np.log(x) + (1 - x) * np.log(1 - x))

    assert env.exact_eig(design, data=[]) == pytest.approx(h(p.mean()) - h(p).mean(), rel=0.01)


@pytest.mark.parametrize("design", [(100, 150, 30), (50, 300, 100), (60, 100, 200), (10, 20, 5)])
def test_nmc_eig_close_to_exact(design: tuple[int, int, int]) -> None:
    env = make_hyperbolic_temporal_discount(seed=0)
    env.data = list(DATA)
    exact = env.exact_eig(design)
    est = nmc_eig(env, [design], n_outer=20_000, n_inner=1000, rng=np.random.default_rng(0))[0]
    assert est == pytest.approx(exact, rel=0.05, abs=0.003)
