"""The reply schema of each scientist step.

Constraints that depend on what the chain already knows (the agents' names, a variable's
type and levels, how many causes are wanted) are built into per-call schema classes by
small cached factories, so a violation is a validation error that the repair loop of
:func:`silicolab.llm.astructured` sends back to the model, not a silent fix.
"""

from __future__ import annotations

from functools import cache
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from silicolab.scm.variables import LEVELLED_TYPES, VARIABLE_TYPES, VariableType
from silicolab.sim.conversation import Protocol
from silicolab.sim.survey import parse_number
from silicolab.studies.aggregate import AGGREGATIONS, Aggregation
from silicolab.studies.hypothesis import COORDINATOR
from silicolab.studies.scientist._steps import Reply, slug

#: The types an outcome or measured variable may have: any :data:`VariableType` but nominal.
MeasuredType = Literal["continuous", "ordinal", "binary", "count"]


class Idea(BaseModel):
    """A proposed variable: a short name and one sentence saying what it is."""

    name: str = Field(min_length=1, description="a short name, e.g. 'buyer budget'")
    description: str = Field(default="", description="one sentence saying what it is")


class Role(BaseModel):
    name: str = Field(min_length=1, description="a label for this individual, e.g. 'bidder 1'")
    role: str = Field(min_length=1, description="the singular role, e.g. 'bidder'")


class AgentsReply(Reply):
    agents: list[Role] = Field(min_length=2, description="the individual human participants")

    @field_validator("agents")
    @classmethod
    def _distinct(cls, agents: list[Role]) -> list[Role]:
        names = [slug(a.name) for a in agents]
        if len(set(names)) != len(names):
            raise ValueError(f"agent names must differ: {names}")
        if COORDINATOR in names:
            raise ValueError(f"{COORDINATOR!r} is reserved; call the participant something else")
        return agents


class OutcomeReply(Reply):
    outcomes: list[Idea] = Field(min_length=1, description="candidate outcomes, best first")


class OperationalizeReply(Reply):
    operationalization: str = Field(min_length=1, description="how the value is observed")


class MeasuredTypeReply(Reply):
    type: MeasuredType = Field(description="one of continuous, ordinal, binary, count")


class CauseTypeReply(Reply):
    type: VariableType = Field(description="one of " + ", ".join(VARIABLE_TYPES))


class UnitsReply(Reply):
    units: str = Field(description="the unit, e.g. 'dollars', 'count of offers'")


class TimingReply(Reply):
    when: Literal["before", "during"] = Field(
        description="'before' if fixed before the conversation starts, 'during' if it arises in it"
    )


class Attribute(BaseModel):
    attribute: str = Field(min_length=1, description="second-person name, e.g. 'your age'")
    value: str = Field(min_length=1, description="its value for this agent")


class ProfileReply(Reply):
    goal: str = Field(min_length=1, description="the agent's goal, second person")
    constraint: str = Field(default="", description="one constraint, second person")
    background: list[Attribute] = Field(
        default_factory=list, description="other attributes the agent needs, with values"
    )


class Drop(BaseModel):
    agent: str
    attribute: str


class Revision(BaseModel):
    variable: str
    values: list[str]


class OverlapReply(Reply):
    drop: list[Drop] = Field(
        default_factory=list,
        description="background attributes that conflict with or repeat a treatment attribute",
    )
    revise: list[Revision] = Field(
        default_factory=list,
        description="treatments whose values should change so that they overlap sensibly",
    )


def check_values(kind: str, levels: tuple[str, ...], values: list[str]) -> None:
    """Raise ``ValueError`` unless ``values`` can be treatment values of this type."""
    if len(values) < 2 or len(set(values)) != len(values):
        raise ValueError(f"give at least two distinct values, got {values}")
    if kind in ("continuous", "count"):
        bad = [v for v in values if parse_number(v) is None]
        if bad:
            raise ValueError(f"each {kind} value must state exactly one number; {bad} do not")
    if kind == "binary" and len(values) != 2:
        raise ValueError(f"a binary treatment has exactly two values, got {values}")
    outside = [v for v in values if v not in levels]
    if levels and kind in LEVELLED_TYPES and outside:
        raise ValueError(f"values {outside} are not among the levels {list(levels)}")


