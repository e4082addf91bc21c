"""What a BoxingGym goal asks and how it scores: :class:`Goal`, its :class:`Question` and
:class:`Score`, :class:`SquaredErrorGoal` for the goals whose answer is one number and
:class:`ParameterGoal` for those that ask for one parameter of the model.

A goal wraps an environment with the scientist's and the novice's prompts (the shared
observe and answer instructions are class attributes, so an environment that words them
its own way states only the wording), the evaluation questions, the per-question metric
and the paper's standardisation. :mod:`silicolab.envs.boxinggym.base` re-exports all of it.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from silicolab.core.errors import InputError
from silicolab.envs.base import GoalKind
from silicolab.envs.boxinggym import parsing
from silicolab.envs.boxinggym.text import (
    ANSWER_FORMAT,
    OBSERVE_FORMAT,
    communication_prompt,
    naive_message,
)

if TYPE_CHECKING:
    from silicolab.envs.boxinggym.base import BoxingEnv, Theta


@dataclass(frozen=True)
class Question:
    """One evaluation question: its text (already in the prior/no-prior wording), the ground
    truth, and the evaluation point it was built from (design-like, for Bayes answers)."""

    text: str
    truth: Any
    point: Any = None


@dataclass(frozen=True)
class Score:
    """A goal's score on a set of predictions.

    ``raw`` is what the published ``evaluate_predictions`` returned (mean error, or accuracy for
    accuracy goals), ``raw_std`` its per-question standard deviation, ``standardized`` the value
    reported in the paper's tables under the env's fidelity (see :meth:`Goal.standardize`),
    ``n`` the number of questions scored and ``n_missing`` the unparseable predictions.
    """

    raw: float
    raw_std: float
    standardized: float
    n: int
    n_missing: int


class Goal(ABC):
    """One goal of one environment: prompts, evaluation questions, metric and norms.

    Subclasses set the class attributes and implement the abstract methods;
    :meth:`question_value` gives the per-question metric (an error, or 1/0 correctness for
    ``kind == "accuracy"``) from which the shared :meth:`score` builds the :class:`Score`.
    """

    name: ClassVar[str]
    norm_mu: ClassVar[float]
    norm_sigma: ClassVar[float]
    kind: ClassVar[GoalKind] = "error"
    num_evals: ClassVar[int] = 10
    #: published clip of the raw mean error before z-scoring (location direct: (0, 10000)).
    raw_clip: ClassVar[tuple[float, float] | None] = None

    def __init__(self, env: BoxingEnv) -> None:
        self.env = env

    # prompts ----------------------------------------------------------------------------------
    @abstractmethod
    def system_message(self, include_prior: bool) -> str:
        """The scientist's system prompt (domain story with prior, abstract without)."""

    #: the goal sentence with the prior and without it (or override :meth:`task_text`).
    task_texts: ClassVar[tuple[str, str] | None] = None
    #: how the scientist is told to write an experiment (the last lines but one of
    #: :meth:`scientist_prompt`) and to answer (its last line; also the novice's).
    observe_format: ClassVar[str] = OBSERVE_FORMAT
    answer_format: ClassVar[str] = ANSWER_FORMAT

    def scientist_prompt(self, *parts: str, example: str | None = None) -> str:
        """A system message: ``parts``, then :attr:`observe_format` (followed by
        ``example`` as an ``<observe>`` block when given), then :attr:`answer_format`, one
        per line."""
        observe = self.observe_format
        if example is not None:
            observe += f" For example: <observe>{example}</observe>"
        return "\n".join([*parts, observe, self.answer_format])

    def task_text(self, include_prior: bool) -> str:
        """The goal sentence(s) a novice gets (:attr:`task_texts`); the default
        :meth:`naive_system_message` uses it."""
        if self.task_texts is None:
            raise NotImplementedError(f"{type(self).__name__} defines no task_text")
        return self.task_texts[0 if include_prior else 1]

    def naive_system_message(self, include_prior: bool) -> str:
        """The novice's system prompt (the task and :attr:`answer_format`); the explanation
        is appended after it."""
        return naive_message(self.task_text(include_prior), self.answer_format)

    def comm_prompt(self, include_prior: bool, word_limit: int = 200) -> str:
        """The scientist's request to write the explanation for the novice."""
        return communication_prompt(word_limit)

    # evaluation -------------------------------------------------------------------------------
    @abstractmethod
    def questions(self, n: int, rng: np.random.Generator) -> list[Question]:
        """``n`` evaluation questions with truths from ``env.theta``."""

    @abstractmethod
    def parse_answer(self, text: str) -> Any | None:
        """The prediction in ``text``; ``None`` when unparseable."""

    @abstractmethod
    def question_value(self, prediction: Any, question: Question) -> float:
        """The metric on one question: the error, or 1.0/0.0 correctness for accuracy goals."""

    def missing_value(self, question: Question) -> float | None:
        """The metric for an unparseable (``None``) prediction; ``None`` drops the question.

        Defaults follow the spec: error goals drop it, accuracy goals count it as wrong.
        """
        return 0.0 if self.kind == "accuracy" else None

    def score(self, predictions: Sequence[Any], questions: Sequence[Question]) -> Score:
        """Mean and std of the per-question metric, standardised per the env's fidelity."""
        if len(predictions) != len(questions):
            raise InputError(
                f"score needs one prediction per question; got {len(predictions)} predictions "
                f"for {len(questions)} questions"
            )
        values: list[float] = []
        missing = 0
        for prediction, question in zip(predictions, questions, strict=True):
            value: float | None
            if prediction is None:
                missing += 1
                value = self.missing_value(question)
            else:
                value = float(self.question_value(prediction, question))
            if value is not None:
                values.append(value)
        if not values:
            return Score(math.nan, math.nan, math.nan, 0, missing)
        raw = float(np.mean(values))
        raw_std = float(np.std(values))
        return Score(raw, raw_std, self.standardize(raw), len(values), missing)

    def standardize(self, raw: float) -> float:
        """The paper's standardised score of a raw metric value.

        Error goals: ``(clip(err) - mu) / sigma`` in both fidelities. Accuracy goals: fixed
        mode standardises the error ``1 - acc`` with the matching constants, i.e.
        ``((1 - acc) - (1 - mu)) / sigma = (mu - acc) / sigma``; faithful mode reports
        ``1 - (acc - mu) / sigma`` as the published notebooks did (the two differ by 1).
        """
        if self.raw_clip is not None:
            raw = float(np.clip(raw, *self.raw_clip))
        if self.kind == "error":
            return (raw - self.norm_mu) / self.norm_sigma
        z = (raw - self.norm_mu) / self.norm_sigma
        return 1.0 - z if self.env.fidelity == "faithful" else -z

    # reference answers ------------------------------------------------------------------------
    def bayes_answer(self, question: Question, theta: Theta, rng: np.random.Generator) -> Any:
        """The answer minimising the expected metric under posterior samples ``theta``."""
        raise NotImplementedError(f"{type(self).__name__} defines no bayes_answer")

    def prior_mean_answer(self, question: Question) -> Any:
        """The constant-predictor baseline answer (the prior-predictive mean)."""
        raise NotImplementedError(f"{type(self).__name__} defines no prior_mean_answer")


