"""Mastectomy survival: fixed vs faithful p_death, ID validation, posterior and EIG."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit

from silicolab.envs.boxinggym.base import InvalidDesign
from silicolab.envs.boxinggym.eig import nmc_eig
from silicolab.envs.boxinggym.survival import death_probability, make_survival

THETA = {"lambda0": np.array([0.3]), "beta": np.array([1.2])}


def test_death_probability_fixed_and_faithful() -> None:
    fixed = death_probability(THETA, 2.0, 1, "fixed")[0]
    assert fixed == pytest.approx(1 - np.exp(-2.0 * 0.3 * np.exp(1.2)))
    assert death_probability(THETA, 0.0, 0, "fixed")[0] == 0.0
    faithful = death_probability(THETA, 2.0, 1, "faithful")[0]
    assert faithful == pytest.approx(expit(2.0 * 0.3 * np.exp(1.2)))
    assert death_probability(THETA, np.linspace(0, 10, 50), 0, "faithful").min() >= 0.5


def test_log_likelihood_is_bernoulli_and_outcomes_fixed() -> None:
    env = make_survival(seed=4)
    pid = 7
    p = death_probability(THETA, env.times[pid], env.metastasized[pid], "fixed")[0]
    assert env.log_likelihood(np.array([1]), THETA, pid)[0] == pytest.approx(np.log(p))
    assert env.log_likelihood(np.array([0]), THETA, pid)[0] == pytest.approx(
        stats.bernoulli.logpmf(0, p)
    )
    first = env.run(str(pid))
    assert all(env.run(str(pid)) == first for _ in range(3))  # outcome sampled once


def test_simulated_rate_matches_probability() -> None:
    env = make_survival(seed=1)
    theta = {k: np.repeat(v, 40_000) for k, v in THETA.items()}
    y = env.simulate(theta, 3, np.random.default_rng(0))
    p = death_probability(THETA, env.times[3], env.metastasized[3], "fixed")[0]
    assert abs(y.mean() - p) < 4 * np.sqrt(p * (1 - p) / y.size) + 1e-9


@pytest.mark.parametrize(
    ("fidelity", "text", "message"),
    [
        ("fixed", "x", "Input must be an integer."),
        ("fixed", "-1", "Input must be between 0 and 99"),
        ("fixed", "100", "Input must be between 0 and 99"),
        ("faithful", "100", "index 100 is out of bounds for axis 0 with size 100"),
        ("faithful", "101", "Input must be between 0 and 99"),
    ],
)
def test_validation(fidelity: str, text: str, message: str) -> None:
    env = make_survival(seed=0, fidelity=fidelity)
    with pytest.raises(InvalidDesign) as err:
        env.validate(text)
    assert err.value.message == message


def test_questions_balanced_parsing_and_scoring() -> None:
    env = make_survival(seed=3)
    qs = env.goal.questions(10, np.random.default_rng(0))
    assert sum(q.truth for q in qs) == 5
    assert env.goal.parse_answer("1") == 1 and env.goal.parse_answer("0") == 0
    assert env.goal.parse_answer("dead") is None
    preds = [q.truth for q in qs]
    fixed = env.goal.score(preds, qs)
    assert fixed.raw == 1.0 and fixed.standardized == pytest.approx(
        (0.2604 - 1) / 0.43885286828275377
    )
    faithful = make_survival(seed=3, fidelity="faithful")
    assert faithful.goal.standardize(1.0) == pytest.approx(1 - (1 - 0.2604) / 0.43885286828275377)
    assert "0: " in env.describe() and "99: " in env.describe()


def test_posterior_matches_grid() -> None:
    env = make_survival(seed=5)
    for pid in range(12):
        env.run(str(pid))
    env.run("0")  # a repeat adds no information in fixed mode
    draws = env.posterior_sample(20_000, np.random.default_rng(0))
    # brute-force grid over (log λ0, β) with the same (deduplicated) data
    log_lam = np.linspace(-12, 4, 400)
    beta = np.linspace(0, 40, 400)
    L, B = np.meshgrid(log_lam, beta, indexing="ij")
    cells = {"lambda0": np.exp(L.ravel()), "beta": B.ravel()}
    lp = stats.gamma.logpdf(cells["lambda0"], 0.1, scale=10) + L.ravel()  # Jacobian of log
    lp += stats.halfnorm.logpdf(cells["beta"], scale=10)
    lp += env.data_log_likelihood(cells, env.likelihood_data(env.data))
    w = np.exp(lp - lp.max())
    w /= w.sum()
    ref = float((w * np.log(cells["lambda0"])).sum())
    sd = float(np.sqrt((w * (np.log(cells["lambda0"]) - ref) ** 2).sum()))
    assert abs(np.log(draws["lambda0"]).mean() - ref) < 0.1 * sd + 0.05
    assert len(env.likelihood_data(env.data)) == 12


def test_nmc_eig_fixed_and_determinism() -> None:
    env = make_survival(seed=2)
    designs = [0, 10, 20]
    a = nmc_eig(env, designs, n_outer=1000, n_inner=1000, rng=np.random.default_rng(1))
    b = nmc_eig(env, designs, n_outer=1000, n_inner=1000, rng=np.random.default_rng(2))
    assert np.all(np.isfinite(a)) and np.all(a >= 0) and np.all(a <= np.log(2) + 1e-9)
    assert np.allclose(a, b, atol=0.08)
    assert make_survival(seed=9).to_record() == make_survival(seed=9).to_record()
