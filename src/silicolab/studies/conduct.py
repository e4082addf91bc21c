"""Running one condition: a ``sim`` conversation among the agents, then the survey.

Each condition builds fresh agents from the hypothesis (their treatment values added as
attributes), runs the conversation under the hypothesis' protocol with a coordinator that
decides when it ends, and asks the measurement questions afterwards. The result is a
JSON-ready :class:`ConditionRun` (transcript, stop reason, the coordinator's per-turn
decisions and discarded drafts, survey answers with raw text and parsed value,
per-variable aggregate, call counts, health counters), which is what ``events.jsonl``
stores for the condition, so a resume restores it without a call.

Every call of a condition (each subject's statements, the coordinator's decisions, the
survey answers and their parsing) carries the condition's unit id (condition and
replicate) as its sample key: two conditions whose prompts coincide draw independent
replies, while a rerun of the same condition is answered by the exact-prompt cache.
With ``agent_names="random"`` the agents speak under seeded human first names
(:mod:`.names`), recorded in the run.

Subjects are either language models (``subjects="llm"``) or a rule-based world registered
for the study (``subjects="rule"``, see :mod:`silicolab.studies.rule_worlds`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from silicolab.core.errors import InputError, LLMError, ParseFailure
from silicolab.core.seeding import child_seed
from silicolab.llm.base import LanguageModel
from silicolab.runs.health import UnitHealth, cut
from silicolab.sim import (
    Attributes,
    Constraint,
    GenerativeAgent,
    Goal,
    Identity,
    SurveyAnswer,
    SurveyQuestion,
    aask_survey,
    arun_conversation,
)
from silicolab.sim.entity import Entity
from silicolab.studies.aggregate import aggregate
from silicolab.studies.design import Condition
from silicolab.studies.hypothesis import COORDINATOR, Hypothesis
from silicolab.studies.names import random_names

AGENT_NAMES = ("roles", "random")
#: How a respondent answers its survey questions (see :func:`arun_condition`).
SURVEY_ORDERS = ("at_once", "in_turn")


@dataclass
class ConditionRun:
    """What one condition produced (JSON-ready through :meth:`to_dict`).

    ``names`` maps each agent id to the name it spoke under when that differs (random
    names; empty when the agents speak under their ids); ``coordination`` holds one entry
    per turn with the coordinator's decision, its options and the drafts it chose among
    (see :func:`silicolab.sim.conversation.coordination`)."""

    condition: Condition
    statements: list[dict[str, Any]]
    stop_reason: str
    survey: list[dict[str, Any]]
    values: dict[str, float | str | None]
    calls: int = 0
    conversation_calls: int = 0
    health: UnitHealth = field(default_factory=lambda: UnitHealth(unit=""))
    error: str | None = None
    names: dict[str, str] = field(default_factory=dict)
    coordination: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "condition_id": self.condition.id,
            "replicate": self.condition.replicate,
            "index": self.condition.index,
            "treatments": dict(self.condition.treatments),
            "names": dict(self.names),
            "statements": self.statements,
            "stop_reason": self.stop_reason,
            "coordination": self.coordination,
            "survey": self.survey,
            "values": self.values,
            "calls": self.calls,
            "conversation_calls": self.conversation_calls,
            "health": self.health.to_dict(),
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ConditionRun:
        """Rebuild a run from :meth:`to_dict` output (events written before replicates,
        names and coordination existed load with replicate 0 and both empty)."""
        condition = Condition(
            data["condition_id"],
            int(data["index"]),
            dict(data["treatments"]),
            int(data.get("replicate") or 0),
        )
        return cls(
            condition=condition,
            statements=list(data["statements"]),
            stop_reason=data["stop_reason"],
            survey=list(data["survey"]),
            values=dict(data["values"]),
            calls=int(data.get("calls", 0)),
            conversation_calls=int(data.get("conversation_calls", 0)),
            health=UnitHealth.from_dict(data.get("health") or {"unit": condition.unit_id}),
            error=data.get("error"),
            names=dict(data.get("names") or {}),
            coordination=list(data.get("coordination") or []),
        )


def opening_text(hypothesis: Hypothesis, names: dict[str, str] | None = None) -> str:
    """The scenario line every conversation prompt starts with, naming the participants
    in the hypothesis' agent order (by ``names`` where given, else by id)."""
    names = names or {}
    roles = ", ".join(f"{names.get(a.name, a.name)} (the {a.role})" for a in hypothesis.agents)
    return f"{hypothesis.scenario}\nParticipants: {roles}."