class SquaredErrorGoal(Goal):
    """A goal whose answer is one number scored by its squared error: the answer after the
    ``=`` rule (:func:`~silicolab.envs.boxinggym.parsing.float_answer`), else, in the
    fidelities of :attr:`last_number_fallback`, the last number written anywhere."""

    #: the fidelities in which an answer without a readable ``= value`` falls back to the
    #: last number in the text.
    last_number_fallback: ClassVar[tuple[str, ...]] = ()

    def parse_answer(self, text: str) -> float | None:
        """The number answered; ``None`` when unparseable (then dropped from the mean)."""
        value = parsing.float_answer(text)
        if value is None and self.env.fidelity in self.last_number_fallback:
            value = parsing.last_number(text)
        return value

    def question_value(self, prediction: Any, question: Question) -> float:
        """Squared error against the truth."""
        return (float(prediction) - float(question.truth)) ** 2


class ParameterGoal(SquaredErrorGoal):
    """Estimate one scalar parameter of the model: ``num_evals`` = 1 question, asked
    :meth:`question_text`, whose truth is the true value of ``theta[parameter]``, scored by
    squared error (a real number: the ``=`` reading, the last number in fixed mode); the
    Bayes answer is the parameter's posterior mean (optimal for squared error)."""

    parameter: ClassVar[str]
    kind: ClassVar[GoalKind] = "error"
    num_evals: ClassVar[int] = 1
    last_number_fallback: ClassVar[tuple[str, ...]] = ("fixed",)
    #: stated here so that it wins over an integer-answer goal this one also derives from
    parse_answer = SquaredErrorGoal.parse_answer

    @abstractmethod
    def question_text(self) -> str:
        """The question about the parameter, as the prompt words it."""

    def questions(self, n: int, rng: np.random.Generator) -> list[Question]:
        """``n`` copies of the question about the true parameter."""
        text = self.question_text()
        truth = float(self.env.theta[self.parameter][0])
        return [Question(text, truth, None) for _ in range(n)]

    def bayes_answer(self, question: Question, theta: Theta, rng: np.random.Generator) -> float:
        """The posterior mean of the parameter."""
        return float(np.mean(theta[self.parameter]))
