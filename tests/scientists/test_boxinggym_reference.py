"""The reference Bayesian scientist and the random designer on BoxingGym environments."""

from __future__ import annotations

import numpy as np
import pytest
from tests.scientists.boxinggym_episodes import episode

from silicolab.core.errors import InputError
from silicolab.envs import make
from silicolab.llm import load_model
from silicolab.llm.base import run_sync
from silicolab.scientists.boxinggym import (
    BayesianScientist,
    RandomDesigner,
    make_env,
    make_scientist,
)
from silicolab.scientists.boxinggym.reference import posterior_summary

#: Small Monte Carlo sizes: here EIG is only plumbing, the ranking is what matters.
SMALL = {"n_candidates": 30, "n_outer": 200, "n_inner": 200, "n_posterior": 500}
STEPS = 4


def _regret(env: str, agent: str, seed: int) -> float:
    options = SMALL if agent == "reference" else {"n_posterior": 500}
    record = episode(
        env,
        make_scientist(agent, seed=seed, **options),
        seed=seed,
        steps=STEPS,
        checkpoints=(0, STEPS),
        regret_random=30,
        regret_nmc=(200, 200),
    )
    assert record.regret is not None and len(record.regret) == STEPS
    assert not record.skipped_steps and record.usage == {"scientist": {}}
    return float(record.regret_mean)


@pytest.mark.parametrize("env", ["location_finding", "death_process"])
def test_reference_beats_random_designs_on_ei_regret(env: str) -> None:
    reference = np.mean([_regret(env, "reference", seed) for seed in (1, 2)])
    random = np.mean([_regret(env, "random", seed) for seed in (1, 2)])
    assert reference < random


def test_reference_proposes_the_best_candidate_and_answers_from_the_posterior() -> None:
    from silicolab.envs.boxinggym.eig import nmc_eig

    env = make_env("death_process", goal="infection", prior=True, fidelity="fixed", seed=4)
    scientist = BayesianScientist(seed=4, **SMALL)
    record = episode(
        "death_process",
        scientist,
        goal="infection",
        seed=4,
        steps=6,
        checkpoints=(0, 6),
        regret=False,
    )
    assert [s.n for s in record.scores] == [1, 1]  # a parameter goal: one question
    first = record.score_at(0)
    assert first is not None and first.predictions[0] == pytest.approx(env.prior.mean(), abs=0.1)
    # six informative observations move the estimate of theta towards the truth
    truth = record.truth["theta"]["theta"]
    final = record.score_at(6)
    assert final is not None
    assert abs(final.predictions[0] - truth) < abs(first.predictions[0] - truth) + 0.05
    # greedy: the chosen first design has the highest EIG among fresh candidates (roughly)
    chosen = record.outcomes[0].parsed
    grid = [0.2, 0.6, 1.0, 1.4, 1.8]
    eig = nmc_eig(env, [*grid, chosen], data=[], n_outer=500, n_inner=500)
    assert eig[-1] >= eig[:-1].max() - 0.05


def test_random_designer_prior_answers_and_explanations() -> None:
    record = episode(
        "death_process",
        RandomDesigner(answer="prior", seed=1),
        seed=1,
        steps=2,
        checkpoints=(0, 2),
        regret=False,
        communicate=True,
        novice=load_model("scripted", fn=lambda r: "<answer>7</answer>"),
    )
    assert record.score_at(0).predictions == record.score_at(2).predictions  # type: ignore[union-attr]
    assert record.explanation is not None and "posterior mean" in record.explanation
    assert not record.explanation_truncated and record.explanation_words <= 200
    assert record.novice is not None and record.novice.predictions == [7] * 10
    assert record.novice_system.endswith(record.explanation)
    with pytest.raises(InputError):
        RandomDesigner(answer="median")  # type: ignore[arg-type]


def test_predator_prey_eig_only_in_fixed_mode() -> None:
    """The published code has no predator-prey EIG (faithful: random designs, no regret);
    fixed fidelity designs by EIG and reports the regret."""
    record = episode(
        "lotka_volterra",
        BayesianScientist(seed=1, **SMALL),
        seed=1,
        steps=2,
        checkpoints=(0, 2),
        fidelity="faithful",
    )
    assert len(record.outcomes) == 2 and record.regret is None
    assert record.regret_error.startswith("NotImplementedError")
    record = episode(
        "lotka_volterra", BayesianScientist(seed=1, **SMALL), seed=1, steps=2, checkpoints=(0, 2)
    )
    assert record.regret is not None and len(record.regret) == 2


def test_predator_prey_seed_that_diverges_upstream_runs_in_fixed_mode() -> None:
    """Seed 12 draws beta < 0 under the published prior (the populations blow up and no
    parameter reproduces odeint's output); fixed fidelity's positive-rate prior does not."""
    assert make("boxinggym/lotka_volterra", seed=12, fidelity="faithful").theta["beta"][0] < 0
    scientist = BayesianScientist(seed=1, **SMALL)
    record = episode("lotka_volterra", scientist, seed=12, steps=4, checkpoints=(0, 4))
    assert scientist.posterior_failures == 0 and record.regret is not None
    assert all(d.raw.startswith("EIG estimate") for d in record.designs)


def test_scientist_falls_back_to_a_random_design_without_a_posterior() -> None:
    env = make("boxinggym/lotka_volterra", seed=1)
    scientist = BayesianScientist(seed=1, **SMALL)
    run_sync(scientist.astart(env))
    env.data.append((1.0, (5, 5)))  # impossible: no trajectory reaches (5, 5) at t = 1
    proposal = run_sync(scientist.apropose(None))
    assert proposal.raw.startswith("random design: no parameters reproduce")
    assert env.validate(proposal.text) >= 0 and scientist.posterior_failures == 1


def test_posterior_summary_respects_the_word_limit() -> None:
    theta = {"a": np.random.default_rng(0).normal(size=(50, 40)), "b": np.ones(50)}
    text = posterior_summary(theta, n_data=3, word_limit=30)
    assert len(text.split()) == 30 and text.startswith("After 3 measurements")
    with pytest.raises(InputError):
        make_scientist("llm")
