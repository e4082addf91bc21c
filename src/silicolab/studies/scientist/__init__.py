"""The study's scientist: from a scenario to a hypothesis, one LLM step at a time (§6.1-6.3).

:func:`generate_hypothesis` (and its async twin) runs the steps and returns the editable
:class:`~silicolab.studies.hypothesis.Hypothesis`; :func:`ajournaled_hypothesis` does the
same through a step journal, so an interrupted generation resumes at its first missing step.
The private modules hold the parts: ``_generate`` (the order of the steps), ``_steps`` (the
:class:`Scientist` that asks one step and parses its :class:`Reply`), ``_schemas`` (the
replies' shapes), ``_variables`` (outcome, causes, measurement), ``_agents`` (the agents'
profiles and the cross-check) and ``_journal`` (the step journal).
"""

from __future__ import annotations

from silicolab.studies.scientist._agents import cross_check
from silicolab.studies.scientist._generate import agenerate_hypothesis, generate_hypothesis
from silicolab.studies.scientist._journal import ajournaled_hypothesis, open_chain
from silicolab.studies.scientist._steps import Reply, Scientist
from silicolab.studies.scientist._variables import MAX_DEPTH, build_cause, propose_causes

__all__ = [
    "MAX_DEPTH",
    "Reply",
    "Scientist",
    "agenerate_hypothesis",
    "ajournaled_hypothesis",
    "build_cause",
    "cross_check",
    "generate_hypothesis",
    "open_chain",
    "propose_causes",
]
