"""Emotions from outcomes: predict how a player feels after a wheel-of-fortune spin (§11).

The environment and its goal. A design is a wheel spin (three prizes, their probabilities, the
prize won); the outcome is eight Likert ratings drawn from the latent model of
:mod:`~silicolab.envs.boxinggym.emotion._model` (likelihood tables, dynamics of the ratings).
The agent sees only the participant's *sentence* about the ratings (from a language model when
``llm=`` is given, else a template; see :mod:`~silicolab.envs.boxinggym.emotion._participant`);
EIG, posterior and scoring use the numeric ratings. The posterior is per-emotion importance
sampling with resample-move rejuvenation (:mod:`~silicolab.envs.boxinggym.emotion._posterior`).

Fidelity: ``fixed`` uses the prize won (``prizes[win]``) everywhere and accepts probabilities
summing to 1 within 1e-6; ``faithful`` reproduces the upstream bug that random designs and
evaluation questions use the win *index* (0, 1, 2) as the amount won, tests the sum with
exact float equality, and estimates EIG with the published element-wise ``log(pdf + 0.001)``
that mixes the 8-vector with a scalar marginal, on un-truncated Normal draws.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats
from scipy.special import logsumexp

from silicolab.envs.boxinggym.base import (
    Goal,
    InvalidDesign,
    Question,
    Theta,
    theta_size,
)
from silicolab.envs.boxinggym.emotion._model import (
    EMOTION_OFFSET,
    EMOTIONS,
    PRIOR,
    WheelDesign,
    emotion_log_likelihood,
    from_standard,
    gather_sum,
    latent_mean,
    ordinal_log_prob,
    rating_log_prob,
    rating_log_table,
    standard_draws,
    to_likert,
)
from silicolab.envs.boxinggym.emotion._participant import (
    PARTICIPANT_SYSTEM,
    participant_prompt,
    template_sentence,
)
from silicolab.envs.boxinggym.emotion._posterior import emotion_posterior
from silicolab.envs.boxinggym.participant_text import SpeakingParticipantEnv
from silicolab.envs.boxinggym.text import answer_instruction, observe_instruction
from silicolab.llm.base import LanguageModel

__all__ = [
    "EMOTIONS",
    "PRIOR",
    "Emotion",
    "EmotionGoal",
    "WheelDesign",
    "emotion_log_likelihood",
    "latent_mean",
    "make_emotion",
    "ordinal_log_prob",
    "rating_log_prob",
    "rating_log_table",
    "to_likert",
]

FORMAT_ERROR = (
    "Invalid input format. Please provide values for 'prizes', 'probs', and 'win' in the "
    "correct format."
)
_LIST = r"\[([^\]]*)\]"
#: proposals whose scratch an env keeps between posteriors (40 000 for N + M = 2000: 15 MB)
_SCRATCH_MAX = 50_000

_TASK = (
    "Your goal is to predict how a participant would rate a player's emotions after a spin of "
    "a prize wheel."
)


class EmotionGoal(Goal):
    """Predict the eight ratings after a spin; metric: mean absolute error per question."""

    name = "direct"
    norm_mu = 1.58508525
    norm_sigma = 0.7237143937677741
    task_texts = (_TASK, _TASK)
    observe_format = observe_instruction("spin")
    answer_format = answer_instruction(
        "the eight lines of the template given, one integer rating from 1 to 9 per emotion."
    )

    def system_message(self, include_prior: bool) -> str:
        how = (
            "A participant watches a player spin a wheel with three prizes. You may ask the "
            "participant how the player feels by giving the prize values (integers from 0 to "
            "100), their probabilities (summing to 1) and the index (0, 1 or 2) of the prize "
            "won, exactly in this format:\n<observe>prizes: [10, 20, 30],\nprobs: [0.2, 0.3, "
            "0.5],\nwin: 2</observe>\nThe participant answers in words."
        )
        return self.scientist_prompt(self.task_text(include_prior), how)

    def questions(self, n: int, rng: np.random.Generator) -> list[Question]:
        env: Emotion = self.env  # type: ignore[assignment]
        out = []
        for _ in range(n):
            design = env.sample_design(rng)
            ratings = env.simulate(env.theta, design, rng)[0]
            template = "\n".join(f"{e.capitalize()}: <rating>/9" for e in EMOTIONS)
            text = (
                f"The wheel's prizes and probabilities were:\n{design.wheel_text()}\n"
                f"The player spun the wheel and landed on {design.prizes[design.win]:g}. How "
                "would the participant rate the player's emotions after this spin? Answer "
                f"with every line of this template, each rating an integer from 1 to 9:\n"
                f"{template}"
            )
            out.append(Question(text, [int(r) for r in ratings], design))
        return out

    def parse_answer(self, text: str) -> list[int] | None:
        values = []
        for emotion in EMOTIONS:
            match = re.search(rf"{emotion}\s*:\s*(\d+)", str(text), flags=re.IGNORECASE)
            if not match:
                return None
            values.append(int(match.group(1)))
        return values

    def question_value(self, prediction: Any, question: Question) -> float:
        diff = np.asarray(prediction, dtype=float) - np.asarray(question.truth, dtype=float)
        return float(np.abs(diff).mean())

    def bayes_answer(self, question: Question, theta: Theta, rng: np.random.Generator) -> list:
        """Per-emotion posterior-predictive median rating (minimises expected abs. error)."""
        y = self.env.simulate(theta, question.point, rng)
        return [int(v) for v in np.median(y, axis=0).round()]

    def prior_mean_answer(self, question: Question) -> list:
        """The prior-predictive mean rating of each emotion (Monte Carlo, fixed seed)."""
        rng = np.random.default_rng(0)
        y = self.env.simulate(self.env.prior_sample(20_000, rng), question.point, rng)
        return [float(v) for v in y.mean(axis=0)]


def _two_decimal_probs(rng: np.random.Generator) -> list[float]:
    """Dirichlet(1, 1, 1) probabilities rounded to 2 decimals whose float sum is exactly 1.

    Rounded decimals such as 0.83 + 0.09 + 0.08 sum to 0.9999999999999999 in floating point,
    which the published validator's exact ``sum(p) != 1`` test rejects; redrawing until the
    sum is exact keeps random designs valid in both fidelities (a few draws at most).
    """
    while True:
        raw = rng.dirichlet(np.ones(3))
        probs = [round(float(raw[0]), 2), round(float(raw[1]), 2)]
        probs.append(round(1.0 - sum(probs), 2))
        if sum(probs) == 1 and min(probs) >= 0:
            return probs


class Emotion(SpeakingParticipantEnv):
    """Emotions from outcomes: design = a wheel spin, outcome = eight Likert ratings."""

    name = "emotion"
    goals = ("direct",)
    faithful_nmc = (100, 10)
    #: fixed NMC size: M = 1000 keeps the log(M + 1) ≈ 6.9 ceiling above the EIGs seen under
    #: the prior (≲ 4 nats). At a new data state the posterior's 20 (N + M) proposals cost
    #: ~8x the tabulated NMC itself, so doubling N and M would roughly double the time.
    fixed_nmc = (1000, 1000)

    def __init__(self, *, llm: LanguageModel | None = None, **kwargs: Any) -> None:
        self._table_scope: list[Any] | None = None
        self._scratch: np.ndarray | None = None  # see posterior_sample
        #: per rejuvenated emotion (index), the moves and mean acceptance of the last posterior
        self.rejuvenation: dict[int, dict[str, float]] = {}
        super().__init__(llm=llm, **kwargs)

    def make_goal(self, name: str) -> Goal:
        return EmotionGoal(self)

    def validate(self, design_text: str) -> WheelDesign:
        text = str(design_text)
        prizes = re.search(r"prizes\s*:\s*" + _LIST, text)
        probs = re.search(r"probs\s*:\s*" + _LIST, text)
        win = re.search(r"win\s*:\s*(-?\d+)", text)
        try:
            v = [float(x) for x in prizes.group(1).split(",")]  # type: ignore[union-attr]
            p = [float(x) for x in probs.group(1).split(",")]  # type: ignore[union-attr]
            idx = int(win.group(1))  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            raise InvalidDesign(FORMAT_ERROR) from None
        if len(v) != 3 or len(p) != 3:
            raise InvalidDesign(FORMAT_ERROR)
        if self.fidelity == "faithful":
            bad_sum = sum(p) != 1
        else:
            bad_sum = abs(sum(p) - 1) > 1e-6
            if min(p) < 0:
                raise InvalidDesign("Probabilities must be non-negative.")
        if bad_sum:
            raise InvalidDesign("Probabilities should sum to 1.")
        if idx not in (0, 1, 2):
            raise InvalidDesign("Invalid value for 'win'. Please provide 0, 1, or 2.")
        return WheelDesign(tuple(v), tuple(p), idx, v[idx])  # type: ignore[arg-type]

    def run(self, design_text: str) -> str:
        """Validate, draw the ratings, voice them, record both; return the sentence."""
        design = self.validate(design_text)
        ratings = self.draw_outcome(design)
        said = self.voice(
            design,
            ratings,
            system=PARTICIPANT_SYSTEM,
            user=participant_prompt(design, ratings),
            template=template_sentence(ratings),
        )
        return f"The participant responded with: {said}\n"

    def sample_design(self, rng: np.random.Generator) -> WheelDesign:
        prizes = tuple(float(round(v, 1)) for v in rng.uniform(0, 100, 3))
        probs = _two_decimal_probs(rng)
        idx = int(rng.integers(0, 3))
        value = float(idx) if self.fidelity == "faithful" else prizes[idx]
        return WheelDesign(prizes, tuple(probs), idx, value)  # type: ignore[arg-type]

    def format_design(self, design: Any) -> str:
        prizes = ", ".join(f"{v:g}" for v in design.prizes)
        probs = ", ".join(f"{p:g}" for p in design.probs)
        return f"prizes: [{prizes}],\nprobs: [{probs}],\nwin: {design.win}"

    def format_outcome(self, y: Any) -> str:
        return f"The participant responded with: {template_sentence(list(y))}\n"

    def prior_sample(self, n: int, rng: np.random.Generator) -> Theta:
        return from_standard(standard_draws(n, rng))

    def simulate(self, theta: Theta, design: Any, rng: np.random.Generator) -> np.ndarray:
        mean = latent_mean(theta, design)
        return to_likert(mean + theta["sigma"] * rng.standard_normal(mean.shape))

    def log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        y = np.asarray(y).reshape(-1, 8)
        lp = rating_log_prob(y, latent_mean(theta, design), theta["sigma"], self.fidelity)
        return lp.sum(axis=1)

    def cross_log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """``out[n, m] = log p(y[n] | theta[m])``, shape ``(N, M)``.

        Ratings are integers 1..9, so each ``theta[m]`` has a 9-level table per emotion
        (:func:`rating_log_table`, reused across the row blocks of one :meth:`eig_estimate`)
        and the output is a sum over the 8 emotions of gathered table rows -- bit-identical to
        broadcasting :func:`rating_log_prob` over ``(N, M, 8)`` at a fraction of the cost.
        Other ``y`` (non-integer or out of range) fall back to that broadcast.
        """
        y = np.asarray(y).reshape(-1, 8)
        levels = y.astype(np.intp) if y.dtype.kind in "iub" else None
        if levels is None and y.dtype.kind == "f" and np.all(np.isfinite(y)):
            levels = y.astype(np.intp)
            if not np.array_equal(levels, y):
                levels = None
        if levels is None or levels.min(initial=1) < 1 or levels.max(initial=9) > 9:
            mean, sigma = latent_mean(theta, design)[None], theta["sigma"][None]
            return rating_log_prob(y[:, None, :], mean, sigma, self.fidelity).sum(axis=2)
        table = self._level_table(theta, design)
        return gather_sum(table, levels - 1 + EMOTION_OFFSET)

    def _level_table(self, theta: Theta, design: Any) -> np.ndarray:
        """:func:`rating_log_table` of ``theta`` flattened to ``(8 * 9, S)`` (row ``9 e + k - 1``);
        the one computed for the inner samples of the running fixed NMC is reused."""
        scope = self._table_scope
        if scope is not None and scope[0] is theta and scope[1] is design:
            if scope[2] is None:
                scope[2] = self._level_table_now(theta, design)
            return scope[2]
        return self._level_table_now(theta, design)

    def _level_table_now(self, theta: Theta, design: Any) -> np.ndarray:
        table = rating_log_table(latent_mean(theta, design), theta["sigma"], self.fidelity)
        return table.reshape(-1, table.shape[-1])

    def eig_estimate(
        self, design: Any, outer: Theta, inner: Theta, *, estimator: str,
        rng: np.random.Generator,
    ) -> float:  # fmt: skip
        """Fixed: the shared NMC. Faithful: the published estimator -- Normal draws (no
        truncation), element-wise ``log(pdf + 0.001)``, a scalar log-mean-exp over the whole
        M×8 inner array, and the mean over outer samples *and* emotions."""
        if estimator == "fixed":
            self._table_scope = [inner, design, None]  # see _level_table
            try:
                return super().eig_estimate(design, outer, inner, estimator=estimator, rng=rng)
            finally:
                self._table_scope = None
        n = theta_size(outer)
        m = theta_size(inner) // n
        mean_o, sig_o = latent_mean(outer, design), outer["sigma"]
        y = mean_o + sig_o * rng.standard_normal(mean_o.shape)  # (N, 8)
        l_outer = np.log(stats.norm.pdf(y, mean_o, sig_o) + 0.001)
        mean_i = latent_mean(inner, design).reshape(n, m, 8)
        sig_i = inner["sigma"].reshape(n, m, 8)
        l_inner = np.log(stats.norm.pdf(y[:, None, :], mean_i, sig_i) + 0.001)
        log_marginal = logsumexp(l_inner.reshape(n, m * 8), axis=1) - np.log(m * 8)
        return float(np.mean(l_outer - log_marginal[:, None]))

    def data_log_likelihood(
        self, theta: Theta, data: Sequence[tuple[Any, Any]] | None = None
    ) -> np.ndarray:
        """``sum_i log p(y_i | theta[s], x_i)`` over ``data`` (default ``self.data``), ``(S,)``."""
        data = self.data if data is None else data
        return emotion_log_likelihood(theta, data, self.fidelity).sum(axis=1)

    def posterior_sample(
        self, n: int, rng: np.random.Generator, data: Sequence[tuple[Any, Any]] | None = None
    ) -> Theta:
        """Per-emotion prior importance sampling from ``max(20 n, 20000)`` proposals, with
        resample-move rejuvenation of the emotions whose weights are degenerate
        (:func:`~silicolab.envs.boxinggym.emotion._posterior.emotion_posterior`); the exact
        prior without data. :attr:`rejuvenation` reports the moves per rejuvenated emotion.
        """
        data = self.data if data is None else data
        self.rejuvenation = {}
        if not data:
            return self.prior_sample(n, rng)
        buffer = self._buffer(max(20 * n, 20_000))
        return emotion_posterior(n, rng, data, self.fidelity, buffer, self.rejuvenation)

    def _buffer(self, size: int) -> np.ndarray:
        """``(6, size, 8)`` scratch for the proposal draws and their log weights. Up to
        :data:`_SCRATCH_MAX` proposals it is kept between posteriors: fresh arrays this large
        are returned to the OS when freed and page-faulted back in at every data state, which
        on a VM costs ~10% of the posterior."""
        buffer = self._scratch
        if buffer is not None and buffer.shape[1] == size:
            return buffer
        buffer = np.empty((6, size, 8))
        if size <= _SCRATCH_MAX:
            self._scratch = buffer
        return buffer


def make_emotion(
    *,
    goal: str = "direct",
    prior: bool = True,
    fidelity: str = "fixed",
    seed: int | None = 0,
    llm: LanguageModel | None = None,
    **env_params: Any,
) -> Emotion:
    """The emotions-from-outcomes environment (BoxingGym §11); prior condition only."""
    if env_params:
        raise TypeError(f"emotion takes no parameters besides llm; got {sorted(env_params)}")
    return Emotion(llm=llm, goal=goal, include_prior=prior, fidelity=fidelity, seed=seed)