@cache
def causes_schema(minimum: int) -> type[Reply]:
    """At least ``minimum`` proposed causes (the caller keeps the first ones it asked for)."""

    class CausesReply(Reply):
        causes: list[Idea] = Field(min_length=minimum, description="the proposed causes")

    return CausesReply


@cache
def levels_schema(kind: str) -> type[Reply]:
    """Levels, lowest first: two for binary, at least two for ordinal and nominal."""

    class LevelsReply(Reply):
        levels: list[str] = Field(description="the levels, lowest first")

        @field_validator("levels")
        @classmethod
        def _enough(cls, levels: list[str]) -> list[str]:
            if len(set(levels)) != len(levels):
                raise ValueError(f"levels repeat: {levels}")
            if kind == "binary" and len(levels) != 2:
                raise ValueError(f"a binary variable has exactly two levels, got {levels}")
            if kind in ("ordinal", "nominal") and len(levels) < 2:
                raise ValueError(f"a {kind} variable needs at least two levels")
            return levels

    return LevelsReply


@cache
def questions_schema(agents: tuple[str, ...]) -> type[Reply]:
    """Survey questions addressed to one of ``agents`` or the coordinator."""
    Addressee = Literal[(*agents, COORDINATOR)]  # type: ignore[valid-type]

    class Ask(BaseModel):
        addressee: Addressee = Field(description="who answers")  # type: ignore[valid-type]
        text: str = Field(min_length=1, description="the question")

    class QuestionsReply(Reply):
        questions: list[Ask] = Field(min_length=1, description="as few questions as possible")
        aggregation: Aggregation = Field(
            default="mean", description="how several answers combine: " + ", ".join(AGGREGATIONS)
        )

    return QuestionsReply


@cache
def scope_schema(agents: tuple[str, ...]) -> type[Reply]:
    """Individual (one named agent) or scenario scope."""
    AgentName = Literal[agents]  # type: ignore[valid-type]

    class ScopeReply(Reply):
        scope: Literal["individual", "scenario"] = Field(description="individual or scenario")
        agent: AgentName | None = Field(  # type: ignore[valid-type]
            default=None, description="the agent it belongs to (individual scope)"
        )

        @model_validator(mode="after")
        def _agent(self) -> ScopeReply:
            if self.scope == "individual" and self.agent is None:
                raise ValueError("an individual-scope variable names its agent")
            return self

    return ScopeReply


@cache
def variation_schema(kind: str, levels: tuple[str, ...]) -> type[Reply]:
    """A second-person attribute and the treatment values it takes."""

    class VariationReply(Reply):
        attribute: str = Field(min_length=1, description="second person, e.g. 'your budget'")
        values: list[str] = Field(description="the treatment values, lowest first")

        @field_validator("values")
        @classmethod
        def _fit(cls, values: list[str]) -> list[str]:
            check_values(kind, levels, values)
            return values

    return VariationReply


class VisibilityReply(Reply):
    visibility: Literal["private", "public"] = Field(description="private or public")
    public_name: str = Field(default="", description="what the others call it, if public")


@cache
def protocol_schema(agents: tuple[str, ...]) -> type[Reply]:
    """One of the six protocols, a speaking order and (central protocols) the centre."""
    AgentName = Literal[agents]  # type: ignore[valid-type]

    class ProtocolReply(Reply):
        protocol: Protocol = Field(description="one of the six protocols")
        order: list[AgentName] = Field(  # type: ignore[valid-type]
            default_factory=list, description="every agent once, in speaking order"
        )
        central: AgentName | None = Field(  # type: ignore[valid-type]
            default=None, description="the central agent (central protocols only)"
        )

        @model_validator(mode="after")
        def _coherent(self) -> ProtocolReply:
            if self.order and sorted(self.order) != sorted(agents):
                raise ValueError(f"'order' must list every agent once: {list(agents)}")
            if self.protocol.startswith("central") and self.central is None:
                raise ValueError(f"protocol {self.protocol} needs 'central'")
            return self

    return ProtocolReply


__all__ = [
    "AgentsReply",
    "CauseTypeReply",
    "Idea",
    "MeasuredTypeReply",
    "OperationalizeReply",
    "OutcomeReply",
    "OverlapReply",
    "ProfileReply",
    "TimingReply",
    "UnitsReply",
    "VisibilityReply",
    "causes_schema",
    "check_values",
    "levels_schema",
    "protocol_schema",
    "questions_schema",
    "scope_schema",
    "variation_schema",
]
