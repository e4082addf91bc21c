"""Moral Machines: whom does a participant save in a self-driving-car dilemma (§12)?

A design is two groups of characters -- group 1 the passengers, group 2 the pedestrians --
and whether saving group 1 needs the car to ``swerve`` or ``stay``. The participant saves
group 1 with probability ``sigmoid(η)``,
``η = a + β_count·Δhumans + β_group + Σ_attr β_attr·Δattr + β_intervention·iv`` (``Δ`` = group 1
minus group 2, ``iv = +1`` for swerve, ``-1`` for stay), nine Normal-prior coefficients. The
agent sees only the participant's sentence (language model with ``llm=``, else a template;
see :mod:`~silicolab.envs.boxinggym.participant_text`); EIG and scoring use the choice.

Posterior: self-normalised importance sampling from the prior (nine parameters, at most a
few dozen Bernoulli choices; the effective sample size stays in the thousands).

Fidelity: ``faithful`` reproduces the published posterior, whose likelihood adds the human
count difference *without* ``β_count`` (coefficient 1), the age attribute that is 0 for
the elderly, and the system-prompt example with the invalid ``elderly_man, elderly_woman``.
``fixed`` uses ``β_count`` in the posterior, codes the old characters' age as -1 (children
+1), and shows a valid example.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.special import expit, log_expit

from silicolab.envs.boxinggym.base import (
    Goal,
    InvalidDesign,
    Question,
    Theta,
    importance_posterior,
)
from silicolab.envs.boxinggym.participant_text import SpeakingParticipantEnv
from silicolab.envs.boxinggym.text import answer_instruction, observe_instruction

CHARACTERS = (
    "stroller", "boy", "girl", "pregnant_woman", "male_doctor", "female_doctor",
    "female_athlete", "male_athlete", "female_executive", "male_executive", "large_woman",
    "large_man", "homeless", "old_man", "old_woman", "criminal", "dog", "cat",
)  # fmt: skip
PETS = ("dog", "cat")
FEMALE = ("girl", "female_doctor", "female_athlete", "female_executive", "large_woman",
          "old_woman", "pregnant_woman")  # fmt: skip
SOCIAL = {"male_doctor": 1.0, "female_doctor": 1.0, "male_executive": 1.0,
          "female_executive": 1.0, "pregnant_woman": 1.5}  # fmt: skip
FITNESS = {"male_athlete": 1.0, "female_athlete": 1.0, "large_man": -1.0, "large_woman": -1.0}
PRIOR = {
    "b_intervention": (-0.3, 0.1), "b_group": (0.4, 0.1), "b_gender": (-0.3, 0.1),
    "b_fitness": (0.4, 0.1), "b_social": (0.1, 0.1), "b_age": (0.1, 0.1),
    "b_count": (0.7, 0.1), "b_species": (0.6, 0.1), "intercept": (0.0, 0.3),
}  # fmt: skip
ATTRIBUTES = ("gender", "age", "social", "fitness", "species")
FORMAT_ERROR = (
    "Invalid input format. Please provide 'Group 1', 'Group 2', and 'Intervention' in the "
    "correct format."
)


def attributes(character: str, fidelity: str) -> dict[str, float]:
    """The model's attributes of one character (see the module doc for the age fix)."""
    age = 1.0 if character in ("boy", "girl") else 0.0
    if fidelity == "fixed" and character in ("old_man", "old_woman"):
        age = -1.0
    return {
        "gender": -1.0 if character in FEMALE else 0.0,
        "age": age,
        "social": SOCIAL.get(character, 0.0),
        "fitness": FITNESS.get(character, 0.0),
        "species": -1.0 if character in PETS else 1.0,
    }


def features(design: tuple, fidelity: str) -> dict[str, float]:
    """Group-1-minus-group-2 differences: human count, attributes, and ``iv``."""
    g1, g2, intervention = design
    out = {"count": float(sum(c not in PETS for c in g1) - sum(c not in PETS for c in g2))}
    for attr in ATTRIBUTES:
        out[attr] = sum(attributes(c, fidelity)[attr] for c in g1) - sum(
            attributes(c, fidelity)[attr] for c in g2
        )
    out["iv"] = 1.0 if intervention == "swerve" else -1.0
    return out


