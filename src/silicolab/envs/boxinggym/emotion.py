"""Emotions from outcomes: predict how a player feels after a wheel-of-fortune spin (§11).

Latent model (after Ong, Zaki & Goodman 2015), per emotion ``e`` of eight: for a wheel with
prizes ``v``, probabilities ``p`` and the prize actually won ``w``, with ``E = p·v`` and
``PE = w - E``, ``z_e ~ N(α_e + β_win,e·w + β_PE,e·PE + β_|PE|,e·|PE|, σ_e²)`` and the rating is
``clip(trunc(z_e), 1, 9)``. The agent sees only the participant's *sentence* about the
ratings (from a language model when ``llm=`` is given, else a template; see
:mod:`~silicolab.envs.boxinggym.participant_text`); EIG, posterior and scoring use the
numeric ratings.

Likelihood and posterior. ``fixed``: the exact ordinal likelihood of the ratings -- rating 1
is ``z < 2``, ratings 2..8 are ``k ≤ z < k+1`` and 9 is ``z ≥ 9`` (truncation toward zero).
``faithful``: the published Normal density of the ratings themselves. Either way the prior
and likelihood factorise over the eight emotions, so the posterior is sampled by importance
sampling from the prior *separately for each emotion* (five parameters each), resampled per
emotion -- exact in the limit, and far better conditioned than one 40-parameter weighting.

Fidelity: ``fixed`` uses the prize won (``prizes[win]``) everywhere and accepts probabilities
summing to 1 within 1e-6; ``faithful`` reproduces the upstream bug that random designs and
evaluation questions use the win *index* (0, 1, 2) as the amount won, tests the sum with
exact float equality, and estimates EIG with the published element-wise ``log(pdf + 0.001)``
that mixes the 8-vector with a scalar marginal, on un-truncated Normal draws.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats
from scipy.special import logsumexp, ndtr

from silicolab.envs.boxinggym.base import (
    BoxingEnv,
    Goal,
    InvalidDesign,
    Question,
    Theta,
    naive_message,
    theta_size,
)
from silicolab.envs.boxinggym.participant_text import (
    participant_record,
    participant_sentence,
    sample_index_for,
)
from silicolab.envs.boxinggym.posterior import normalized_weights, systematic_resample
from silicolab.llm.base import LanguageModel

EMOTIONS = (
    "happiness", "sadness", "anger", "surprise", "fear", "disgust", "contentment",
    "disappointment",
)  # fmt: skip
ALPHA = np.array([4.5, 3.5, 1.7, 3.3, 1.4, 1.8, 3.7, 2.0])
B_WIN = np.array([0.04, -0.025, -0.005, 0.02, 0.0, -0.005, 0.03, -0.03])
B_PE = np.array([0.035, -0.02, -0.025, 0.01, 0.0, -0.02, 0.02, -0.045])
B_ABS = np.array([-0.015, 0.025, 0.025, 0.035, 0.005, 0.02, -0.01, 0.02])
PRIOR = {
    "alpha": (ALPHA, 0.1),
    "b_win": (B_WIN, 0.01),
    "b_pe": (B_PE, 0.01),
    "b_abs": (B_ABS, 0.01),
}
FORMAT_ERROR = (
    "Invalid input format. Please provide values for 'prizes', 'probs', and 'win' in the "
    "correct format."
)
_LIST = r"\[([^\]]*)\]"


@dataclass(frozen=True)
class WheelDesign:
    """A spin: three prizes, their probabilities, the index landed on and the amount won
    (``value``; equal to ``prizes[win]`` except for faithful random/evaluation designs)."""

    prizes: tuple[float, float, float]
    probs: tuple[float, float, float]
    win: int
    value: float

    def wheel_text(self) -> str:
        return "\n".join(f"{v:g}: {p:g}" for v, p in zip(self.prizes, self.probs, strict=True))


def latent_mean(theta: Theta, design: WheelDesign) -> np.ndarray:
    """Mean of the latent ``z`` for every sample and emotion, shape ``(S, 8)``."""
    expected = float(np.dot(design.probs, design.prizes))
    pe = design.value - expected
    return (
        theta["alpha"]
        + theta["b_win"] * design.value
        + theta["b_pe"] * pe
        + (theta["b_abs"] * abs(pe))
    )


def to_likert(z: np.ndarray) -> np.ndarray:
    """``clip(trunc(z), 1, 9)`` as integers."""
    return np.clip(np.trunc(z), 1, 9).astype(np.int64)


def ordinal_log_prob(y: np.ndarray, mean: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Element-wise ``log P(rating = y)`` under the truncation model (see module doc)."""
    y = np.asarray(y, dtype=float)
    lo = np.where(y <= 1, -np.inf, y)
    hi = np.where(y >= 9, np.inf, y + 1)
    a, b = (lo - mean) / sigma, (hi - mean) / sigma
    # use the upper tail where both bounds are above the mean, for accuracy
    upper = a > 0
    p = np.where(upper, ndtr(-a) - ndtr(-b), ndtr(b) - ndtr(a))
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(p, 0.0))