def build_agents(
    hypothesis: Hypothesis,
    condition: Condition,
    model: LanguageModel,
    *,
    names: dict[str, str] | None = None,
    sample_key: str = "",
) -> list[GenerativeAgent]:
    """The condition's LLM subjects: identity, goal, constraint and attributes (background
    plus the treatment values each one carries), each named by ``names`` (default: its id)
    and drawing its samples under ``sample_key``."""
    names = names or {}
    agents: list[GenerativeAgent] = []
    for spec in hypothesis.agents:
        components = [
            Identity(f"You are {{name}}, the {spec.role}, in this situation: {hypothesis.scenario}")
        ]
        if spec.goal:
            components.append(Goal(spec.goal))
        if spec.constraint:
            components.append(Constraint(spec.constraint))
        attributes = hypothesis.attributes_for(spec, condition.treatments)
        if attributes:
            components.append(Attributes(attributes))
        name = names.get(spec.name, spec.name)
        agents.append(GenerativeAgent(name, model, components, sample_key=sample_key))
    return agents


def build_coordinator(
    hypothesis: Hypothesis, model: LanguageModel, *, sample_key: str = ""
) -> GenerativeAgent:
    """The coordinator: runs the conversation, decides when it ends, reads the transcript
    for the survey questions addressed to it. The agents never see it."""
    return GenerativeAgent(
        COORDINATOR,
        model,
        [
            Identity(
                "You coordinate a simulated social situation as a neutral observer and never "
                f"take part in it. The situation: {hypothesis.scenario}"
            )
        ],
        sample_key=sample_key,
    )


def survey_questions(hypothesis: Hypothesis) -> list[SurveyQuestion]:
    """One :class:`SurveyQuestion` per measurement question of every measured variable."""
    out = []
    for v in hypothesis.measured:
        for q in v.questions:
            out.append(
                SurveyQuestion(
                    variable=v.name,
                    question=q.text,
                    type=v.type,
                    levels=tuple(v.levels),
                    addressee=q.addressee,
                )
            )
    return out


def survey_values(hypothesis: Hypothesis, answers: list[SurveyAnswer]) -> dict[str, Any]:
    """Each measured variable's value: its answers combined by its aggregation rule."""
    out: dict[str, Any] = {}
    for v in hypothesis.measured:
        values = [a.value for a in answers if a.variable == v.name]
        out[v.name] = aggregate(values, v.aggregation, v.type)
    return out