def logit_save_group1(theta: Theta, design: tuple, fidelity: str, count_coef: bool = True):
    """``η`` for every sample; ``count_coef=False`` is the published posterior's bug."""
    f = features(design, fidelity)
    count = theta["b_count"] * f["count"] if count_coef else f["count"]
    return (
        theta["intercept"] + count + theta["b_group"] + theta["b_gender"] * f["gender"]
        + theta["b_age"] * f["age"] + theta["b_social"] * f["social"]
        + theta["b_fitness"] * f["fitness"] + theta["b_species"] * f["species"]
        + theta["b_intervention"] * f["iv"]
    )  # fmt: skip


def template_sentence(design: tuple, choice: int) -> str:
    """A plain sentence stating the choice with a generic reason."""
    saved = design[0] if choice == 1 else design[1]
    what = "swerving" if (choice == 1) == (design[2] == "swerve") else "staying on course"
    return (
        f"I choose to save group {choice} because saving {', '.join(saved)} matters more to me, "
        f"even if it means {what}."
    )


def participant_system(theta: Theta) -> str:
    """The participant model's instructions, including its (hidden) preferences."""
    prefs = "\n".join(f"{k}: {float(np.asarray(v)[0]):.2f}" for k, v in theta.items())
    return (
        "You take part in moral dilemmas about a self-driving car whose brakes have failed: "
        "it will hit either group 1 (its passengers) or group 2 (pedestrians), and one of the "
        "two outcomes needs the car to swerve. You are told the choice you made; explain it "
        f"with a reason. Characters: {', '.join(CHARACTERS)}.\nYour preference weights "
        f"(never mention them or any numbers):\n{prefs}\nWrite one concise sentence."
    )


def participant_prompt(design: tuple, choice: int) -> str:
    g1, g2, intervention = design
    return (
        f"Group 1: {', '.join(g1)}\nGroup 2: {', '.join(g2)}\nIntervention: {intervention}\n"
        f"Choice made: save group {choice}\nStart with 'I choose to save group {choice} "
        "because'."
    )


_TASK = (
    "Your goal is to predict which group a participant chooses to save in a self-driving-car "
    "dilemma."
)


class JudgementGoal(Goal):
    """Predict which group the participant saves (1 or 2); metric: accuracy."""

    name = "direct"
    norm_mu = 0.424
    norm_sigma = 0.494190246767376
    kind = "accuracy"
    task_texts = (_TASK, _TASK)
    observe_format = observe_instruction("scenario")
    answer_format = answer_instruction("only 1 or 2.")

    def system_message(self, include_prior: bool) -> str:
        example = (
            "elderly_man, elderly_woman"
            if self.env.fidelity == "faithful"
            else "old_man, old_woman"
        )
        how = (
            "A self-driving car's brakes fail. Group 1 are its passengers, group 2 are "
            "pedestrians; the car will kill one group, and saving group 1 may need it to "
            "'swerve' or to 'stay' on course. Ask the participant about a scenario of 1 to 4 "
            f"characters per group from: {', '.join(CHARACTERS)}. Use exactly this format:\n"
            f"<observe>Group 1: [{example}]\nGroup 2: [boy, dog]\nIntervention: swerve"
            "</observe>\nThe participant explains the choice in words."
        )
        return self.scientist_prompt(self.task_text(include_prior), how)

    def questions(self, n: int, rng: np.random.Generator) -> list[Question]:
        """Random scenarios with simulated choices, balanced: even questions want choice 1,
        odd ones choice 2 (redrawn up to 2000 times, then kept whatever they are)."""
        env: MoralMachines = self.env  # type: ignore[assignment]
        out = []
        for i in range(n):
            target = 1 + i % 2
            for _ in range(2_000):
                design = env.sample_design(rng)
                choice = int(env.simulate(env.theta, design, rng)[0])
                if choice == target:
                    break
            g1, g2, iv = design
            text = (
                f"The participant saw this scenario:\nGroup 1: [{', '.join(g1)}]\n"
                f"Group 2: [{', '.join(g2)}]"
                f"\nIntervention: {iv}\nWhich group do you predict the participant chose to "
                "save? Answer 1 for group 1 or 2 for group 2."
            )
            out.append(Question(text, choice, design))
        return out

    def parse_answer(self, text: str) -> int | None:
        text = str(text)
        return 2 if "2" in text else 1 if "1" in text else None

    def question_value(self, prediction: Any, question: Question) -> float:
        return float(int(prediction) == int(question.truth))

    def bayes_answer(self, question: Question, theta: Theta, rng: np.random.Generator) -> int:
        """1 when the posterior-predictive probability of saving group 1 is at least 0.5."""
        eta = logit_save_group1(theta, question.point, self.env.fidelity)
        return 1 if expit(eta).mean() >= 0.5 else 2

    def prior_mean_answer(self, question: Question) -> int:
        theta = self.env.prior_sample(20_000, np.random.default_rng(0))
        eta = logit_save_group1(theta, question.point, self.env.fidelity)
        return 1 if expit(eta).mean() >= 0.5 else 2


