"""Peregrines: Poisson cubic model, validation, questions, posterior and EIG."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from silicolab.envs.boxinggym.base import BoxingEnv, InvalidDesign
from silicolab.envs.boxinggym.eig import nmc_eig
from silicolab.envs.boxinggym.peregrines import PRIOR_MEAN, PRIOR_SD, make_peregrines


def test_simulated_counts_match_poisson_moments() -> None:
    env = make_peregrines(seed=1)
    theta = {k: np.repeat(v, 40_000) for k, v in env.theta.items()}
    y = env.simulate(theta, 1.5, np.random.default_rng(0))
    a, b1, b2, b3 = (float(env.theta[k][0]) for k in ("alpha", "beta1", "beta2", "beta3"))
    lam = np.exp(a + b1 * 1.5 + b2 * 1.5**2 + b3 * 1.5**3)
    assert abs(y.mean() - lam) < 4 * np.sqrt(lam / y.size)
    assert abs(y.var() / lam - 1) < 0.05


def test_log_likelihood_matches_scipy() -> None:
    env = make_peregrines(seed=0)
    theta = {"alpha": np.array([4.5]), "beta1": np.array([1.2]), "beta2": np.array([0.07]),
             "beta3": np.array([-0.24])}  # fmt: skip
    lam = np.exp(4.5 + 1.2 * 2 + 0.07 * 4 - 0.24 * 8)
    got = env.log_likelihood(np.array([150]), theta, 2.0)
    assert got[0] == pytest.approx(stats.poisson.logpmf(150, lam))


@pytest.mark.parametrize(
    ("text", "message"),
    [("abc", "Input must be a float."), ("5.5", "Input must be between 0 and 5.")],
)
def test_validation_messages(text: str, message: str) -> None:
    env = make_peregrines(seed=0)
    with pytest.raises(InvalidDesign) as err:
        env.run(text)
    assert err.value.message == message
    assert env.data == []


def test_run_questions_parsing_and_norms() -> None:
    env = make_peregrines(seed=0)
    assert env.run("1.0").isdigit() and env.data[0][0] == 1.0
    qs = env.goal.questions(10, np.random.default_rng(0))
    assert all(0 <= q.point <= 4 and "time" in q.text for q in qs)
    assert env.goal.parse_answer("12.7") == 12 and env.goal.parse_answer("many") is None
    assert (env.goal.norm_mu, env.goal.norm_sigma) == (10991.5464, 15725.115658658306)
    no_prior = make_peregrines(prior=False, seed=0)
    assert "peregrine" not in no_prior.describe().lower()
    score = env.goal.score([qs[0].truth + 10] + [None] * 9, qs)
    assert score.raw == 100 and score.n_missing == 9


def test_posterior_matches_grid_on_alpha_slice() -> None:
    """Laplace-t importance sampling agrees with brute-force prior IS (400k draws) on the
    posterior means, and its α lies at the mode of a scipy grid on the 1-d α slice."""
    env = make_peregrines(seed=3)
    rng = np.random.default_rng(0)
    for t in np.linspace(0.2, 4, 8):
        env.run(f"{t:.2f}")
    draws = env.posterior_sample(8000, rng)
    # independent check of the full posterior mean by self-normalised prior IS (huge sample)
    big = env.prior_sample(400_000, rng)
    log_w = env.data_log_likelihood(big)
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    for key in ("alpha", "beta1", "beta3"):
        ref = float((w * big[key]).sum())
        sd = float(np.sqrt((w * (big[key] - ref) ** 2).sum()))
        assert abs(draws[key].mean() - ref) < 0.15 * sd + 1e-3
    # grid on alpha with the other coefficients at their posterior means
    grid = np.linspace(4.0, 5.0, 2001)
    others = {k: float(draws[k].mean()) for k in ("beta1", "beta2", "beta3")}
    x = np.array([d for d, _ in env.data])
    y = np.array([c for _, c in env.data])
    eta = grid[:, None] + others["beta1"] * x + others["beta2"] * x**2 + others["beta3"] * x**3
    lp = stats.poisson.logpmf(y, np.exp(eta)).sum(1) + stats.norm.logpdf(grid, 4.5, 0.1)
    p = np.exp(lp - lp.max())
    mode = grid[np.argmax(p)]
    assert abs(mode - draws["alpha"].mean()) < 0.05


def test_prior_sample_moments() -> None:
    env = make_peregrines(seed=0)
    th = env.prior_sample(50_000, np.random.default_rng(1))
    got = np.array([th[k].mean() for k in ("alpha", "beta1", "beta2", "beta3")])
    assert np.allclose(got, PRIOR_MEAN, atol=4 * PRIOR_SD / np.sqrt(50_000) * 3)


def test_nmc_eig_fixed_nonnegative_and_seed_consistent() -> None:
    env = make_peregrines(seed=2)
    designs = [0.5, 2.5, 4.5]
    a = nmc_eig(env, designs, n_outer=800, n_inner=800, rng=np.random.default_rng(1))
    b = nmc_eig(env, designs, n_outer=800, n_inner=800, rng=np.random.default_rng(2))
    assert np.all(np.isfinite(a)) and np.all(a >= 0)
    assert np.allclose(a, b, atol=0.15)
    faithful = make_peregrines(seed=2, fidelity="faithful")
    assert np.all(np.isfinite(nmc_eig(faithful, designs)))


def test_cross_likelihood_matches_the_generic_per_pair_computation() -> None:
    env = make_peregrines(seed=4)
    theta = env.prior_sample(300, np.random.default_rng(0))
    for t in (0.0, 1.7, 5.0):
        y = env.simulate(theta, t, np.random.default_rng(1))[:50]
        y[0] = 0
        fast = env.cross_log_likelihood(y, theta, t)
        generic = BoxingEnv.cross_log_likelihood(env, y, theta, t)
        np.testing.assert_allclose(fast, generic, rtol=1e-12, atol=1e-9)
