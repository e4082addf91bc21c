"""Entity prefabs: the simulated people (and rule-driven stand-ins) a simulation file names.

* ``basic`` — identity, goal, traits, constraints, recent observations and associative
  memory: one model call per act;
* ``minimal`` — identity and recent observations only (the cheapest prompt);
* ``with_plan`` — ``basic`` plus a plan the agent follows (plain text: no extra call);
* ``rule`` — a named Python policy (:data:`POLICIES`), no language model;
* ``scripted`` — plays fixed lines in order, no language model (a confederate);
* ``puppet`` — a ``basic`` agent whose answers to matching calls to action are fixed
  (Concordia's puppet: a scripted part inside an otherwise generative person).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pydantic import Field

from silicolab.core.errors import InputError
from silicolab.sim.agents import GenerativeAgent, RuleAgent
from silicolab.sim.components import (
    Attributes,
    Component,
    Constraint,
    Goal,
    Identity,
    MemoryRetrieval,
    Observation,
    Plan,
)
from silicolab.sim.entity import ActionSpec
from silicolab.sim.memory import AssociativeMemory
from silicolab.sim.prefabs.base import BuildContext, Params, Prefab, register

Policy = Callable[[RuleAgent, ActionSpec], str]


class PersonParams(Params):
    """Who a generative person is. ``identity`` may use ``{name}``."""

    identity: str = "{name} is a person."
    goal: str = ""
    traits: dict[str, Any] = Field(default_factory=dict)
    constraints: list[str] = Field(default_factory=list)
    observations: int = Field(12, ge=1, description="recent observations in each prompt")
    memories: int = Field(0, ge=0, description="associative memories retrieved per act")
    formative_memories: list[str] = Field(
        default_factory=list, description="memories the person starts with"
    )


def _person(name: str, p: PersonParams, ctx: BuildContext, extra: list[Component]) -> Any:
    components: list[Component] = [Identity(p.identity)]
    if p.traits:
        components.append(Attributes(p.traits))
    if p.goal:
        components.append(Goal(p.goal))
    if p.constraints:
        components.append(Constraint(*p.constraints))
    components += extra
    components.append(Observation(n=p.observations))
    memory = None
    if p.memories or p.formative_memories:
        memory = AssociativeMemory()
        for text in p.formative_memories:
            memory.add(text, time=0.0, importance=0.9)
        if p.memories:
            components.append(MemoryRetrieval(k=p.memories))
    return components, memory


@register
class Basic(Prefab):
    name = "basic"
    kind = "entity"
    description = "a generative person: identity, goal, traits, observations, memory"
    Params = PersonParams

    @classmethod
    def build(cls, name: str, params: PersonParams, ctx: BuildContext) -> GenerativeAgent:
        components, memory = _person(name, params, ctx, [])
        return GenerativeAgent(name, ctx.model, components, memory, sample_key=ctx.sample_key)


class MinimalParams(Params):
    identity: str = "{name} is a person."
    observations: int = Field(12, ge=1)


@register
class Minimal(Prefab):
    name = "minimal"
    kind = "entity"
    description = "a generative person with only an identity and recent observations"
    Params = MinimalParams

    @classmethod
    def build(cls, name: str, params: MinimalParams, ctx: BuildContext) -> GenerativeAgent:
        components = [Identity(params.identity), Observation(n=params.observations)]
        return GenerativeAgent(name, ctx.model, components, sample_key=ctx.sample_key)


class PlanParams(PersonParams):
    plan: str = Field(..., min_length=1, description="what the person means to do")


@register
class WithPlan(Prefab):
    name = "with_plan"
    kind = "entity"
    description = "a basic person who follows a written plan (no extra model call)"
    Params = PlanParams

    @classmethod
    def build(cls, name: str, params: PlanParams, ctx: BuildContext) -> GenerativeAgent:
        components, memory = _person(name, params, ctx, [Plan(params.plan)])
        return GenerativeAgent(name, ctx.model, components, memory, sample_key=ctx.sample_key)


class PuppetParams(PersonParams):
    fixed: dict[str, str] = Field(
        ..., min_length=1, description="regex on the call to action -> the fixed answer"
    )


class PuppetAgent(GenerativeAgent):
    """A generative agent whose answer to a call to action matching a ``fixed`` pattern
    is that pattern's answer, without a model call."""

    def __init__(self, *args: Any, fixed: dict[str, str], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fixed = [(re.compile(p), a) for p, a in fixed.items()]

    async def aact(self, spec: ActionSpec) -> str:
        question = spec.call_to_action.replace("{name}", self.name)
        for pattern, answer in self.fixed:
            if pattern.search(question):
                self.step += 1
                self.events += 1
                return spec.validate(answer)
        return await super().aact(spec)


@register
class Puppet(Prefab):
    name = "puppet"
    kind = "entity"
    description = "a basic person with fixed answers to matching calls to action"
    Params = PuppetParams

    @classmethod
    def build(cls, name: str, params: PuppetParams, ctx: BuildContext) -> PuppetAgent:
        for pattern in params.fixed:
            try:
                re.compile(pattern)
            except re.error as err:
                raise InputError(f"puppet {name}: fixed pattern {pattern!r}: {err}") from None
        components, memory = _person(name, params, ctx, [])
        return PuppetAgent(
            name, ctx.model, components, memory, sample_key=ctx.sample_key, fixed=params.fixed
        )


class ScriptedParams(Params):
    lines: list[str] = Field(..., min_length=1, description="answers in order")
    repeat: bool = Field(True, description="start again after the last line (else keep it)")


@register
class Scripted(Prefab):
    name = "scripted"
    kind = "entity"
    description = "plays fixed lines in order, no language model (a confederate)"
    Params = ScriptedParams

    @classmethod
    def build(cls, name: str, params: ScriptedParams, ctx: BuildContext) -> RuleAgent:
        lines, repeat = list(params.lines), params.repeat

        def policy(agent: RuleAgent, spec: ActionSpec) -> str:
            i = agent.step % len(lines) if repeat else min(agent.step, len(lines) - 1)
            line = lines[i].replace("{name}", agent.name)
            if spec.kind == "choice" and line not in spec.options:
                raise InputError(
                    f"scripted entity {agent.name}: line {line!r} is not one of {spec.options}"
                )
            return line

        return RuleAgent(name, policy)


POLICIES: dict[str, Callable[..., Policy]] = {}
"""Named rule policies for the ``rule`` prefab: name -> factory(**args) -> policy."""


def policy(name: str) -> Callable[[Callable[..., Policy]], Callable[..., Policy]]:
    """Decorator registering a policy factory under ``name``."""

    def add(factory: Callable[..., Policy]) -> Callable[..., Policy]:
        POLICIES[name] = factory
        return factory

    return add


@policy("constant")
def _constant(answer: str) -> Policy:
    """Always gives ``answer``."""
    return lambda agent, spec: answer


@policy("first_option")
def _first_option(otherwise: str = "waits.") -> Policy:
    """Picks the first option of a choice, else says ``otherwise``."""
    return lambda agent, spec: spec.options[0] if spec.kind == "choice" else otherwise


class RuleParams(Params):
    policy: str = Field(..., description="a name in silicolab.sim.prefabs.entities.POLICIES")
    args: dict[str, Any] = Field(default_factory=dict)
    state: dict[str, Any] = Field(default_factory=dict, description="the policy's start data")


@register
class Rule(Prefab):
    name = "rule"
    kind = "entity"
    description = "a Python policy chosen by name, no language model"
    Params = RuleParams

    @classmethod
    def build(cls, name: str, params: RuleParams, ctx: BuildContext) -> RuleAgent:
        factory = POLICIES.get(params.policy)
        if factory is None:
            raise InputError(
                f"entity {name}: unknown policy {params.policy!r}; known: "
                f"{', '.join(sorted(POLICIES))}"
            )
        try:
            made = factory(**params.args)
        except TypeError as err:
            raise InputError(f"entity {name}: policy {params.policy!r}: {err}") from None
        return RuleAgent(name, made, dict(params.state))
