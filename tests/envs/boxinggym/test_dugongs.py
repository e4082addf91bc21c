"""Dugongs: folded-normal growth model, validation, questions, adaptive IS posterior, EIG."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from silicolab.envs import make
from silicolab.envs.boxinggym.base import BoxingEnv, InvalidDesign, Question
from silicolab.envs.boxinggym.dugongs import (
    adaptive_importance,
    cross_folded_logpdf,
    folded_normal_logpdf,
    folded_normal_mean,
    make_dugongs,
)
from silicolab.envs.boxinggym.eig import nmc_eig

DATA = [(0.0, 0.31), (0.1, 0.12), (1.0, 1.45), (2.5, 1.9), (4.0, 2.1), (5.0, 1.95)]


def test_registry_and_prior() -> None:
    env = make("boxinggym/dugongs", seed=1)
    assert env.goal.name == "direct" and "Sea cows" in env.describe()
    draws = env.prior_sample(200_000, np.random.default_rng(0))
    for key, mean, sd in (("alpha", 2.0, 0.2), ("beta", 1.5, 0.5), ("lam", 0.4, 0.5)):
        assert draws[key].mean() == pytest.approx(mean, abs=0.01)
        assert draws[key].std() == pytest.approx(sd, abs=0.01)


def test_outcomes_are_folded_normal() -> None:
    env = make_dugongs(seed=0)
    n = 200_000
    theta = {"alpha": np.full(n, 1.0), "beta": np.full(n, 1.2), "lam": np.full(n, -0.5)}
    m = 1.0 - 1.2 * 0.5**0.5
    y = env.simulate(theta, 0.5, np.random.default_rng(0))
    ref = stats.foldnorm(abs(m) / 0.25, scale=0.25)
    assert (y >= 0).all()
    assert y.mean() == pytest.approx(ref.mean(), abs=0.003)
    assert y.var() == pytest.approx(ref.var(), rel=0.02)
    assert folded_normal_mean(m) == pytest.approx(ref.mean())


def test_log_likelihood_hand_values() -> None:
    theta = {
        "alpha": np.array([2.0, 1.8]),
        "beta": np.array([1.5, 2.0]),
        "lam": np.array([0.4, -0.9]),
    }
    x = 2.0
    m = np.array([2.0 - 1.5 * 0.16, 1.8 - 2.0 * 0.81])
    y = np.array([1.7, 0.05])
    want = stats.foldnorm.logpdf(y, np.abs(m) / 0.25, scale=0.25)
    env = make_dugongs()
    np.testing.assert_allclose(env.log_likelihood(y, theta, x), want)
    np.testing.assert_allclose(np.diag(env.cross_log_likelihood(y, theta, x)), want)
    faithful = make_dugongs(fidelity="faithful")
    np.testing.assert_allclose(faithful.log_likelihood(y, theta, x), stats.norm.logpdf(y, m, 0.25))
    hack = faithful.faithful_log_likelihood(y, theta, x, inner=False)
    np.testing.assert_allclose(hack, np.log(stats.norm.pdf(y, m, 0.25) + 0.001))


@pytest.mark.parametrize(
    ("text", "fidelity", "message"),
    [
        ("two", "fixed", "Input must be a float."),
        ("2 (years)", "faithful", "Input must be a float."),
        ("-0.1", "fixed", "Input must be between 0 and 5."),
        ("5.01", "faithful", "Input must be between 0 and 5."),
    ],
)
def test_validation_messages(text: str, fidelity: str, message: str) -> None:
    env = make_dugongs(fidelity=fidelity)
    with pytest.raises(InvalidDesign) as info:
        env.validate(text)
    assert info.value.message == message


def test_validation_accepts_closed_interval() -> None:
    env = make_dugongs(seed=2)
    assert env.validate("0") == 0.0 and env.validate("5") == 5.0
    assert env.validate("2 (years)") == 2.0
    assert float(env.run("2.5")) >= 0 and env.data[0][0] == 2.5
    rng = np.random.default_rng(0)
    assert all(0 <= env.sample_design(rng) <= 5 for _ in range(100))


def test_questions_parsing_and_score() -> None:
    env = make_dugongs(seed=4)
    qs = env.goal.questions(10, np.random.default_rng(0))
    assert all(0 <= q.point <= 4 and str(q.point) in q.text and q.truth >= 0 for q in qs)
    goal = env.goal
    assert goal.parse_answer("1.75") == pytest.approx(1.75)
    assert goal.parse_answer("length = 2.1") == pytest.approx(2.1)
    assert goal.parse_answer("about 1.9 metres") == pytest.approx(1.9)
    assert goal.parse_answer("no idea") is None
    score = goal.score([1.0, None], [Question("", 1.5, 1.0), Question("", 2.0, 2.0)])
    assert score.raw == pytest.approx(0.25) and score.n == 1 and score.n_missing == 1
    assert score.standardized == pytest.approx((0.25 - 0.9058681693402041) / 9.234192516908691)
    noprior = make_dugongs(prior=False, seed=4)
    assert "float response" in noprior.goal.questions(1, np.random.default_rng(0))[0].text


def _reference_moments(env, data) -> dict[str, tuple[float, float]]:
    prior = env.prior_sample(3_000_000, np.random.default_rng(11))
    log_w = env.data_log_likelihood(prior, data)
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    return {k: (w @ v, np.sqrt(w @ (v - w @ v) ** 2)) for k, v in prior.items()}


@pytest.mark.parametrize("fidelity", ["fixed", "faithful"])
def test_posterior_matches_brute_force(fidelity: str) -> None:
    env = make_dugongs(fidelity=fidelity)
    post = env.posterior_sample(100_000, np.random.default_rng(0), data=DATA)
    ref = _reference_moments(env, DATA)
    for key, (mean, sd) in ref.items():
        assert post[key].mean() == pytest.approx(mean, abs=0.1 * sd)
        assert post[key].std() == pytest.approx(sd, rel=0.1)
    q = Question("", 0.0, 3.0)
    want = folded_normal_mean(env.mean(post, 3.0)).mean()
    assert env.goal.bayes_answer(q, post, np.random.default_rng(0)) == pytest.approx(want)


def test_nmc_eig_reasonable_and_deterministic() -> None:
    env = make_dugongs(seed=3)
    env.data = DATA[:3]
    designs = [0.0, 1.0, 4.0]
    a = nmc_eig(env, designs, rng=np.random.default_rng(0))
    b = nmc_eig(env, designs, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(a, b)
    assert (a > 0).all() and (a < np.log(2001)).all()
    assert env.exact_eig(1.0) is None


def test_adaptive_importance_on_a_peaked_gaussian() -> None:
    """Prior N(0, I), likelihood N((2, -1), 0.05² I): prior proposals alone give ESS ≈ 1, so
    the t-mixture rounds must run; the answer is the conjugate posterior."""
    centre, s = np.array([2.0, -1.0]), 0.05

    def log_prior(x: np.ndarray) -> np.ndarray:
        return stats.norm.logpdf(x).sum(axis=1)

    def log_lik(x: np.ndarray) -> np.ndarray:
        return stats.norm.logpdf(x, centre, s).sum(axis=1)

    def draw(k: int, g: np.random.Generator) -> np.ndarray:
        return g.standard_normal((k, 2))

    x, w, ess = adaptive_importance(log_prior, log_lik, draw, np.random.default_rng(0))
    post_var = 1 / (1 + 1 / s**2)
    assert ess >= 3000
    np.testing.assert_allclose(w @ x, centre * post_var / s**2, atol=0.005)
    var = w @ (x - w @ x) ** 2
    np.testing.assert_allclose(var, post_var, rtol=0.1)


@pytest.mark.parametrize("fidelity", ["fixed", "faithful"])
def test_vectorised_cross_likelihood_matches_the_generic_per_pair_computation(
    fidelity: str,
) -> None:
    env = make_dugongs(fidelity=fidelity, seed=5)
    rng = np.random.default_rng(2)
    theta = env.prior_sample(400, rng)
    for x in (0.0, 0.05, 1.3, 5.0):  # small ages: the fold term matters for every column
        y = env.simulate(theta, x, rng)[:60]
        y[:2] = [0.0, 1e-9]
        fast = env.cross_log_likelihood(y, theta, x)
        generic = BoxingEnv.cross_log_likelihood(env, y, theta, x)
        np.testing.assert_allclose(fast, generic, rtol=1e-12, atol=1e-12)


def test_cross_folded_logpdf_edge_cases() -> None:
    y = np.array([-0.5, 0.0, 1e-12, 0.3, 2.0, 40.0])
    m = np.array([-3.0, -0.2, -1e-12, 0.0, 1e-6, 0.3, 2.5])
    got = cross_folded_logpdf(y, m)
    want = folded_normal_logpdf(y[:, None], m[None, :])
    assert np.isneginf(got[0]).all() and np.isneginf(want[0]).all()
    np.testing.assert_allclose(got[1:], want[1:], rtol=1e-12)
    scipy = stats.foldnorm.logpdf(y[1:-1, None], np.abs(m) / 0.25, scale=0.25)  # (underflows
    np.testing.assert_allclose(got[1:-1], scipy, rtol=1e-9)  # to -inf at y = 40, we do not)
