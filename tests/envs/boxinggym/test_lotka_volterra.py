"""Predator–prey: ODE accuracy, deterministic outcomes, validation, posterior basics.

The exact posterior, the integrator against odeint and the EIG: test_lotka_volterra_eig.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from silicolab.envs.boxinggym.base import InvalidDesign
from silicolab.envs.boxinggym.eig import nmc_eig
from silicolab.envs.boxinggym.lotka_volterra import (
    integrate,
    make_lotka_volterra,
    observe,
    true_state,
)


def test_integrator_matches_odeint_and_conserved_quantity() -> None:
    env = make_lotka_volterra(seed=2)
    params = {k: float(v[0]) for k, v in env.theta.items()}
    out = integrate(env.theta, [3.0, 20.0, 50.0])[0]
    for i, t in enumerate([3.0, 20.0, 50.0]):
        assert np.allclose(out[i], true_state(params, t), rtol=1e-6)
    # V = δx − γ ln x + βy − α ln y is invariant along trajectories
    a, b, g, d = (params[k] for k in ("alpha", "beta", "gamma", "delta"))

    def invariant(x: float, y: float) -> float:
        return d * x - g * np.log(x) + b * y - a * np.log(y)

    assert invariant(*out[2]) == pytest.approx(invariant(40.0, 9.0), rel=1e-6)


def test_outcomes_are_deterministic_rounded_and_likelihood_indicator() -> None:
    env = make_lotka_volterra(seed=1)
    text = env.run("12.5")
    assert text == env.run("12.5")
    y = np.array(env.data[0][1])
    assert np.allclose(y, observe(true_state({k: v[0] for k, v in env.theta.items()}, 12.5)))
    assert env.log_likelihood(y[None], env.theta, 12.5)[0] == 0.0
    assert env.log_likelihood(y[None] + 1, env.theta, 12.5)[0] == -np.inf


@pytest.mark.parametrize(
    ("text", "message"),
    [("soon", "Input must be a float."), ("-1", "Input must be between 0 and 50.")],
)
def test_validation(text: str, message: str) -> None:
    with pytest.raises(InvalidDesign) as err:
        make_lotka_volterra(seed=0).run(text)
    assert err.value.message == message


def test_questions_parsing_metric_and_novice_format() -> None:
    env = make_lotka_volterra(seed=0)
    qs = env.goal.questions(10, np.random.default_rng(0))
    assert all(0 <= q.point <= 4 and len(q.truth) == 2 for q in qs)
    assert env.goal.parse_answer("[2, 3]") == [2.0, 3.0]
    assert env.goal.parse_answer("5") is None
    score = env.goal.score([[q.truth[0] + 2, q.truth[1]] for q in qs], qs)
    assert score.raw == pytest.approx(1.0)
    assert score.standardized == pytest.approx((1.0 - 8.327445247142364) / 17.548285564117467)
    assert "single number" not in env.goal.naive_system_message(True)
    faithful = make_lotka_volterra(seed=0, fidelity="faithful")
    assert "single number" in faithful.goal.naive_system_message(True)
    assert "floating" in faithful.goal.system_message(False)


def test_posterior_reproduces_data_and_eig_only_in_fixed_mode() -> None:
    env = make_lotka_volterra(seed=3)
    env.run("4")
    env.run("9")
    draws = env.posterior_sample(500, np.random.default_rng(0))
    assert np.all(env.data_log_likelihood(draws) == 0.0)
    prior = env.prior_sample(500, np.random.default_rng(1))
    assert draws["beta"].std() < 0.5 * prior["beta"].std()
    assert env.supports_eig and np.isfinite(nmc_eig(env, [5.0], n_outer=200, n_inner=200)[0])
    faithful = make_lotka_volterra(seed=3, fidelity="faithful")
    faithful.run("4")
    assert not faithful.supports_eig
    with pytest.raises(NotImplementedError):
        nmc_eig(faithful, [5.0])
    assert env.exact_eig(5.0) is None
    assert make_lotka_volterra(seed=4).to_record() == make_lotka_volterra(seed=4).to_record()
