"""The agent side of the scientist chain: who takes part, what each wants, how they talk.

Steps: the participants (singular roles, two or more); each agent's goal, constraint and
the background attributes it needs (second person); the attribute-overlap cross-check of
the paper's §6.2.1, where the model checks the background attributes against the
treatment attributes (a conflicting or duplicate background attribute is dropped) and the
treatment values against each other (values that never overlap sensibly, like a seller's
minimum always above the buyer's budget, are revised); and the conversation protocol.
"""

from __future__ import annotations

from silicolab.core.errors import InputError
from silicolab.studies.hypothesis import AgentSpec, StudyVariable
from silicolab.studies.scientist._schemas import (
    AgentsReply,
    OverlapReply,
    ProfileReply,
    check_values,
    protocol_schema,
)
from silicolab.studies.scientist._steps import Scientist, slug


async def propose_agents(sci: Scientist) -> list[AgentSpec]:
    """The participants of the scenario, as agents with identifier names and roles."""
    reply = await sci.ask("agents", AgentsReply)
    return [AgentSpec(name=slug(a.name), role=a.role.strip()) for a in reply.agents]


async def build_profiles(sci: Scientist, variables: list[StudyVariable]) -> list[AgentSpec]:
    """Every agent of ``sci.agents`` with its goal, constraint and background attributes.

    The treatment attributes each agent will carry are shown so that the background
    attributes do not restate them."""
    out = []
    for agent in sci.agents:
        carried = [
            v.attribute
            for v in variables
            if v.role == "cause" and (v.scope == "scenario" or v.agent == agent.name)
        ]
        reply = await sci.ask(
            "agent_profile",
            ProfileReply,
            subject=agent.name,
            agent=agent,
            carried=carried,
            variables=variables,
        )
        attributes = {b.attribute.strip(): b.value.strip() for b in reply.background}
        out.append(
            agent.model_copy(
                update={
                    "goal": reply.goal.strip(),
                    "constraint": reply.constraint.strip(),
                    "attributes": attributes,
                }
            )
        )
    return out


async def cross_check(
    sci: Scientist, agents: list[AgentSpec], variables: list[StudyVariable]
) -> tuple[list[AgentSpec], list[StudyVariable]]:
    """The §6.2.1 cross-check: drop background attributes that conflict with or repeat a
    treatment attribute, and apply revised treatment values; each change is logged."""
    treatments = [v for v in variables if v.role == "cause"]
    reply = await sci.ask("overlap", OverlapReply, profiles=agents, treatments=treatments)
    by_name = {a.name: a for a in agents}
    for drop in reply.drop:
        agent = by_name.get(slug(drop.agent)) or by_name.get(drop.agent)
        if agent is None or drop.attribute not in agent.attributes:
            continue  # nothing to drop; the model's rationale is logged with the step
        kept = {k: v for k, v in agent.attributes.items() if k != drop.attribute}
        by_name[agent.name] = agent.model_copy(update={"attributes": kept})
        sci.record(
            f"{agent.name}.drop_attribute",
            drop.attribute,
            f"dropped after the overlap check: {reply.explanation}",
        )
    revised = {r.variable: r.values for r in reply.revise}
    out = []
    for v in variables:
        values = revised.get(v.name)
        if values is None or v.role != "cause" or values == v.values:
            out.append(v)
            continue
        try:
            check_values(v.type, tuple(v.levels), values)
        except ValueError as exc:
            raise InputError(
                f"scientist step 'overlap' proposed unusable values for {v.name!r}: {exc}"
            ) from None
        out.append(v.model_copy(update={"values": list(values)}))
        sci.record(f"{v.name}.revise_values", values, reply.explanation)
    return [by_name[a.name] for a in agents], out


async def choose_protocol(sci: Scientist) -> tuple[str, list[str], str | None]:
    """The conversation protocol, the speaking order and the central agent (if any)."""
    names = tuple(a.name for a in sci.agents)
    reply = await sci.ask("protocol", protocol_schema(names), profiles=sci.agents)
    order = list(reply.order) or list(names)  # type: ignore[attr-defined]
    central = reply.central if reply.protocol.startswith("central") else None  # type: ignore[attr-defined]
    return reply.protocol, order, central  # type: ignore[attr-defined]


__all__ = ["build_profiles", "choose_protocol", "cross_check", "propose_agents"]