def rating_log_prob(
    y: np.ndarray, mean: np.ndarray, sigma: np.ndarray, fidelity: str
) -> np.ndarray:
    """Element-wise log-likelihood of ratings: ordinal (fixed) or Normal density (faithful)."""
    if fidelity == "faithful":
        return stats.norm.logpdf(np.asarray(y, dtype=float), mean, sigma)
    return ordinal_log_prob(y, mean, sigma)


def template_sentence(ratings: Sequence[int]) -> str:
    """A plain sentence naming the strongest feelings without numbers."""
    order = np.argsort(-np.asarray(ratings), kind="stable")
    strong = [EMOTIONS[i] for i in order[:2]]
    weak = EMOTIONS[int(order[-1])]
    level = "a lot of" if ratings[int(order[0])] >= 7 else "some"
    return (
        f"The player might be feeling {level} {strong[0]} and some {strong[1]}, with hardly "
        f"any {weak}, because of how the spin turned out compared with what they expected."
    )


PARTICIPANT_SYSTEM = (
    "You are watching someone play a game in which a wheel with three possible prizes is spun. "
    "You will be told how likely each prize was, which prize the wheel landed on, and how "
    "strongly you believe the player feels each of eight emotions. Put those feelings into "
    "words. Feelings depend on the prize itself, on how it compares with what the player "
    "expected, and on how big that surprise was."
)


def participant_prompt(design: WheelDesign, ratings: Sequence[int]) -> str:
    """The user prompt asking the participant model to voice ``ratings``."""
    lines = "\n".join(f"{e.capitalize()}: {r}/9" for e, r in zip(EMOTIONS, ratings, strict=True))
    return (
        f"Prize: probability\n{design.wheel_text()}\n"
        f"The wheel landed on {design.prizes[design.win]:g}.\n"
        f"How you think the player feels (1 = not at all, 9 = very much):\n{lines}\n"
        "Write one short sentence without any numbers, mentioning only the strongest "
        "feelings, starting with 'The player might be feeling' and giving a reason."
    )


class EmotionGoal(Goal):
    """Predict the eight ratings after a spin; metric: mean absolute error per question."""

    name = "direct"
    norm_mu = 1.58508525
    norm_sigma = 0.7237143937677741
    kind = "error"

    def task_text(self, include_prior: bool) -> str:
        return (
            "Your goal is to predict how a participant would rate a player's emotions after a "
            "spin of a prize wheel."
        )

    def system_message(self, include_prior: bool) -> str:
        how = (
            "A participant watches a player spin a wheel with three prizes. You may ask the "
            "participant how the player feels by giving the prize values (integers from 0 to "
            "100), their probabilities (summing to 1) and the index (0, 1 or 2) of the prize "
            "won, exactly in this format:\n<observe>prizes: [10, 20, 30],\nprobs: [0.2, 0.3, "
            "0.5],\nwin: 2</observe>\nThe participant answers in words."
        )
        return "\n".join([self.task_text(include_prior), how, OBSERVE, ANSWER])

    def naive_system_message(self, include_prior: bool) -> str:
        return naive_message(self.task_text(include_prior), ANSWER)

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


