"""IRT: which students answer which questions correctly (BoxingGym §6, item response theory).

Hidden model (2PL by default; 6 students × 6 questions): abilities ``α_s ~ N(0, 1)``,
difficulties ``β_q ~ N(0, 1)``, discriminations ``γ_q ~ N(0, 1)`` (may be negative) and
``p_sq = sigmoid(γ_q (α_s − β_q))``; ``mode="1pl"`` drops γ, ``"3pl"`` adds guessing
``c_q ~ U(0, 1)`` with ``p = c + (1 − c) sigmoid(...)``. At reset the whole response matrix
``r_sq ~ Bernoulli(p_sq)`` is drawn once; a query ``[s, q]`` returns the fixed entry.

``Theta`` holds ``alpha``, ``beta``, ``gamma`` (and ``c`` for 3PL), each ``(S, n)``, plus the
response matrix ``r`` ``(S, students, questions)`` and the mask ``known`` of entries that are
already determined. The true θ has ``known`` everywhere (queries read the fixed matrix).

Posterior (``posterior_sample``): only the parameters of students/questions that occur in
the data are touched by the likelihood; they are drawn by adaptive importance sampling
(:func:`silicolab.envs.boxinggym.dugongs.adaptive_importance`: prior proposals, then a
defensive t-mixture fitted to the weighted draws while the ESS is low), self-normalised and
resampled; all other parameters come from the prior, and unobserved entries of ``r`` are
drawn from ``Bernoulli(p)`` given the sampled parameters. ``exact_eig`` is ``None``.

Fidelity (spec §6, §15 item 9):

* ``fixed``: IDs are range-checked; a repeated query is recognised as carrying no
  information -- the posterior counts each observed entry once, observed entries are
  ``known`` (the likelihood of the fixed value is 1), so their EIG is exactly 0; the ten
  evaluation pairs (5 correct, 5 incorrect, from the true matrix) have no duplicates.
* ``faithful``: no range check (negative IDs wrap, too-large IDs give the IndexError text
  as an ``InvalidDesign``); repeated queries count as fresh Bernoulli observations in the
  posterior and the EIG; evaluation pairs are drawn with replacement (duplicates possible).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import special, stats

from silicolab.envs.boxinggym import parsing
from silicolab.envs.boxinggym.base import (
    BoxingEnv,
    Goal,
    InvalidDesign,
    Question,
    Theta,
    systematic_resample,
)
from silicolab.envs.boxinggym.dugongs import adaptive_importance

MODES = ("1pl", "2pl", "3pl")
RESTRICTED = "You cannot query this observation, try again."
_INTEGER = re.compile(r"-?\d+")


def correct_probability(theta: Theta, mode: str) -> np.ndarray:
    """``p[S, s, q]``: chance that student ``s`` answers question ``q`` correctly."""
    diff = theta["alpha"][:, :, None] - theta["beta"][:, None, :]
    if mode == "1pl":
        return special.expit(diff)
    p = special.expit(theta["gamma"][:, None, :] * diff)
    if mode == "3pl":
        c = theta["c"][:, None, :]
        p = c + (1.0 - c) * p
    return p


def cell_probability(theta: Theta, mode: str, s: int, q: int) -> np.ndarray:
    """``p[S]`` for one student-question pair (cheaper than the full matrix)."""
    diff = theta["alpha"][:, s] - theta["beta"][:, q]
    if mode == "1pl":
        return special.expit(diff)
    p = special.expit(theta["gamma"][:, q] * diff)
    if mode == "3pl":
        p = theta["c"][:, q] + (1.0 - theta["c"][:, q]) * p
    return p


class IRT(BoxingEnv):
    """The item-response environment (goal ``direct``: predict correctness)."""

    name = "irt"
    goals = ("direct",)
    goal_classes = ("CorrectnessGoal",)
    param_names = ("num_students", "num_questions", "mode")

    def __init__(
        self,
        *,
        num_students: int = 6,
        num_questions: int = 6,
        mode: str = "2pl",
        **kwargs: Any,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {list(MODES)}; got {mode!r}")
        self.num_students = int(num_students)
        self.num_questions = int(num_questions)
        self.mode = mode
        super().__init__(**kwargs)

    def reset(self, seed: int | None = None) -> None:
        """Draw θ and the fixed response matrix; re-pick the held-out evaluation pairs."""
        super().reset(seed)
        self.theta["known"][:] = True
        if getattr(self, "goal", None) is not None:
            self.goal.pick_pairs()

    @property
    def restricted(self) -> set[tuple[int, int]]:
        """The evaluation pairs, which the agent may not query."""
        goal = getattr(self, "goal", None)
        return set(goal.pairs) if goal is not None else set()

    # text interface ---------------------------------------------------------------------------
    def validate(self, design_text: str) -> tuple[int, int]:
        """``[student, question]``; refuses the held-out evaluation pairs."""
        try:
            items = [int(v.strip()) for v in parsing.strip_brackets(str(design_text)).split(",")]
        except ValueError:
            items = []
        if len(items) != 2:
            raise InvalidDesign("Error: The input must be a list of two integers.")
        s, q = items
        if self.fidelity == "faithful":
            if (s, q) in self.restricted:
                raise InvalidDesign(RESTRICTED)
            for value, size, axis in ((s, self.num_students, 0), (q, self.num_questions, 1)):
                if not -size <= value < size:  # upstream indexing raised IndexError here
                    raise InvalidDesign(
                        f"index {value} is out of bounds for axis {axis} with size {size}"
                    )
            return (s % self.num_students, q % self.num_questions)
        if not (0 <= s < self.num_students and 0 <= q < self.num_questions):
            raise InvalidDesign(
                f"Error: Student IDs must be between 0 and {self.num_students - 1} and "
                f"question IDs between 0 and {self.num_questions - 1}."
            )
        if (s, q) in self.restricted:
            raise InvalidDesign(RESTRICTED)
        return (s, q)

    def sample_design(self, rng: np.random.Generator) -> tuple[int, int]:
        """A uniform pair among those not held out for evaluation."""
        allowed = [
            (s, q)
            for s in range(self.num_students)
            for q in range(self.num_questions)
            if (s, q) not in self.restricted
        ]
        return allowed[int(rng.integers(len(allowed)))]

    def format_design(self, design: Any) -> str:
        """``[s, q]``."""
        return f"[{int(design[0])}, {int(design[1])}]"

    def format_outcome(self, y: Any) -> str:
        """``1`` (correct) or ``0``."""
        return str(int(y))

    # Bayesian model ---------------------------------------------------------------------------
    def _with_matrix(self, params: Theta, rng: np.random.Generator) -> Theta:
        p = correct_probability(params, self.mode)
        out = dict(params)
        out["r"] = (rng.uniform(size=p.shape) < p).astype(np.int8)
        out["known"] = np.zeros(p.shape, dtype=bool)
        return out

    def _param_shapes(self) -> dict[str, int]:
        shapes = {
            "alpha": self.num_students,
            "beta": self.num_questions,
            "gamma": self.num_questions,
        }
        if self.mode == "3pl":
            shapes["c"] = self.num_questions
        return shapes

    def prior_sample(self, n: int, rng: np.random.Generator) -> Theta:
        """Exact prior draws of the parameters and of a response matrix."""
        params = {}
        for key, size in self._param_shapes().items():
            draw = rng.uniform(size=(n, size)) if key == "c" else rng.standard_normal((n, size))
            params[key] = draw
        return self._with_matrix(params, rng)

    def simulate(self, theta: Theta, design: Any, rng: np.random.Generator) -> np.ndarray:
        """The fixed entry where it is known, else a Bernoulli draw."""
        s, q = (int(v) for v in design)
        p = cell_probability(theta, self.mode, s, q)
        fresh = (rng.uniform(size=p.shape) < p).astype(int)
        return np.where(theta["known"][:, s, q], theta["r"][:, s, q], fresh)

    def log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """Bernoulli log-pmf; for a known entry, 0 if ``y`` equals it and ``-inf`` if not."""
        s, q = (int(v) for v in design)
        p = cell_probability(theta, self.mode, s, q)
        y = np.asarray(y, dtype=float)
        ll = special.xlogy(y, p) + special.xlog1py(1.0 - y, -p)
        fixed_value = np.where(theta["r"][:, s, q] == y, 0.0, -np.inf)
        return np.where(theta["known"][:, s, q], fixed_value, ll)

    def cross_log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """``out[n, m] = log p(y[n] | θ[m])`` (known entries as above).

        The outcome is binary, so the per-θ rows ``log p(1 | θ)`` and ``log p(0 | θ)`` are
        computed once and each output row is one of them; any other ``y`` falls back to the
        broadcast Bernoulli formula.
        """
        s, q = (int(v) for v in design)
        p = cell_probability(theta, self.mode, s, q)
        y = np.asarray(y, dtype=float).reshape(-1)
        known, fixed = theta["known"][:, s, q], theta["r"][:, s, q]
        if np.all((y == 0.0) | (y == 1.0)):
            rows = np.empty((2, len(p)))
            with np.errstate(divide="ignore"):
                rows[1] = np.where(known, np.where(fixed == 1, 0.0, -np.inf), np.log(p))
                rows[0] = np.where(known, np.where(fixed == 0, 0.0, -np.inf), np.log1p(-p))
            return rows[y.astype(np.intp)]
        y = y[:, None]
        ll = special.xlogy(y, p[None, :]) + special.xlog1py(1.0 - y, -p[None, :])
        fixed_value = np.where(fixed[None, :] == y, 0.0, -np.inf)
        return np.where(known[None, :], fixed_value, ll)

    def _conditioning_data(self, data: Sequence[tuple[Any, Any]]) -> list[tuple[int, int, int]]:
        """``(s, q, r)`` triples the posterior conditions on: each entry once (fixed) or every
        observation, repeats included (faithful, as the published model)."""
        out: list[tuple[int, int, int]] = []
        seen: set[tuple[int, int]] = set()
        for design, y in data:
            s, q = (int(v) for v in design)
            if self.fidelity == "fixed" and (s, q) in seen:
                continue
            seen.add((s, q))
            out.append((s, q, int(y)))
        return out

    def sample_posterior(
        self, n: int, rng: np.random.Generator, data: Sequence[tuple[Any, Any]]
    ) -> Theta:
        """Adaptive importance sampling of the involved parameters (see module doc)."""
        obs = self._conditioning_data(data)
        students = sorted({s for s, _, _ in obs})
        questions = sorted({q for _, q, _ in obs})
        keys = ["alpha"] + [k for k in self._param_shapes() if k != "alpha"]
        layout = [(k, i) for k in keys for i in (students if k == "alpha" else questions)]
        cols = {pair: j for j, pair in enumerate(layout)}
        is_c = np.array([k == "c" for k, _ in layout])
        s_idx = np.array([cols[("alpha", s)] for s, _, _ in obs])
        b_idx = np.array([cols[("beta", q)] for _, q, _ in obs])
        y = np.array([r for _, _, r in obs], dtype=float)

        def log_prior(x: np.ndarray) -> np.ndarray:
            normal = stats.norm.logpdf(x[:, ~is_c]).sum(axis=1)
            inside = ((x[:, is_c] >= 0) & (x[:, is_c] <= 1)).all(axis=1)
            return np.where(inside, normal, -np.inf)

        def log_lik(x: np.ndarray) -> np.ndarray:
            diff = x[:, s_idx] - x[:, b_idx]
            if self.mode == "1pl":
                p = special.expit(diff)
            else:
                g_idx = np.array([cols[("gamma", q)] for _, q, _ in obs])
                p = special.expit(x[:, g_idx] * diff)
                if self.mode == "3pl":
                    c = np.clip(x[:, [cols[("c", q)] for _, q, _ in obs]], 0.0, 1.0)
                    p = c + (1.0 - c) * p
            return (special.xlogy(y, p) + special.xlog1py(1.0 - y, -p)).sum(axis=1)

        def prior_draw(k: int, g: np.random.Generator) -> np.ndarray:
            x = g.standard_normal((k, len(layout)))
            x[:, is_c] = g.uniform(size=(k, int(is_c.sum())))
            return x

        x, w, _ = adaptive_importance(log_prior, log_lik, prior_draw, rng)
        x = x[systematic_resample(w, n, rng)]
        params = {k: v for k, v in self.prior_sample(n, rng).items() if k in self._param_shapes()}
        for (key, i), j in cols.items():
            params[key][:, i] = x[:, j]
        theta = self._with_matrix(params, rng)
        if self.fidelity == "fixed":
            for s, q, r in obs:
                theta["r"][:, s, q] = r
                theta["known"][:, s, q] = True
        return theta


class CorrectnessGoal(Goal):
    """Predict whether a student answers a question correctly; metric: 1 − accuracy."""

    name = "direct"
    norm_mu = 0.5
    norm_sigma = 0.5
    env: IRT

    def __init__(self, env: IRT) -> None:
        super().__init__(env)
        self.pairs: list[tuple[int, int]] = []
        self.pick_pairs()

    def pick_pairs(self) -> None:
        """The 10 held-out evaluation pairs: 5 answered correctly, then 5 incorrectly, in the
        true matrix. Fixed: distinct pairs (topped up from the other label when one label has
        fewer than 5 entries). Faithful: uniform draws with replacement until each quota is
        met (duplicates possible; a label absent from the matrix is skipped)."""
        env = self.env
        rng = env.rng_for("eval-pairs")
        r = env.theta["r"][0]
        cells = {
            label: [
                (s, q) for s in range(r.shape[0]) for q in range(r.shape[1]) if r[s, q] == label
            ]
            for label in (1, 0)
        }
        pairs: list[tuple[int, int]] = []
        if env.fidelity == "faithful":
            for label in (1, 0):
                if not cells[label]:
                    continue
                for _ in range(5):
                    pairs.append(cells[label][int(rng.integers(len(cells[label])))])
        else:
            chosen = {lab: rng.permutation(len(cells[lab])).tolist() for lab in (1, 0)}
            take = {lab: min(5, len(cells[lab])) for lab in (1, 0)}
            take[1] = min(len(cells[1]), 10 - take[0])
            take[0] = min(len(cells[0]), 10 - take[1])
            for lab in (1, 0):
                pairs.extend(cells[lab][i] for i in chosen[lab][: take[lab]])
        self.pairs = pairs

    task_texts = (
        (
            "Your goal is to predict whether a student answers a question correctly: "
            "respond 1 for correct and 0 for incorrect."
        ),
        "Your goal is to predict the boolean output (0 or 1) for a pair of integers.",
    )

    def system_message(self, include_prior: bool) -> str:
        """The scientist's prompt."""
        e = self.env
        if include_prior:
            intro = (
                f"There are {e.num_students} students and {e.num_questions} questions. "
                f"{self.task_text(True)}\nYou may query a student-question pair to see whether "
                f"that student got that question right or wrong. Student IDs run from 0 to "
                f"{e.num_students - 1} and question IDs from 0 to {e.num_questions - 1}. "
                "Write a query as [student_id, question_id]."
            )
        else:
            intro = (
                "The environment maps two integers to a boolean value. The first integer runs "
                f"from 0 to {e.num_students - 1} and the second from 0 to {e.num_questions - 1}; "
                f"the output is 0 or 1. {self.task_text(False)}\n"
                "Write a query as [integer 1, integer 2]."
            )
        return self.scientist_prompt(intro, example="[1, 3]")

    def questions(self, n: int, rng: np.random.Generator) -> list[Question]:
        """The held-out pairs (the same set every time; cycled if ``n`` exceeds it)."""
        truth = self.env.theta["r"][0]
        out: list[Question] = []
        for i in range(n):
            s, q = self.pairs[i % len(self.pairs)]
            if self.env.include_prior:
                text = (
                    f"Will student {s} answer question {q} correctly? "
                    "Respond with 1 (correct) or 0 (incorrect)."
                )
            else:
                text = f"What is the output of the environment at input [{s}, {q}]? Respond 0 or 1."
            out.append(Question(text, int(truth[s, q]), (s, q)))
        return out

    def parse_answer(self, text: str) -> int | None:
        """``int(answer)``, else the last integer in the text."""
        try:
            return int(str(text).strip())
        except ValueError:
            found = _INTEGER.findall(str(text))
            return int(found[-1]) if found else None

    def question_value(self, prediction: Any, question: Question) -> float:
        """0 for a correct prediction, 1 otherwise (the metric is 1 − accuracy)."""
        return float(int(prediction) != int(question.truth))

    def missing_value(self, question: Question) -> float | None:
        """An unparseable answer counts as wrong."""
        return 1.0

    def bayes_answer(self, question: Question, theta: Theta, rng: np.random.Generator) -> int:
        """The posterior-predictive majority for the entry."""
        s, q = question.point
        p = cell_probability(theta, self.env.mode, s, q)
        p = np.where(theta["known"][:, s, q], theta["r"][:, s, q], p)
        return int(p.mean() >= 0.5)

    def prior_mean_answer(self, question: Question) -> int:
        """Under the symmetric prior every entry is correct with probability 1/2 (1PL/2PL)
        or more (3PL); answer 1."""
        return 1


#: The registry's factory (``prior`` is ``include_prior``; other keywords go to the class).
make_irt = IRT.factory
