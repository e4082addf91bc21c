"""Mastectomy survival: is a breast-cancer patient alive, given time since surgery and
metastasis (BoxingGym §9)?

Hidden model: ``λ0 ~ Gamma(shape 0.1, rate 0.1)``, ``β ~ HalfNormal(10)``. At reset a table of
``num_patients`` patients is drawn, each with a time ``t ~ U(0, 10)``, a metastasis flag
``m ~ Bernoulli(0.5)`` and an outcome ``d ~ Bernoulli(p_death)`` sampled **once**; a design is a
patient ID and querying it returns that fixed outcome (1 = dead, 0 = alive).

Fidelity:

* ``faithful``: ``p_death = sigmoid(t·λ0·exp(β·m))`` as upstream -- its argument is never
  negative, so ``p_death ≥ 0.5`` always; IDs up to 100 pass validation and ID 100 then fails
  with the upstream IndexError text; the posterior conditions on every row, repeated IDs
  included.
* ``fixed``: the exponential proportional-hazards probability of having died by time ``t``,
  ``p_death = 1 - exp(-t·λ0·exp(β·m))`` (0 at surgery, rising with time and faster with
  metastasis -- the intent of the hazard ``λ0·exp(β·m)``); IDs must be 0..N-1; a patient
  queried twice contributes once to the likelihood, since the outcome is fixed.

Posterior: self-normalised importance sampling from the prior (two parameters, at most a few
dozen Bernoulli observations, so the effective sample size stays in the thousands).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.special import expit

from silicolab.envs.boxinggym.base import (
    BoxingEnv,
    Goal,
    InvalidDesign,
    Question,
    Theta,
    importance_posterior,
)
from silicolab.envs.boxinggym.parsing import binary_answer, parse_int
from silicolab.envs.boxinggym.text import answer_instruction, observe_instruction

GAMMA_SHAPE, GAMMA_RATE, BETA_SCALE = 0.1, 0.1, 10.0
TIME_UPPER = 10.0
#: Cap on rejection draws when balancing evaluation labels (a hopeless target is given up).
MAX_BALANCE_TRIES = 2_000


def death_probability(
    theta: Theta, t: np.ndarray | float, m: np.ndarray | float, fidelity: str
) -> np.ndarray:
    """``p_death`` for every sample (broadcast over ``t`` and ``m``), per ``fidelity``."""
    lam = np.asarray(theta["lambda0"], dtype=float)
    beta = np.asarray(theta["beta"], dtype=float)
    with np.errstate(over="ignore"):
        hazard = np.asarray(t, dtype=float) * lam * np.exp(beta * np.asarray(m, dtype=float))
    if fidelity == "faithful":
        return expit(hazard)
    return -np.expm1(-hazard)


class SurvivalGoal(Goal):
    """Predict whether a new patient is dead (1) or alive (0); metric: accuracy."""

    name = "direct"
    norm_mu = 0.2604
    norm_sigma = 0.43885286828275377
    kind = "accuracy"
    task_texts = (
        "Your goal is to predict whether a breast-cancer patient is alive (0) or dead (1) from "
        "the time since their surgery and whether their cancer metastasized.",
        "Your goal is to predict a binary response (0 or 1) to a pair of inputs.",
    )
    observe_format = observe_instruction("ID")
    answer_format = answer_instruction("only 0 or 1.")

    def system_message(self, include_prior: bool) -> str:
        env: Survival = self.env  # type: ignore[assignment]
        last = env.num_patients - 1
        if include_prior:
            intro = (
                "Each breast-cancer patient below had surgery some time ago, and their cancer "
                f"has either metastasized (1) or not (0). There are {env.num_patients} "
                "patients; each line gives the ID, the time since surgery, and the metastasis "
                "status:"
            )
            how = (
                f"Observe a patient by writing their ID (an integer from 0 to {last}), e.g. "
                "<observe>3</observe>. The reply is 0 if the patient is alive and 1 if dead."
            )
        else:
            intro = (
                "You are observing a binary response to a pair of inputs (a float and a "
                "binary value). You may only observe these inputs; each line gives the "
                "index, the float input and the binary input:"
            )
            how = (
                f"Observe by writing an index from 0 to {last}, e.g. <observe>3</observe>. "
                "The reply is the binary response."
            )
        return self.scientist_prompt(self.task_text(include_prior), intro, env.patient_table(), how)

    def questions(self, n: int, rng: np.random.Generator) -> list[Question]:
        """Fresh patients with labels balanced: each target is the minority label so far
        (ties go to 1); a target the true model cannot produce is given up after
        ``MAX_BALANCE_TRIES`` draws."""
        env: Survival = self.env  # type: ignore[assignment]
        out: list[Question] = []
        counts = [0, 0]
        for _ in range(n):
            target = 1 if counts[1] <= counts[0] else 0
            for _ in range(MAX_BALANCE_TRIES):
                m, t = int(rng.integers(0, 2)), float(rng.uniform(0, TIME_UPPER))
                p = float(death_probability(env.theta, t, m, env.fidelity)[0])
                d = int(rng.random() < p)
                if d == target:
                    break
            counts[d] += 1
            if env.include_prior:
                text = (
                    f"A patient's metastasis status is {m} and the time since surgery is "
                    f"{t:.2f}. Is the patient alive (0) or dead (1)? Answer with 0 or 1."
                )
            else:
                text = f"Predict the binary response for the inputs {m}, {t:.2f}. Answer 0 or 1."
            out.append(Question(text, d, (t, m)))
        return out

    def parse_answer(self, text: str) -> int | None:
        return binary_answer(text)

    def question_value(self, prediction: Any, question: Question) -> float:
        return float(int(prediction) == int(question.truth))

    def bayes_answer(self, question: Question, theta: Theta, rng: np.random.Generator) -> int:
        """1 when the posterior-predictive death probability is at least 0.5."""
        t, m = question.point
        return int(death_probability(theta, t, m, self.env.fidelity).mean() >= 0.5)

    def prior_mean_answer(self, question: Question) -> int:
        """The majority label under the prior predictive (Monte Carlo, fixed seed)."""
        t, m = question.point
        theta = self.env.prior_sample(20_000, np.random.default_rng(0))
        return int(death_probability(theta, t, m, self.env.fidelity).mean() >= 0.5)


class Survival(BoxingEnv):
    """Mastectomy survival: design = patient ID, outcome = that patient's fixed status."""

    name = "survival"
    goals = ("direct",)
    goal_classes = ("SurvivalGoal",)
    #: the patient table is part of the configuration: drawn once, kept in the record
    param_names = ("num_patients", "times", "metastasized", "outcomes")

    def __init__(self, *, num_patients: int = 100, **kwargs: Any) -> None:
        if int(num_patients) < 1:
            raise ValueError(f"num_patients={num_patients} must be at least 1")
        self.num_patients = int(num_patients)
        super().__init__(**kwargs)

    def reset(self, seed: int | None = None) -> None:
        """Draw θ, then the patient table and each patient's one-off outcome."""
        super().reset(seed)
        rng = self.rng_for("patients")
        self.times = rng.uniform(0, TIME_UPPER, self.num_patients)
        self.metastasized = rng.integers(0, 2, self.num_patients)
        p = death_probability(self.theta, self.times, self.metastasized, self.fidelity)
        self.outcomes = (rng.random(self.num_patients) < p).astype(int)

    def patient_table(self) -> str:
        """One line per patient: ``ID: time, metastasized``."""
        return "\n".join(
            f"{i}: {t:.2f}, {int(m)}"
            for i, (t, m) in enumerate(zip(self.times, self.metastasized, strict=True))
        )

    def validate(self, design_text: str) -> int:
        try:
            pid = parse_int(design_text)
        except (ValueError, TypeError):
            raise InvalidDesign("Input must be an integer.") from None
        top = self.num_patients if self.fidelity == "faithful" else self.num_patients - 1
        if pid < 0 or pid > top:
            raise InvalidDesign(f"Input must be between 0 and {self.num_patients - 1}")
        if pid >= self.num_patients:  # faithful: the upstream off-by-one crash
            raise InvalidDesign(
                f"index {pid} is out of bounds for axis 0 with size {self.num_patients}"
            )
        return pid

    def draw_outcome(self, design: Any) -> int:
        return int(self.outcomes[int(design)])

    def sample_design(self, rng: np.random.Generator) -> int:
        return int(rng.integers(0, self.num_patients))

    def format_design(self, design: Any) -> str:
        return str(int(design))

    def format_outcome(self, y: Any) -> str:
        return str(int(y))

    def prior_sample(self, n: int, rng: np.random.Generator) -> Theta:
        return {
            "lambda0": rng.gamma(GAMMA_SHAPE, 1.0 / GAMMA_RATE, n),
            "beta": np.abs(rng.normal(0.0, BETA_SCALE, n)),
        }

    def _p(self, theta: Theta, design: Any) -> np.ndarray:
        pid = int(design)
        return death_probability(theta, self.times[pid], self.metastasized[pid], self.fidelity)

    def simulate(self, theta: Theta, design: Any, rng: np.random.Generator) -> np.ndarray:
        p = self._p(theta, design)
        return (rng.random(p.shape) < p).astype(np.int64)

    def log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        p = self._p(theta, design)
        y = np.asarray(y).reshape(-1)
        with np.errstate(divide="ignore"):
            return np.where(y == 1, np.log(p), np.log1p(-p))

    def cross_log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        p = self._p(theta, design)[None, :]
        y = np.asarray(y).reshape(-1, 1)
        with np.errstate(divide="ignore"):
            return np.where(y == 1, np.log(p), np.log1p(-p))

    def faithful_log_likelihood(
        self, y: np.ndarray, theta: Theta, design: Any, *, inner: bool
    ) -> np.ndarray:
        """Published NMC: plain log outer, ``log(p + 1e-4)`` / ``log(1 - p + 1e-4)`` inner."""
        if not inner:
            return self.log_likelihood(y, theta, design)
        p = self._p(theta, design)
        y = np.asarray(y).reshape(-1)
        return np.where(y == 1, np.log(p + 1e-4), np.log(1 - p + 1e-4))

    def likelihood_data(self, data: Sequence[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        """The rows the likelihood uses: fixed mode keeps each patient's first row only."""
        if self.fidelity == "faithful":
            return list(data)
        seen: dict[int, Any] = {}
        for pid, outcome in data:
            seen.setdefault(int(pid), outcome)
        return list(seen.items())

    def posterior_sample(
        self, n: int, rng: np.random.Generator, data: Sequence[tuple[Any, Any]] | None = None
    ) -> Theta:
        """Prior importance sampling on :meth:`likelihood_data` (exact prior without data)."""
        data = self.likelihood_data(self.data if data is None else data)
        if not data:
            return self.prior_sample(n, rng)
        return importance_posterior(self, n, rng, data)


#: The registry's factory (``prior`` is ``include_prior``; other keywords go to the class).
make_survival = Survival.factory
