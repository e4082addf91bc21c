"""IRT: fixed response matrix, validation, held-out pairs, importance posterior, EIG."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

from silicolab.envs import make
from silicolab.envs.boxinggym.base import BoxingEnv, InvalidDesign, Question
from silicolab.envs.boxinggym.eig import nmc_eig
from silicolab.envs.boxinggym.irt import RESTRICTED, cell_probability, correct_probability, make_irt


def _allowed(env, k: int) -> list[tuple[int, int]]:
    cells = [(s, q) for s in range(6) for q in range(6) if (s, q) not in env.restricted]
    return cells[:k]


def test_registry_matrix_is_fixed() -> None:
    env = make("boxinggym/irt", seed=2)
    assert env.theta["r"].shape == (1, 6, 6) and env.theta["known"].all()
    s, q = _allowed(env, 1)[0]
    outs = {env.run(f"[{s}, {q}]") for _ in range(4)}
    assert outs == {str(int(env.theta["r"][0, s, q]))}
    assert len(env.data) == 4


@pytest.mark.parametrize("mode", ["1pl", "2pl", "3pl"])
def test_probability_formulas(mode: str) -> None:
    env = make_irt(mode=mode, seed=0)
    th = env.prior_sample(3, np.random.default_rng(0))
    p = correct_probability(th, mode)
    a, b, g = th["alpha"][1, 2], th["beta"][1, 4], th["gamma"][1, 4]
    want = {"1pl": special.expit(a - b), "2pl": special.expit(g * (a - b))}
    if mode == "3pl":
        c = th["c"][1, 4]
        want["3pl"] = c + (1 - c) * special.expit(g * (a - b))
    assert p[1, 2, 4] == pytest.approx(want[mode])
    np.testing.assert_allclose(cell_probability(th, mode, 2, 4), p[:, 2, 4])


def test_matrix_frequencies_and_likelihood() -> None:
    env = make_irt(seed=0)
    th = env.prior_sample(200_000, np.random.default_rng(1))
    p = correct_probability(th, "2pl")
    assert th["r"][:, 3, 1].mean() == pytest.approx(p[:, 3, 1].mean(), abs=0.005)
    y = env.simulate(th, (3, 1), np.random.default_rng(2))
    assert y.mean() == pytest.approx(0.5, abs=0.005)
    small = {k: v[:2] for k, v in th.items()}
    got = env.log_likelihood(np.array([1, 0]), small, (3, 1))
    want = stats.bernoulli.logpmf([1, 0], p[:2, 3, 1])
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(
        np.diag(env.cross_log_likelihood(np.array([1, 0]), small, (3, 1))), want
    )
    known = dict(small, known=np.ones_like(small["known"]))
    r = known["r"][:, 3, 1]
    np.testing.assert_array_equal(env.log_likelihood(r, known, (3, 1)), [0.0, 0.0])
    assert np.isneginf(env.log_likelihood(1 - r, known, (3, 1))).all()


def test_validation_fixed_and_faithful() -> None:
    env = make_irt(seed=1)
    held = env.goal.pairs[0]
    for text in ["[1]", "[a, 2]", "1, 2, 3"]:
        with pytest.raises(InvalidDesign, match="must be a list of two integers"):
            env.validate(text)
    with pytest.raises(InvalidDesign, match="between 0 and 5"):
        env.validate("[6, 0]")
    with pytest.raises(InvalidDesign, match="between 0 and 5"):
        env.validate("[-1, 0]")
    with pytest.raises(InvalidDesign) as info:
        env.validate(f"[{held[0]}, {held[1]}]")
    assert info.value.message == RESTRICTED
    faithful = make_irt(seed=1, fidelity="faithful")
    with pytest.raises(InvalidDesign) as info:
        faithful.validate("[7, 0]")
    assert info.value.message == "index 7 is out of bounds for axis 0 with size 6"
    s, q = next(p for p in _allowed(faithful, 36) if p[0] >= 1)
    assert faithful.validate(f"[{s - 6}, {q}]") == (s, q)  # negative ids wrap around


def test_eval_pairs_and_questions() -> None:
    env = make_irt(seed=3)
    pairs = env.goal.pairs
    labels = [int(env.theta["r"][0][p]) for p in pairs]
    assert len(pairs) == 10 and len(set(pairs)) == 10
    if sum(labels) >= 5 and 10 - sum(labels) >= 5:
        assert labels == [1] * 5 + [0] * 5
    qs = env.goal.questions(10, np.random.default_rng(0))
    assert [q.point for q in qs] == pairs and [q.truth for q in qs] == labels
    assert qs[0].text.startswith(f"Will student {pairs[0][0]} answer question {pairs[0][1]}")
    for _ in range(50):
        assert env.sample_design(np.random.default_rng(_)) not in set(pairs)
    env.reset(seed=4)
    assert env.seed == 4 and len(env.goal.pairs) == 10
    assert env.restricted == set(env.goal.pairs)
    faithful = make_irt(seed=3, fidelity="faithful")
    f_labels = [int(faithful.theta["r"][0][p]) for p in faithful.goal.pairs]
    assert f_labels == sorted(f_labels, reverse=True)


def test_parsing_and_score() -> None:
    goal = make_irt().goal
    assert goal.parse_answer("1") == 1
    assert goal.parse_answer("I think 0") == 0
    assert goal.parse_answer("unsure") is None
    qs = [Question("", 1, (0, 0)), Question("", 0, (0, 1)), Question("", 1, (0, 2))]
    score = goal.score([1, 1, None], qs)
    assert score.raw == pytest.approx(2 / 3) and score.n == 3 and score.n_missing == 1
    assert score.standardized == pytest.approx((2 / 3 - 0.5) / 0.5)
    assert (goal.norm_mu, goal.norm_sigma, goal.kind) == (0.5, 0.5, "error")


def _brute_predictive(env, data, cells) -> np.ndarray:
    prior = env.prior_sample(600_000, np.random.default_rng(5))
    seen = dict(((tuple(d), y) for d, y in data))
    log_w = sum(
        stats.bernoulli.logpmf(y, cell_probability(prior, "2pl", *d)) for d, y in seen.items()
    )
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    return np.array([w @ cell_probability(prior, "2pl", *c) for c in cells])


def test_posterior_predictive_matches_brute_force() -> None:
    env = make_irt(seed=5)
    cells = _allowed(env, 8)
    data = [(c, int(env.theta["r"][0][c])) for c in cells[:6]]
    data.append((cells[0], data[0][1]))  # a repeat carries no information in fixed mode
    post = env.posterior_sample(40_000, np.random.default_rng(0), data=data)
    for c, y in data:
        assert (post["r"][:, c[0], c[1]] == y).all() and post["known"][:, c[0], c[1]].all()
    probe = [cells[6], cells[7], (cells[1][0], cells[6][1])]
    got = np.array([cell_probability(post, "2pl", *c).mean() for c in probe])
    np.testing.assert_allclose(got, _brute_predictive(env, data, probe), atol=0.02)
    q = Question("", 1, probe[0])
    assert env.goal.bayes_answer(q, post, np.random.default_rng(0)) == int(got[0] >= 0.5)


def test_eig_repeats_fixed_vs_faithful_and_accuracy() -> None:
    env = make_irt(seed=5)
    cells = _allowed(env, 4)
    env.data = [(c, int(env.theta["r"][0][c])) for c in cells[:3]]
    new = cells[3]
    eig = nmc_eig(env, [cells[0], new], n_outer=20_000, n_inner=1000, rng=np.random.default_rng(0))
    assert eig[0] == 0.0
    post = env.posterior_sample(200_000, np.random.default_rng(1))
    p = cell_probability(post, "2pl", *new)
    h = stats.bernoulli.entropy
    assert eig[1] == pytest.approx(h(p.mean()) - h(p).mean(), rel=0.05)
    faithful = make_irt(seed=5, fidelity="faithful")
    faithful.data = list(env.data)
    assert nmc_eig(faithful, [cells[0]], rng=np.random.default_rng(0))[0] > 0.0


def test_determinism_under_seed() -> None:
    a, b = make_irt(seed=8), make_irt(seed=8)
    np.testing.assert_array_equal(a.theta["r"], b.theta["r"])
    assert a.goal.pairs == b.goal.pairs
    pa = a.posterior_sample(100, np.random.default_rng(0), data=[((0, 0), 1)])
    pb = b.posterior_sample(100, np.random.default_rng(0), data=[((0, 0), 1)])
    np.testing.assert_array_equal(pa["alpha"], pb["alpha"])


@pytest.mark.parametrize("mode", ["1pl", "2pl", "3pl"])
def test_cross_likelihood_matches_the_generic_per_pair_computation(mode: str) -> None:
    env = make_irt(mode=mode, seed=2)
    theta = env.prior_sample(300, np.random.default_rng(3))
    theta["known"][::4, 2, 5] = True  # some samples have the entry fixed
    y = env.simulate(theta, (2, 5), np.random.default_rng(4))[:40]
    fast = env.cross_log_likelihood(y, theta, (2, 5))
    generic = BoxingEnv.cross_log_likelihood(env, y, theta, (2, 5))
    np.testing.assert_array_equal(np.isneginf(fast), np.isneginf(generic))
    finite = np.isfinite(generic)
    np.testing.assert_allclose(fast[finite], generic[finite], rtol=1e-12, atol=1e-14)
    # a non-binary outcome takes the broadcast Bernoulli path (still the generic answer)
    odd = np.array([0.5, 1.0])
    np.testing.assert_allclose(
        env.cross_log_likelihood(odd, theta, (2, 5)),
        BoxingEnv.cross_log_likelihood(env, odd, theta, (2, 5)),
    )
