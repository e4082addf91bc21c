"""Death process: binomial model, validation, questions, grid posterior, exact vs NMC EIG."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from silicolab.envs import make
from silicolab.envs.boxinggym.base import InvalidDesign, Question
from silicolab.envs.boxinggym.death_process import (
    averaged_log_likelihood,
    infected_probability,
    make_death_process,
)
from silicolab.envs.boxinggym.eig import nmc_eig


def test_registry_and_defaults() -> None:
    env = make("boxinggym/death_process", seed=1)
    assert env.N == 50 and env.goal.name == "direct"
    assert 0.0 < env.theta["theta"][0] < 2.0
    assert "50 individuals" in env.describe()


def test_prior_is_the_truncated_normal() -> None:
    env = make_death_process(seed=0)
    draws = env.prior_sample(200_000, np.random.default_rng(0))["theta"]
    ref = stats.truncnorm(-1.0, 1.0, loc=1.0, scale=1.0)
    assert draws.min() >= 0 and draws.max() <= 2
    assert draws.mean() == pytest.approx(ref.mean(), abs=0.005)
    assert draws.std() == pytest.approx(ref.std(), abs=0.005)


def test_simulated_counts_match_binomial_moments() -> None:
    env = make_death_process(seed=0)
    theta = {"theta": np.full(100_000, 0.8)}
    y = env.simulate(theta, 0.7, np.random.default_rng(1))
    eta = 1 - np.exp(-0.8 * 0.7)
    assert y.mean() == pytest.approx(50 * eta, rel=0.01)
    assert y.var() == pytest.approx(50 * eta * (1 - eta), rel=0.03)


def test_log_likelihood_hand_values() -> None:
    env = make_death_process(seed=0)
    theta = {"theta": np.array([0.5, 1.2])}
    got = env.log_likelihood(np.array([10, 30]), theta, 0.9)
    want = [
        stats.binom.logpmf(10, 50, 1 - np.exp(-0.45)),
        stats.binom.logpmf(30, 50, 1 - np.exp(-1.08)),
    ]
    np.testing.assert_allclose(got, want)
    cross = env.cross_log_likelihood(np.array([10, 30]), theta, 0.9)
    np.testing.assert_allclose(np.diag(cross), want)
    # the published per-individual average: (y log eta + (N - y) log(1 - eta)) / N
    eta = 1 - np.exp(-0.45)
    want_avg = (10 * np.log(eta) + 40 * np.log(1 - eta)) / 50
    assert averaged_log_likelihood(10, 0.5, 0.9, 50) == pytest.approx(want_avg)
    faithful = make_death_process(fidelity="faithful")
    out = faithful.faithful_log_likelihood(
        np.array([10]), {"theta": np.array([0.5])}, 0.9, inner=True
    )
    assert out[0] == pytest.approx(want_avg)


@pytest.mark.parametrize(
    ("text", "fidelity", "message"),
    [
        ("abc", "fixed", "Error: The input must be a float."),
        ("0", "fixed", "Error: The input must be greater than 0."),
        ("-1", "faithful", "Error: The input must be greater than 0."),
        ("2", "fixed", "Error: The input must be less than 2."),
        ("2.5", "faithful", "Error: The input must be less than the 2."),
        ("0.1(time to observe)", "faithful", "Error: The input must be a float."),
        ("nan", "faithful", "Error: The input must be a float."),
    ],
)
def test_validation_messages(text: str, fidelity: str, message: str) -> None:
    env = make_death_process(fidelity=fidelity)
    with pytest.raises(InvalidDesign) as info:
        env.validate(text)
    assert info.value.message == message
    assert env.data == []


def test_fixed_mode_reads_the_prompt_example() -> None:
    env = make_death_process()
    assert env.validate("0.1(time to observe)") == pytest.approx(0.1)
    assert env.validate("[1.5]") == pytest.approx(1.5)
    out = env.run("0.5")
    assert out.isdigit() and env.data == [(0.5, int(out))]


def test_questions_fixed_show_time_and_faithful_overwrite() -> None:
    fixed = make_death_process(seed=2)
    qs = fixed.goal.questions(5, np.random.default_rng(0))
    for q in qs:
        assert 0.001 <= q.point <= 2 and f"{q.point:g}" in q.text
        assert 0 <= q.truth <= 50
    faithful = make_death_process(seed=2, fidelity="faithful")
    assert {q.text for q in faithful.goal.questions(3, np.random.default_rng(0))} == {
        " Respond with a positive integer."
    }
    inf = make_death_process(seed=2, fidelity="faithful", goal="infection")
    (q,) = inf.goal.questions(1, np.random.default_rng(0))
    assert q.text == " Respond with a positive real number."
    assert q.truth == pytest.approx(inf.theta["theta"][0])


def test_parsing_and_scores() -> None:
    env = make_death_process()
    goal = env.goal
    assert goal.parse_answer("12.7") == 12
    assert goal.parse_answer("<answer>about 30</answer>") == 30
    assert make_death_process(fidelity="faithful").goal.parse_answer("about 30") is None
    qs = [Question("", 10, 0.5), Question("", 20, 1.0)]
    score = goal.score([12, None], qs)
    assert score.raw == pytest.approx(4.0) and score.n == 1 and score.n_missing == 1
    assert score.standardized == pytest.approx((4.0 - 222.2998) / 189.76853880440774)
    assert (goal.norm_mu, goal.norm_sigma) == (222.2998, 189.76853880440774)
    inf = make_death_process(goal="infection").goal
    assert (inf.norm_mu, inf.norm_sigma, inf.num_evals) == (
        0.2902838787350395,
        1.756991075450312,
        1,
    )
    assert inf.parse_answer("theta = 0.7") == pytest.approx(0.7)


def _brute_posterior_mean(data: list[tuple[float, int]]) -> float:
    def density(t: float) -> float:
        like = np.prod([stats.binom.pmf(y, 50, 1 - np.exp(-t * x)) for x, y in data])
        return stats.truncnorm.pdf(t, -1, 1, loc=1, scale=1) * like

    z = integrate.quad(density, 0, 2, limit=200, points=[0.5, 1.0])[0]
    return integrate.quad(lambda t: t * density(t), 0, 2, limit=200, points=[0.5, 1.0])[0] / z


def test_grid_posterior_matches_quadrature() -> None:
    env = make_death_process(seed=3)
    data = [(0.5, 13), (1.5, 35), (0.2, 4)]
    samples = env.posterior_sample(200_000, np.random.default_rng(0), data=data)["theta"]
    assert samples.mean() == pytest.approx(_brute_posterior_mean(data), abs=0.003)
    goal = env.goal
    q = Question("", 0, 1.0)
    want = 50 * np.mean(infected_probability(samples, 1.0))
    assert goal.bayes_answer(q, {"theta": samples}, np.random.default_rng(0)) == pytest.approx(want)


def test_faithful_infection_posterior_ignores_data() -> None:
    env = make_death_process(goal="infection", fidelity="faithful", seed=3)
    data = [(1.5, 50), (1.9, 50)]
    post = env.posterior_sample(100_000, np.random.default_rng(0), data=data)["theta"]
    assert post.mean() == pytest.approx(env.prior.mean(), abs=0.01)
    fixed = make_death_process(goal="infection", seed=3)
    moved = fixed.posterior_sample(100_000, np.random.default_rng(0), data=data)["theta"]
    assert moved.mean() > env.prior.mean() + 0.2


def test_exact_eig_matches_direct_monte_carlo() -> None:
    env = make_death_process(seed=3)
    data = [(0.5, 13), (1.5, 35)]
    rng = np.random.default_rng(7)
    theta = env.posterior_sample(200_000, rng, data=data)["theta"]
    y = rng.binomial(50, infected_probability(theta, 0.8))
    pool = env.posterior_sample(20_000, rng, data=data)["theta"]
    marginal = stats.binom.pmf(np.arange(51)[:, None], 50, infected_probability(pool, 0.8)).mean(1)
    mc = np.mean(stats.binom.logpmf(y, 50, infected_probability(theta, 0.8)) - np.log(marginal[y]))
    assert env.exact_eig(0.8, data=data) == pytest.approx(mc, rel=0.02)


@pytest.mark.parametrize("design", [0.3, 1.0, 1.8])
def test_nmc_eig_close_to_exact(design: float) -> None:
    env = make_death_process(seed=3)
    env.data = [(0.5, 13), (1.5, 35)]
    exact = env.exact_eig(design)
    est = nmc_eig(env, [design], n_outer=20_000, n_inner=1000, rng=np.random.default_rng(0))[0]
    assert est == pytest.approx(exact, rel=0.05)


def test_faithful_pseudo_eig_is_much_smaller() -> None:
    env = make_death_process(seed=3, fidelity="faithful")
    eig = nmc_eig(env, [1.0], rng=np.random.default_rng(0))[0]
    assert 0 < eig < 0.2 * env.exact_eig(1.0)
