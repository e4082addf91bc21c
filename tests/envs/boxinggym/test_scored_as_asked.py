"""BoxingGym scores on the question asked: the truth at the point shown, answers counted."""

from __future__ import annotations

import re

import numpy as np
import pytest

from silicolab.envs import make
from silicolab.envs.boxinggym.location_finding import LocationFinding


def _shown_point(text: str) -> np.ndarray:
    """The point as the question text shows it (two decimals)."""
    inside = re.search(r"\[([^\]]*)\]", text)
    assert inside is not None, text
    return np.asarray([float(v) for v in inside.group(1).split(",")])


@pytest.mark.parametrize("fidelity", ["fixed", "faithful"])
def test_location_direct_an_agent_exact_at_the_shown_point_scores_zero_error(fidelity):
    # Before the fix the truth was taken at the unrounded point: exact answers at the shown
    # point averaged +0.078 standardized over seeds instead of the reference's -0.331.
    standardized = []
    for seed in range(1, 21):
        env: LocationFinding = make("boxinggym/location_finding", seed=seed, fidelity=fidelity)
        questions = env.goal.questions(10, np.random.default_rng(seed))
        answers = [float(env.noise_free(env.theta, _shown_point(q.text))[0]) for q in questions]
        score = env.goal.score(answers, questions)
        assert score.raw == pytest.approx(0.0, abs=1e-18)
        standardized.append(score.standardized)
    assert np.mean(standardized) == pytest.approx(-12.59 / 38.03)