async def arun_condition(
    hypothesis: Hypothesis,
    condition: Condition,
    *,
    subject_model: LanguageModel,
    coordinator_model: LanguageModel,
    seed: int = 0,
    statement_tokens: int | None = None,
    agent_names: str = "roles",
    sample_key: str | None = None,
    survey: str = "at_once",
) -> ConditionRun:
    """Run ``condition`` with LLM subjects. A model that fails for good (an
    :class:`LLMError` or a :class:`ParseFailure` after repairs) ends the condition with
    ``error`` set, the statements so far kept and the failure counted in its health.
    ``statement_tokens`` caps each statement's length. ``agent_names`` is ``"roles"``
    (agents speak under their ids) or ``"random"`` (seeded human first names, drawn with
    ``seed`` for the condition's unit id). ``sample_key`` (default: the condition's unit
    id) is the sample identity every call of the condition carries; a stage that reuses
    condition ids (a follow-on experiment) passes its own prefix with it. ``survey``:
    ``"at_once"`` asks each respondent all its questions from its state after the
    conversation, concurrently (no answer sees another; one round of calls), ``"in_turn"``
    one after another (each answer sees the earlier ones)."""
    _check_choices(agent_names=agent_names, survey=survey)
    unit = condition.unit_id
    key = unit if sample_key is None else sample_key
    ids = [a.name for a in hypothesis.agents]
    names = random_names(ids, seed=seed, unit_id=key) if agent_names == "random" else {}
    agents = build_agents(hypothesis, condition, subject_model, names=names, sample_key=key)
    coordinator = build_coordinator(hypothesis, coordinator_model, sample_key=key)
    everyone: list[Entity] = [*agents, coordinator]
    health = UnitHealth(unit=unit)
    statements: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    stop_reason, answers, error, conversation_calls = "error", [], None, 0
    opening = opening_text(hypothesis, names)
    try:
        conversation = await arun_conversation(
            agents,
            protocol=hypothesis.protocol,
            opening=opening,
            coordinator=coordinator,
            central=names.get(hypothesis.central or "", hypothesis.central),
            order=[names.get(a, a) for a in hypothesis.order] or None,
            max_statements=hypothesis.max_statements,
            seed=child_seed(seed, "conversation", unit) or 0,
            statement_tokens=statement_tokens,
        )
        statements = [{"speaker": s.speaker, "text": s.text} for s in conversation.statements]
        stop_reason = conversation.stop_reason
        conversation_calls = conversation.llm_calls
        turns = conversation.coordination()
        context = f"{opening}\n\nTranscript:\n{conversation.transcript()}"
        # questions address agents by id, whatever name they spoke under
        entities = {**dict(zip(ids, agents, strict=True)), COORDINATOR: coordinator}
        answers = await _asurvey(hypothesis, entities, context, survey)
    except (LLMError, ParseFailure) as exc:
        statements = statements or _logged_statements(exc)
        turns = turns or list(getattr(exc, "coordination", None) or [])
        kind = "parse_failures" if isinstance(exc, ParseFailure) else "model_errors"
        health.note_failure(kind, getattr(exc, "raw", None) or str(exc))
        error = f"{type(exc).__name__}: {cut(str(exc), 300)}"  # names the agent and act
    health.steps = sum(e.step for e in everyone if isinstance(e, GenerativeAgent))
    for a in answers:
        if a.parse_failed:
            health.note_failure("parse_failures", a.raw)
    health.unusable = error is not None or all(a.is_na for a in answers)
    return ConditionRun(
        condition=condition,
        statements=statements,
        stop_reason=stop_reason,
        survey=[a.to_dict() for a in answers],
        values=survey_values(hypothesis, answers) if answers else {},
        calls=health.steps,
        conversation_calls=conversation_calls,
        health=health,
        error=error,
        names=names,
        coordination=turns,
    )


def _check_choices(*, agent_names: str, survey: str) -> None:
    """Refuse an unknown ``agent_names`` or ``survey`` before any call."""
    for name, value, allowed in (("agent_names", agent_names, AGENT_NAMES),
                                 ("survey", survey, SURVEY_ORDERS)):  # fmt: skip
        if value not in allowed:
            raise InputError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")


async def _asurvey(
    hypothesis: Hypothesis, entities: dict[str, Entity], context: str, survey: str
) -> list[SurveyAnswer]:
    """Every measurement question asked of its addressee, ``at_once`` or ``in_turn``."""
    questions = survey_questions(hypothesis)
    return await aask_survey(entities, questions, context=context, concurrent=survey == "at_once")


def _logged_statements(exc: BaseException) -> list[dict[str, Any]]:
    """The statements realized before a conversation failed (the log ``sim`` attaches to
    the error; a drafted-but-discarded reply is not a statement)."""
    log = getattr(exc, "episode_log", None)
    steps = log.steps if log is not None else []
    return [
        {"speaker": s.who, "text": s.output}
        for s in steps
        if s.kind == "statement" or (s.kind == "draft" and s.event == "realized")
    ]


__all__ = [
    "AGENT_NAMES",
    "SURVEY_ORDERS",
    "ConditionRun",
    "arun_condition",
    "build_agents",
    "build_coordinator",
    "opening_text",
    "survey_questions",
    "survey_values",
]
