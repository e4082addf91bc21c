"""A scripted scientist: a test double that answers the scientist chain from a known target.

:func:`scripted_scientist` returns a reply function for the ``scripted`` model that answers
every step of :func:`~silicolab.studies.scientist.agenerate_hypothesis` (and of follow-on
planning) so that the chain rebuilds ``target``: its agents, variables and protocol. It
reads the step and its subject from the marker lines every scientist prompt starts with
(``Step: units``, ``Subject: buyer_budget``), never from the wording. It is not a model of
a scientist: the offline demo and the tests use it to exercise the chain end to end.

>>> from silicolab.llm import load_model
>>> from silicolab.studies import load_example
>>> model = load_model("scripted", fn=scripted_scientist(load_example("mug")))
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from silicolab.core.errors import InputError
from silicolab.llm import Request
from silicolab.studies.hypothesis import Hypothesis, StudyVariable
from silicolab.studies.world import stable_identity

_STEP = re.compile(r"^Step: *(\S+)", re.MULTILINE)
_SUBJECT = re.compile(r"^Subject: *(.+?) *$", re.MULTILINE)
_EXISTING = re.compile(r"^Variables already in the study.*?: (.+)\.$", re.MULTILINE)


def step_of(request: Request) -> tuple[str, str, str]:
    """``(step, subject, prompt)`` of a scientist request: the marker lines of the first
    user message that has them (a repair turn's last message has none)."""
    for message in request.messages:
        if message["role"] == "user":
            step = _STEP.search(message["content"])
            if step:
                subject = _SUBJECT.search(message["content"])
                return step.group(1), subject.group(1) if subject else "", message["content"]
    return "", "", ""


def _facts(v: StudyVariable) -> dict[str, Any]:
    return {
        "operationalize": {"operationalization": v.operationalization or v.description or v.name},
        "variable_type": {"type": v.type},
        "units": {"units": v.units},
        "levels": {"levels": list(v.levels)},
        "questions": {
            "questions": [q.model_dump() for q in v.questions],
            "aggregation": v.aggregation,
        },
        "timing": {"when": "during" if v.role == "mediator" else "before"},
        "scope": {"scope": v.scope, "agent": v.agent},
        "variation": {"attribute": v.attribute, "values": list(v.values)},
        "visibility": {"visibility": v.visibility, "public_name": v.public_name},
    }


def _causes(target: Hypothesis, subject: str, prompt: str) -> dict[str, Any]:
    found = _EXISTING.search(prompt)
    existing = {x.strip() for x in found.group(1).split(",")} if found else set()
    causes = [target.variable(c) for c in target.variable(subject).causes if c not in existing]
    return {"causes": [{"name": c.name, "description": c.description} for c in causes]}


def _agent(target: Hypothesis, name: str) -> dict[str, Any]:
    agent = next(a for a in target.agents if a.name == name)
    return {
        "goal": agent.goal or f"You want to play your part as {agent.role}.",
        "constraint": agent.constraint,
        "background": [{"attribute": k, "value": v} for k, v in agent.attributes.items()],
    }


def _answer(target: Hypothesis, step: str, subject: str, prompt: str) -> dict[str, Any]:
    if step == "agents":
        return {"agents": [{"name": a.name, "role": a.role} for a in target.agents]}
    if step == "outcome":
        o = target.outcome
        return {"outcomes": [{"name": o.name, "description": o.description}]}
    if step == "causes":
        return _causes(target, subject, prompt)
    if step == "agent_profile":
        return _agent(target, subject)
    if step == "overlap":
        return {"drop": [], "revise": []}
    if step == "protocol":
        return {"protocol": target.protocol, "order": target.order, "central": target.central}
    facts = _facts(target.variable(subject))
    if step in facts:
        return facts[step]
    raise InputError(f"the scripted scientist has no answer for step {step!r}")


def scripted_scientist(target: Hypothesis) -> Callable[[Request], str]:
    """A reply function for ``load_model("scripted", fn=...)`` that makes the scientist
    chain rebuild ``target`` (see the module docstring)."""

    def reply(request: Request) -> str:
        step, subject, prompt = step_of(request)
        if not step:
            raise InputError("the scripted scientist got a prompt without a 'Step:' line")
        payload = _answer(target, step, subject, prompt)
        return json.dumps({"explanation": f"scripted answer for {step}", **payload})

    return stable_identity(reply, target)


__all__ = ["scripted_scientist", "step_of"]
