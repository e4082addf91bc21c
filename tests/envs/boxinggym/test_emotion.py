"""Emotions from outcomes: latent ratings, ordinal likelihood, validation, text, EIG."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from silicolab.envs.boxinggym.base import InvalidDesign
from silicolab.envs.boxinggym.eig import nmc_eig
from silicolab.envs.boxinggym.emotion import (
    EMOTIONS,
    WheelDesign,
    latent_mean,
    make_emotion,
    ordinal_log_prob,
)
from silicolab.llm import Request, load_model

SPIN = "prizes: [10, 20, 30],\nprobs: [0.2, 0.3, 0.5],\nwin: 2"


def test_latent_mean_formula_and_rating_distribution() -> None:
    env = make_emotion(seed=1)
    design = env.validate(SPIN)
    assert design.value == 30.0
    th = {k: np.asarray(v) for k, v in env.theta.items()}
    pe = 30 - (0.2 * 10 + 0.3 * 20 + 0.5 * 30)
    want = th["alpha"] + th["b_win"] * 30 + th["b_pe"] * pe + th["b_abs"] * abs(pe)
    assert np.allclose(latent_mean(th, design), want)
    big = {k: np.repeat(v, 50_000, axis=0) for k, v in th.items()}
    y = env.simulate(big, design, np.random.default_rng(0))
    assert y.min() >= 1 and y.max() <= 9
    mu, sd = want[0, 0], th["sigma"][0, 0]
    p_one = stats.norm.cdf((2 - mu) / sd)  # rating 1 <=> z < 2
    assert abs((y[:, 0] == 1).mean() - p_one) < 0.01


def test_ordinal_log_prob_matches_scipy_and_sums_to_one() -> None:
    mean, sd = np.array(4.3), np.array(1.7)
    got = ordinal_log_prob(np.array(5), mean, sd)
    assert got == pytest.approx(np.log(stats.norm.cdf(6, 4.3, 1.7) - stats.norm.cdf(5, 4.3, 1.7)))
    total = np.exp(ordinal_log_prob(np.arange(1, 10), mean, sd)).sum()
    assert total == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("fidelity", "text", "message"),
    [
        ("fixed", "prizes 10 20", "Invalid input format. Please provide values for 'prizes', "
         "'probs', and 'win' in the correct format."),
        ("fixed", "prizes: [1, 2, 3], probs: [0.5, 0.6, 0.1], win: 1",
         "Probabilities should sum to 1."),
        ("fixed", "prizes: [1, 2, 3], probs: [0.2, 0.3, 0.5], win: 3",
         "Invalid value for 'win'. Please provide 0, 1, or 2."),
        ("faithful", "prizes: [1, 2, 3], probs: [0.7, 0.2, 0.1], win: 0",
         "Probabilities should sum to 1."),  # 0.7 + 0.2 + 0.1 != 1 in floats
    ],
)  # fmt: skip
def test_validation(fidelity: str, text: str, message: str) -> None:
    env = make_emotion(seed=0, fidelity=fidelity)
    with pytest.raises(InvalidDesign) as err:
        env.validate(text)
    assert err.value.message == message


def test_fixed_accepts_rounding_and_faithful_uses_win_index() -> None:
    fixed = make_emotion(seed=0)
    fixed.validate("prizes: [1, 2, 3], probs: [0.7, 0.2, 0.1], win: 0")
    rng = np.random.default_rng(0)
    d_fixed = fixed.sample_design(rng)
    assert d_fixed.value == d_fixed.prizes[d_fixed.win]
    faithful = make_emotion(seed=0, fidelity="faithful")
    d_faith = faithful.sample_design(np.random.default_rng(0))
    assert d_faith.value == float(d_faith.win)
    with pytest.raises(ValueError):
        make_emotion(prior=False)


def test_template_path_and_questions() -> None:
    env = make_emotion(seed=2)
    text = env.run(SPIN)
    assert text.startswith("The participant responded with: The player might be feeling")
    assert not any(ch.isdigit() for ch in text)
    assert env.to_record()["utterances"][0]["source"] == "template"
    assert len(env.data[0][1]) == 8
    qs = env.goal.questions(10, np.random.default_rng(0))
    answer = "\n".join(f"{e.capitalize()}: 5/9" for e in EMOTIONS)
    assert env.goal.parse_answer(answer) == [5] * 8
    assert env.goal.parse_answer("Happiness: 5/9") is None
    score = env.goal.score([[5] * 8] * 10, qs)
    want = np.mean([np.abs(np.array(q.truth) - 5).mean() for q in qs])
    assert score.raw == pytest.approx(want)
    assert score.standardized == pytest.approx((want - 1.58508525) / 0.7237143937677741)


def test_llm_path_with_scripted_model() -> None:
    seen = []

    def fn(request: Request) -> str:
        seen.append(request)
        return "The player might be feeling thrilled because the wheel paid out well."

    llm = load_model("scripted", fn=fn)
    env = make_emotion(seed=2, llm=llm)
    text = env.run(SPIN)
    assert "thrilled" in text
    record = env.to_record()
    assert record["utterances"][0]["source"] == "llm" and record["participant"].startswith(
        "scripted"
    )
    assert "Happiness:" in seen[0].messages[-1]["content"]
    again = make_emotion(seed=2, llm=llm)
    again.run(SPIN)
    assert seen[1].sample_index == seen[0].sample_index  # cache-friendly identity


def test_posterior_per_emotion_is_sane() -> None:
    env = make_emotion(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(10):
        env.run(env.format_design(env.sample_design(rng)))
    draws = env.posterior_sample(4000, rng)
    # compare with brute-force joint prior IS for one emotion (independent computation)
    big = env.prior_sample(200_000, rng)
    lw = np.zeros(200_000)
    for design, y in env.data:
        lw += ordinal_log_prob(np.asarray(y)[0], latent_mean(big, design)[:, 0], big["sigma"][:, 0])
    w = np.exp(lw - lw.max())
    w /= w.sum()
    ref = float((w * big["alpha"][:, 0]).sum())
    assert abs(draws["alpha"][:, 0].mean() - ref) < 0.02


def test_nmc_eig_fixed_and_faithful() -> None:
    env = make_emotion(seed=1)
    designs = [env.sample_design(np.random.default_rng(i)) for i in range(2)]
    a = nmc_eig(env, designs, n_outer=400, n_inner=400, rng=np.random.default_rng(1))
    b = nmc_eig(env, designs, n_outer=400, n_inner=400, rng=np.random.default_rng(2))
    assert np.all(np.isfinite(a)) and np.all(a >= 0) and np.allclose(a, b, atol=0.3)
    faithful = make_emotion(seed=1, fidelity="faithful")
    assert np.all(np.isfinite(nmc_eig(faithful, designs)))
    assert isinstance(designs[0], WheelDesign)


@pytest.mark.parametrize("fidelity", ["fixed", "faithful"])
def test_random_designs_pass_validation_as_text(fidelity: str) -> None:
    """Random designs round-trip through text and the validator (the faithful validator tests
    ``sum(p) != 1`` exactly, which naive rounding to 2 decimals fails about a third of the time)."""
    env = make_emotion(seed=0, fidelity=fidelity)
    rng = np.random.default_rng(7)
    for _ in range(300):
        design = env.sample_design(rng)
        parsed = env.validate(env.format_design(design))
        assert parsed.probs == design.probs
        assert sum(design.probs) == 1
