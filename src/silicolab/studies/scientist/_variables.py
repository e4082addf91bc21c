"""Building the variables of a hypothesized SCM, one scientist step at a time.

A measured variable (the outcome, or a mediator) is operationalized, typed, given units,
levels and survey questions, and then gets its causes. Each cause is first checked for
timing: a cause fixed before the run becomes a treatment (operationalization, type,
units, levels, scope, proxy attribute with treatment values, visibility); a cause realised
during the run becomes a mediator and is built like the outcome, down to
:data:`MAX_DEPTH`, below which only causes fixed before the run are asked for. The same
:func:`build_cause` serves hypothesis generation and follow-on planning.
"""

from __future__ import annotations

from typing import Any

from silicolab.studies.hypothesis import Question, StudyVariable
from silicolab.studies.scientist._schemas import (
    CauseTypeReply,
    Idea,
    MeasuredTypeReply,
    OperationalizeReply,
    TimingReply,
    UnitsReply,
    VisibilityReply,
    causes_schema,
    levels_schema,
    questions_schema,
    scope_schema,
    variation_schema,
)
from silicolab.studies.scientist._steps import Scientist, slug, unique

#: Deepest layer of causes that may still be realised during the run. The outcome's causes
#: are layer 1 and may be mediators; a mediator's causes (layer 2, the recursion limit) are
#: asked for as fixed before the run only.
MAX_DEPTH = 1


def _agent_names(sci: Scientist) -> tuple[str, ...]:
    return tuple(a.name for a in sci.agents)


async def describe_basics(
    sci: Scientist, name: str, description: str, *, measured: bool
) -> dict[str, Any]:
    """The facts of one variable from four steps: name, description, operationalization,
    type, units and levels."""
    facts: dict[str, Any] = {"name": name, "description": description, "measured": measured}
    op = await sci.ask("operationalize", OperationalizeReply, subject=name, variable=facts)
    facts["operationalization"] = op.operationalization
    type_schema = MeasuredTypeReply if measured else CauseTypeReply
    kind = (await sci.ask("variable_type", type_schema, subject=name, variable=facts)).type
    facts["type"] = kind
    units = (await sci.ask("units", UnitsReply, subject=name, variable=facts)).units
    facts["units"] = units
    levels = await sci.ask("levels", levels_schema(kind), subject=name, variable=facts)
    facts["levels"] = list(levels.levels)  # type: ignore[attr-defined]
    del facts["measured"]
    return facts


async def propose_causes(
    sci: Scientist,
    effect: StudyVariable,
    count: int,
    *,
    exact: bool,
    fixed_before: bool,
    existing: list[StudyVariable] | None = None,
    findings: list[str] | None = None,
) -> list[Idea]:
    """Ask for ``count`` causes of ``effect`` (exactly, or up to, ``count``), optionally
    only ones fixed before the run, new relative to ``existing``, in the light of
    ``findings`` (one line per tested path)."""
    schema = causes_schema(count if exact else 1)
    reply = await sci.ask(
        "causes",
        schema,
        subject=effect.name,
        effect=effect,
        count=count,
        exact=exact,
        fixed_before=fixed_before,
        existing=existing or [],
        findings=findings or [],
    )
    return list(reply.causes)[:count]  # type: ignore[attr-defined]


async def build_measured(
    sci: Scientist, name: str, idea: Idea, *, role: str, depth: int, n_causes: int
) -> list[StudyVariable]:
    """The measured variable ``name`` and (after it) every variable built for its causes."""
    facts = await describe_basics(sci, name, idea.description, measured=True)
    asked = await sci.ask(
        "questions", questions_schema(_agent_names(sci)), subject=name, variable=facts
    )
    questions = [Question(addressee=q.addressee, text=q.text) for q in asked.questions]  # type: ignore[attr-defined]
    variable = StudyVariable(
        **facts,
        role=role,  # type: ignore[arg-type]
        questions=questions,
        aggregation=asked.aggregation,  # type: ignore[attr-defined]
    )
    ideas = await propose_causes(
        sci,
        variable,
        n_causes,
        exact=depth == 0,
        fixed_before=depth >= MAX_DEPTH,
    )
    built: list[StudyVariable] = []
    causes: list[str] = []
    for cause in ideas:
        subtree = await build_cause(sci, cause, depth=depth + 1, n_causes=n_causes)
        causes.append(subtree[0].name)
        built += subtree
    return [variable.model_copy(update={"causes": causes}), *built]


async def build_cause(
    sci: Scientist, idea: Idea, *, depth: int, n_causes: int
) -> list[StudyVariable]:
    """A cause: a treatment, or (realised during the run, above the depth limit) a
    mediator followed by its own causes. Returns the variables built, this one first."""
    name = unique(slug(idea.name), sci.taken)
    if depth <= MAX_DEPTH:
        timing = await sci.ask(
            "timing",
            TimingReply,
            subject=name,
            variable={"name": name, "description": idea.description},
        )
        if timing.when == "during":
            return await build_measured(
                sci, name, idea, role="mediator", depth=depth, n_causes=max(1, n_causes - 1)
            )
    return [await build_treatment(sci, name, idea)]


async def build_treatment(sci: Scientist, name: str, idea: Idea) -> StudyVariable:
    """The cause ``name``, fixed before the run, with its proxy attribute and values."""
    basics = await describe_basics(sci, name, idea.description, measured=False)
    facts = dict(basics)
    scope = await sci.ask("scope", scope_schema(_agent_names(sci)), subject=name, variable=facts)
    facts |= {"scope": scope.scope, "agent": scope.agent}  # type: ignore[attr-defined]
    schema = variation_schema(basics["type"], tuple(basics["levels"]))
    varied = await sci.ask("variation", schema, subject=name, variable=facts)
    facts |= {"attribute": varied.attribute, "values": varied.values}  # type: ignore[attr-defined]
    visibility, public_name = "private", ""
    if scope.scope == "individual":  # type: ignore[attr-defined]
        shown = await sci.ask("visibility", VisibilityReply, subject=name, variable=facts)
        visibility, public_name = shown.visibility, shown.public_name
    return StudyVariable(
        **basics,
        role="cause",
        values=list(varied.values),  # type: ignore[attr-defined]
        scope=scope.scope,  # type: ignore[attr-defined]
        agent=scope.agent if scope.scope == "individual" else None,  # type: ignore[attr-defined]
        attribute=varied.attribute,  # type: ignore[attr-defined]
        visibility=visibility,  # type: ignore[arg-type]
        public_name=public_name if visibility == "public" else "",
    )


__all__ = ["MAX_DEPTH", "build_cause", "build_measured", "build_treatment", "propose_causes"]