class MoralMachines(SpeakingParticipantEnv):
    """Moral Machines: design = (group 1, group 2, intervention), outcome = choice 1 or 2."""

    name = "moral_machines"
    goals = ("direct",)
    goal_classes = ("JudgementGoal",)
    faithful_nmc = (100, 10)

    def validate(self, design_text: str) -> tuple:
        text = str(design_text)
        g1 = re.search(r"Group 1:\s*\[(.*?)\]", text)
        g2 = re.search(r"Group 2:\s*\[(.*?)\]", text)
        iv = re.search(r"Intervention:\s*(\w+)", text)
        if not (g1 and g2 and iv):
            raise InvalidDesign(FORMAT_ERROR)
        groups = []
        for match in (g1, g2):
            items = [c.strip() for c in match.group(1).split(", ")]
            for c in items:
                if c not in CHARACTERS:
                    raise InvalidDesign(
                        f"Invalid character: {c}. Please use characters from the following "
                        f"list: {', '.join(CHARACTERS)}"
                    )
            groups.append(tuple(items))
        if iv.group(1) not in ("swerve", "stay"):
            raise InvalidDesign("Invalid intervention. Please provide either 'swerve' or 'stay'.")
        return groups[0], groups[1], iv.group(1)

    def run(self, design_text: str) -> str:
        """Validate, draw the choice, voice it, record both; return the sentence."""
        design = self.validate(design_text)
        choice = int(self.draw_outcome(design))
        said = self.voice(
            design,
            choice,
            system=participant_system(self.theta),
            user=participant_prompt(design, choice),
            template=template_sentence(design, choice),
        )
        return f"The participant responded with: {said}"

    def sample_design(self, rng: np.random.Generator) -> tuple:
        groups = [
            tuple(str(c) for c in rng.choice(CHARACTERS, size=int(rng.integers(1, 5))))
            for _ in range(2)
        ]
        return groups[0], groups[1], str(rng.choice(["swerve", "stay"]))

    def format_design(self, design: Any) -> str:
        g1, g2, iv = design
        return f"Group 1: [{', '.join(g1)}]\nGroup 2: [{', '.join(g2)}]\nIntervention: {iv}"

    def format_outcome(self, y: Any) -> str:
        return "The participant responded with: (choice hidden)"

    def prior_sample(self, n: int, rng: np.random.Generator) -> Theta:
        return {k: rng.normal(mu, sd, n) for k, (mu, sd) in PRIOR.items()}

    def simulate(self, theta: Theta, design: Any, rng: np.random.Generator) -> np.ndarray:
        p = expit(logit_save_group1(theta, design, self.fidelity))
        return np.where(rng.random(p.shape) < p, 1, 2).astype(np.int64)

    def log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """The true model's ``log P(choice)`` (includes ``β_count``; used by NMC)."""
        return self._log_lik(y, theta, design, count_coef=True)

    def cross_log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """``out[n, m] = log P(y[n] | theta[m])`` by broadcasting, shape ``(N, M)``."""
        eta = logit_save_group1(theta, design, self.fidelity)[None, :]
        y = np.asarray(y).reshape(-1, 1)
        return np.where(y == 1, log_expit(eta), log_expit(-eta))

    def _log_lik(self, y: np.ndarray, theta: Theta, design: Any, count_coef: bool) -> np.ndarray:
        eta = logit_save_group1(theta, design, self.fidelity, count_coef)
        y = np.asarray(y).reshape(-1) if np.ndim(y) else np.asarray(y)
        return np.where(y == 1, log_expit(eta), log_expit(-eta))

    def sample_posterior(
        self, n: int, rng: np.random.Generator, data: Sequence[tuple[Any, Any]]
    ) -> Theta:
        """Prior importance sampling; faithful drops ``β_count`` from the likelihood."""
        count_coef = self.fidelity == "fixed"

        def log_lik(theta: Theta) -> np.ndarray:
            total = np.zeros(len(theta["intercept"]))
            for design, choice in data:
                total += self._log_lik(np.asarray(choice), theta, design, count_coef)
            return total

        return importance_posterior(self, n, rng, data, log_likelihood=log_lik)


#: The registry's factory (``prior`` is ``include_prior``; other keywords go to the class).
make_moral_machines = MoralMachines.factory
