"""The JSON-ready record of one BoxingGym episode (:class:`BoxingRecord`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np

from silicolab.envs.base import SCHEMA_VERSION


def jsonable(value: Any) -> Any:
    """``value`` with numpy arrays/scalars, tuples and sets turned into plain JSON data
    (non-finite floats become None, so records stay strict JSON)."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating | float):
        return float(value) if math.isfinite(float(value)) else None
    if value is None or isinstance(value, int | str):
        return value
    return str(value)


@dataclass
class CheckpointScore:
    """The evaluation after ``n_experiments`` steps: the goal's :class:`Score` fields plus
    the questions, truths, parsed predictions (None = unparseable) and answer texts.

    ``n_unparsed`` counts the unparseable answers; ``degraded`` is set when too few answers
    parsed (:func:`~silicolab.scientists.boxinggym.protocol.too_few_parsed`): then ``raw``,
    ``raw_std`` and ``standardized`` are NaN (null in JSON), so no mean includes them.
    """

    n_experiments: int
    raw: float
    raw_std: float
    standardized: float
    n: int
    n_missing: int
    questions: list[str]
    truths: list[Any]
    predictions: list[Any]
    answers: list[str | None]
    format_retries: int = 0
    n_unparsed: int = 0
    degraded: bool = False


@dataclass
class DesignAttempt:
    """One try at a design: the design text (None: no usable ``<observe>`` block), whether
    the environment accepted it, and its reply (the outcome, or the rejection message)."""

    step: int
    attempt: int
    design: str | None
    ok: bool
    message: str
    raw: str = ""
    format_retries: int = 0


@dataclass
class Outcome:
    """One accepted experiment: the design text, the parsed design, the outcome text the
    scientist saw and the numeric outcome the environment recorded."""

    step: int
    design: str
    parsed: Any
    text: str
    value: Any


@dataclass
class BoxingRecord:
    """Everything about one episode (see :func:`~silicolab.scientists.boxinggym.protocol.
    aplay_episode`).

    ``scores`` has one :class:`CheckpointScore` per checkpoint; ``designs`` every attempt,
    failed tries and environment messages included; ``outcomes`` the accepted experiments;
    ``novice`` the novice's evaluation after communication; ``regret`` the EI regret per
    accepted step (``regret_detail`` holds ``eig.ei_regret``'s full result); ``usage`` the
    LLM calls and tokens per tag; ``programs`` the apprentice's fitted programs per
    evaluation (empty for other scientists); ``truth`` the environment's record (true
    parameters, data).
    """

    env: str
    goal: str
    prior: bool
    seed: int | None
    fidelity: str
    agent: str
    model: str
    steps: int
    checkpoints: list[int]
    scores: list[CheckpointScore]
    designs: list[DesignAttempt]
    outcomes: list[Outcome]
    skipped_steps: list[int] = field(default_factory=list)
    comm_prompt: str = ""
    explanation: str | None = None
    explanation_words: int = 0
    explanation_truncated: bool = False
    novice: CheckpointScore | None = None
    novice_model: str = ""
    novice_system: str = ""
    regret: list[float] | None = None
    regret_mean: float | None = None
    regret_detail: dict[str, Any] = field(default_factory=dict)
    regret_error: str = ""
    #: why the episode stopped early (a model call that failed for good; ``""`` when it ran
    #: to the end): the checkpoints evaluated before it are kept, the rest never ran.
    model_error: str = ""
    usage: dict[str, dict[str, Any]] = field(default_factory=dict)
    runtime_s: float = 0.0
    regret_runtime_s: float = 0.0
    transcript: list[dict[str, str]] = field(default_factory=list)
    programs: list[dict[str, Any]] = field(default_factory=list)
    truth: dict[str, Any] = field(default_factory=dict)
    schema_version: str = SCHEMA_VERSION

    def score_at(self, n_experiments: int) -> CheckpointScore | None:
        """The evaluation after ``n_experiments`` steps, if that was a checkpoint."""
        return next((s for s in self.scores if s.n_experiments == n_experiments), None)

    @property
    def before(self) -> float | None:
        """Standardized error before any experiment (checkpoint 0), if evaluated."""
        score = self.score_at(0)
        return None if score is None else score.standardized

    @property
    def after(self) -> float | None:
        """Standardized error at the last checkpoint (after all steps), if evaluated."""
        score = self.score_at(self.steps)
        return None if score is None else score.standardized

    @property
    def partial(self) -> bool:
        """True when a model error stopped the episode before its end (``model_error``)."""
        return bool(self.model_error)

    def evaluations(self) -> list[CheckpointScore]:
        """Every evaluation of the episode: the scientist's checkpoints, then the novice's."""
        return [*self.scores, *([] if self.novice is None else [self.novice])]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data."""
        return jsonable(asdict(self))

    def summary(self) -> dict[str, Any]:
        """The common episode fields (see :class:`silicolab.scientists.EpisodeRecord`).

        Health counts every experiment step and every evaluation (checkpoint or novice) as
        a step: a skipped step is a parse failure when none of its attempts had a usable
        design, else a skipped step; a degraded evaluation (too few parsed answers) is a
        parse failure. A partial episode (``model_error``) adds its failed call as a model
        error and is unusable, as is one whose every evaluation is degraded: either way it
        has no score that stands for the agent's episode.
        """
        evaluations = self.evaluations()
        health: dict[str, Any] = {
            "steps": self.steps + len(evaluations),
            "parse_failures": 0,
            "skipped_steps": 0,
            "model_errors": 0,
        }
        sample = ""
        for step in self.skipped_steps:
            tries = [d for d in self.designs if d.step == step]
            unparsed = all(d.design is None for d in tries)
            health["parse_failures" if unparsed else "skipped_steps"] += 1
            sample = sample or next((d.raw or d.message for d in tries), "")
        for evaluation in evaluations:
            if evaluation.degraded:
                health["parse_failures"] += 1
                sample = sample or _unparsed_answer(evaluation)
        if self.model_error:
            health["steps"] += 1
            health["model_errors"] += 1
            sample = sample or self.model_error
        all_degraded = bool(evaluations) and all(e.degraded for e in evaluations)
        health["unusable"] = self.partial or all_degraded
        novice = None if self.novice is None else self.novice.standardized
        scores = {"before": self.before, "after": self.after, "after_comm": novice}
        scores["regret"] = self.regret_mean
        usage: dict[str, Any] = {}
        for tag in self.usage.values():
            for key, value in tag.items():
                if isinstance(value, int | float):
                    usage[key] = usage.get(key, 0) + value
        return {
            "steps": self.steps,
            "scores": {k: math.nan if v is None else float(v) for k, v in scores.items()},
            "health": {**health, "sample_reply": sample},
            "usage": usage,
            "runtime_s": self.runtime_s + self.regret_runtime_s,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BoxingRecord:
        """Rebuild a record written by :meth:`to_dict` (e.g. from a run's events)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["scores"] = [CheckpointScore(**s) for s in values.get("scores", [])]
        values["designs"] = [DesignAttempt(**d) for d in values.get("designs", [])]
        values["outcomes"] = [Outcome(**o) for o in values.get("outcomes", [])]
        if values.get("novice") is not None:
            values["novice"] = CheckpointScore(**values["novice"])
        return cls(**values)


def _unparsed_answer(evaluation: CheckpointScore) -> str:
    """The first answer of ``evaluation`` that did not parse, for the health's sample."""
    for answer, prediction in zip(evaluation.answers, evaluation.predictions, strict=False):
        if prediction is None:
            return answer or "(no usable <answer> block)"
    return ""
