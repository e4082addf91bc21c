"""Moral Machines: logistic choice model, fixes, validation, text, posterior, EIG."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from silicolab.envs.boxinggym.base import InvalidDesign
from silicolab.envs.boxinggym.eig import nmc_eig
from silicolab.envs.boxinggym.moral_machines import features, logit_save_group1, make_moral_machines
from silicolab.llm import load_model

SCENARIO = "Group 1: [boy, dog]\nGroup 2: [old_man, female_doctor]\nIntervention: swerve"
THETA = dict(b_intervention=-0.3, b_group=0.4, b_gender=-0.3, b_fitness=0.4, b_social=0.1,
             b_age=0.1, b_count=0.7, b_species=0.6, intercept=0.2)  # fmt: skip


def test_features_and_logit_by_hand() -> None:
    design = (("boy", "dog"), ("old_man", "female_doctor"), "swerve")
    f = features(design, "fixed")
    assert f == {"count": -1.0, "gender": 1.0, "age": 2.0, "social": -1.0, "fitness": 0.0,
                 "species": -2.0, "iv": 1.0}  # fmt: skip
    assert features(design, "faithful")["age"] == 1.0  # elderly age 0 upstream
    th = {k: np.array([v]) for k, v in THETA.items()}
    want = 0.2 + 0.7 * -1 + 0.4 - 0.3 * 1 + 0.1 * 2 + 0.1 * -1 + 0.6 * -2 - 0.3
    assert logit_save_group1(th, design, "fixed")[0] == pytest.approx(want)
    env = make_moral_machines(seed=0)
    assert env.log_likelihood(np.array([1]), th, design)[0] == pytest.approx(np.log(expit(want)))
    assert env.log_likelihood(np.array([2]), th, design)[0] == pytest.approx(np.log(expit(-want)))
    y = env.simulate(
        {k: np.repeat(v, 40_000) for k, v in th.items()}, design, np.random.default_rng(0)
    )
    assert abs((y == 1).mean() - expit(want)) < 0.01


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("save the kids", "Invalid input format. Please provide 'Group 1', 'Group 2', and "
         "'Intervention' in the correct format."),
        ("Group 1: [boy, elderly_man]\nGroup 2: [cat]\nIntervention: stay",
         "Invalid character: elderly_man. Please use characters from the following list: "),
        ("Group 1: [boy]\nGroup 2: [cat]\nIntervention: brake",
         "Invalid intervention. Please provide either 'swerve' or 'stay'."),
    ],
)  # fmt: skip
def test_validation(text: str, message: str) -> None:
    with pytest.raises(InvalidDesign) as err:
        make_moral_machines(seed=0).validate(text)
    assert err.value.message.startswith(message)


def test_prompt_example_fidelity_and_prior_only() -> None:
    assert "old_man, old_woman" in make_moral_machines(seed=0).describe()
    assert "elderly_man" in make_moral_machines(seed=0, fidelity="faithful").describe()
    with pytest.raises(ValueError):
        make_moral_machines(prior=False)


def test_template_and_llm_paths() -> None:
    env = make_moral_machines(seed=1)
    text = env.run(SCENARIO)
    choice = env.data[0][1]
    assert text.startswith(f"The participant responded with: I choose to save group {choice}")
    assert env.to_record()["utterances"][0]["source"] == "template"
    llm = load_model(
        "scripted", fn=lambda r: "I choose to save the children because they are young."
    )
    env2 = make_moral_machines(seed=1, llm=llm)
    assert "children" in env2.run(SCENARIO)
    assert env2.data[0][1] == choice  # the latent choice does not depend on the text source
    assert env2.to_record()["utterances"][0]["source"] == "llm"


def test_questions_parsing_and_scoring() -> None:
    env = make_moral_machines(seed=2)
    qs = env.goal.questions(10, np.random.default_rng(0))
    assert [q.truth for q in qs].count(1) == 5
    assert env.goal.parse_answer("2") == 2 and env.goal.parse_answer("group 1") == 1
    assert env.goal.parse_answer("none") is None
    score = env.goal.score([1] * 10, qs)
    assert score.raw == 0.5 and score.standardized == pytest.approx(
        (0.424 - 0.5) / 0.494190246767376
    )


def test_posterior_fixed_vs_faithful_count_term() -> None:
    env = make_moral_machines(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(10):
        env.run(env.format_design(env.sample_design(rng)))
    draws = env.posterior_sample(5000, rng)
    big = env.prior_sample(300_000, rng)
    lw = env.data_log_likelihood(big)
    w = np.exp(lw - lw.max())
    w /= w.sum()
    for key in ("b_count", "intercept"):
        ref = float((w * big[key]).sum())
        assert abs(draws[key].mean() - ref) < 0.03


def test_nmc_eig_fixed_seed_consistency() -> None:
    env = make_moral_machines(seed=1)
    rng = np.random.default_rng(0)
    designs = [env.sample_design(rng) for _ in range(3)]
    a = nmc_eig(env, designs, rng=np.random.default_rng(1))
    b = nmc_eig(env, designs, rng=np.random.default_rng(2))
    assert np.all(np.isfinite(a)) and np.all(a >= 0) and np.allclose(a, b, atol=0.02)
    assert np.all(np.isfinite(nmc_eig(make_moral_machines(seed=1, fidelity="faithful"), designs)))