OBSERVE = (
    "Write your reasoning inside <thought></thought> tags and the spin you choose inside "
    "<observe></observe> tags."
)
ANSWER = (
    "When asked a question, reply inside <answer></answer> tags with the eight lines of the "
    "template given, one integer rating from 1 to 9 per emotion."
)


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


class Emotion(BoxingEnv):
    """Emotions from outcomes: design = a wheel spin, outcome = eight Likert ratings."""

    name = "emotion"
    goals = ("direct",)
    faithful_nmc = (100, 10)
    #: fixed NMC size: the (N, M, 8) ordinal likelihood is the cost; M = 1000 keeps the
    #: log(M + 1) ≈ 6.9 ceiling above the EIGs seen under the prior (≲ 4 nats).
    fixed_nmc = (1000, 1000)

    def __init__(self, *, llm: LanguageModel | None = None, **kwargs: Any) -> None:
        if not kwargs.get("include_prior", True):
            raise ValueError("the emotion environment supports only the prior condition")
        self.llm = llm
        self.utterances: list[dict[str, Any]] = []
        super().__init__(**kwargs)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.utterances = []

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
        step = len(self.data)
        self.data.append((design, ratings))
        said = participant_sentence(
            self.llm,
            system=PARTICIPANT_SYSTEM,
            user=participant_prompt(design, ratings),
            template=template_sentence(ratings),
            sample_index=sample_index_for(self.name, self.seed, step, self.format_design(design)),
            tag="participant",
        )
        self.utterances.append({"step": step, "text": said.text, "source": said.source})
        return f"The participant responded with: {said.text}\n"

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
        theta = {k: mu + sd * rng.standard_normal((n, 8)) for k, (mu, sd) in PRIOR.items()}
        theta["sigma"] = np.abs(rng.standard_normal((n, 8)))
        return theta

    def simulate(self, theta: Theta, design: Any, rng: np.random.Generator) -> np.ndarray:
        mean = latent_mean(theta, design)
        return to_likert(mean + theta["sigma"] * rng.standard_normal(mean.shape))

    def log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        y = np.asarray(y).reshape(-1, 8)
        lp = rating_log_prob(y, latent_mean(theta, design), theta["sigma"], self.fidelity)
        return lp.sum(axis=1)

    def cross_log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """``out[n, m] = log p(y[n] | theta[m])`` by broadcasting, shape ``(N, M)``."""
        y = np.asarray(y).reshape(-1, 1, 8)
        mean, sigma = latent_mean(theta, design)[None], theta["sigma"][None]
        return rating_log_prob(y, mean, sigma, self.fidelity).sum(axis=2)

    def eig_estimate(
        self, design: Any, outer: Theta, inner: Theta, *, estimator: str,
        rng: np.random.Generator,
    ) -> float:  # fmt: skip
        """Fixed: the shared NMC. Faithful: the published estimator -- Normal draws (no
        truncation), element-wise ``log(pdf + 0.001)``, a scalar log-mean-exp over the whole
        M×8 inner array, and the mean over outer samples *and* emotions."""
        if estimator == "fixed":
            return super().eig_estimate(design, outer, inner, estimator=estimator, rng=rng)
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

    def posterior_sample(
        self, n: int, rng: np.random.Generator, data: Sequence[tuple[Any, Any]] | None = None
    ) -> Theta:
        """Per-emotion prior importance sampling (see module doc); exact prior without data."""
        data = self.data if data is None else data
        if not data:
            return self.prior_sample(n, rng)
        proposals = self.prior_sample(max(20 * n, 20_000), rng)
        log_w = np.zeros_like(proposals["sigma"])
        for design, ratings in data:
            mean = latent_mean(proposals, design)
            y = np.asarray(ratings, dtype=float)[None, :]
            log_w += rating_log_prob(y, mean, proposals["sigma"], self.fidelity)
        out = {k: np.empty((n, 8)) for k in proposals}
        for e in range(8):
            weights, _ = normalized_weights(log_w[:, e])
            index = systematic_resample(weights, n, rng)
            for k, v in proposals.items():
                out[k][:, e] = v[index, e]
        return out

    def to_record(self) -> dict[str, Any]:
        return {**super().to_record(), **participant_record(self.utterances, self.llm)}


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
