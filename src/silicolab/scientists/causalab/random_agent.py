"""The random baseline: random interventions, a random hypothesis, a guessed frequency.

It gives the floor every other scientist should clear: a random number of interventions
(within the budget) on random properties with values drawn from 0–100, a random DAG over
the declared properties and the frequency with coefficients in {1, 2, 3} and a base in
15–25, and one submission computed from that hypothesis on the reactor crystal. Its draws
come from ``seed`` and the graph id, so an episode is reproducible anywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from silicolab.core.seeding import rng as seeded_rng
from silicolab.envs.causalab.dsl import Hypothesis
from silicolab.envs.causalab.suite import TARGET
from silicolab.scientists.causalab.episode import EpisodeTrace, StepRecord, panel_text

if TYPE_CHECKING:
    from silicolab.envs.causalab.lab import CrystalLab


def random_hypothesis(names: list[str], rng: np.random.Generator) -> Hypothesis:
    """A random DAG over ``names`` and the frequency (a random order, each forward pair an
    edge with probability 1/2, the frequency last with at least one parent) and a linear
    frequency equation with random integer coefficients."""
    order = [names[i] for i in rng.permutation(len(names))]
    edges = [(a, b) for i, a in enumerate(order) for b in order[i + 1 :] if rng.random() < 0.5]
    parents = [a for a in order if rng.random() < 0.5] or [order[int(rng.integers(len(order)))]]
    edges += [(a, TARGET) for a in parents]
    coefficients: dict[str, float | None] = {"base": float(rng.integers(15, 26))}
    coefficients.update({f"c_{a}": float(rng.integers(1, 4)) for a in parents})
    equation = f"{TARGET} = base + " + " + ".join(f"c_{a}*{a}" for a in parents)
    return Hypothesis(edges=tuple(edges), freq_equation=equation, coefficients=coefficients)


class RandomScientist:
    """Random interventions within the budget, a random hypothesis, one guessed answer."""

    agent = "random"
    model_label = ""
    verify = "none"

    def __init__(self, *, seed: int | None = 0):
        self.seed = seed

    async def arun(self, lab: CrystalLab, trace: EpisodeTrace) -> None:
        """Play one episode (synchronous work; the protocol is async)."""
        self.run(lab, trace)

    def run(self, lab: CrystalLab, trace: EpisodeTrace) -> None:
        """Intervene at random, guess a hypothesis, submit its prediction."""
        rng = seeded_rng(self.seed, "causalab-random", lab.config.graph_id, lab.seed or 0)
        names = list(lab.config.controllable)
        trace.note_panel(lab.observe())
        hypothesis = random_hypothesis(names, rng)
        for _ in range(int(rng.integers(0, lab.budget_left + 1))):
            prop = names[int(rng.integers(len(names)))]
            value = float(rng.integers(0, 101))
            panel = lab.intervene(prop, value)
            trace.note_panel(panel)
            action = {"tool": "intervene", "prop": prop, "value": value}
            step = StepRecord(0, "manipulator", hypothesis.to_dict(), action, panel_text(panel), 0)
            step.budget_used = int(lab.budget_used)
            trace.add_step(step, hypothesis)
        props = lab.open_reactor()
        opened = StepRecord(0, "manipulator", hypothesis.to_dict(), {"tool": "open_reactor"}, "", 0)
        opened.observation, opened.budget_used = panel_text(props), int(lab.budget_used)
        trace.add_step(opened, hypothesis)
        guess = hypothesis.predict(props)
        guess = float(rng.integers(0, 1001)) if guess is None else float(guess)
        result = lab.submit(guess)
        trace.submissions.append(float(result.frequency))
        action = {"tool": "submit", "frequency": guess}
        step = StepRecord(0, "reactor", hypothesis.to_dict(), action, result.message, 0)
        step.budget_used = int(lab.budget_used)
        trace.add_step(step, hypothesis)
        trace.stop_reason = "success" if lab.success else "submitted"
