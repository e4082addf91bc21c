"""Automated social science: scenario -> hypothesized SCM -> LLM-agent experiment -> fitted
SCM -> predictions -> follow-on (Manning, Zhu & Horton 2024). See ``docs/studies.md``.

The names below are cheap to import; the steps that need the LLM or estimation stacks
live in their modules: :mod:`.scientist` (``generate_hypothesis``), :mod:`.study`
(``run_study``), :mod:`.predict` (``predict``), :mod:`.follow_on` (``follow_on``),
:mod:`.pipeline` (``StudyOptions``, ``StudyModels``), :mod:`.offline` (scripted roles).
"""

from silicolab.studies.design import Condition, Design, condition_id, make_design
from silicolab.studies.examples import EXAMPLES, load_example
from silicolab.studies.files import read_hypothesis, write_hypothesis
from silicolab.studies.hypothesis import (
    AgentSpec,
    Decision,
    Hypothesis,
    Question,
    StudyVariable,
)

__all__ = [
    "EXAMPLES",
    "AgentSpec",
    "Condition",
    "Decision",
    "Design",
    "Hypothesis",
    "Question",
    "StudyVariable",
    "condition_id",
    "load_example",
    "make_design",
    "read_hypothesis",
    "write_hypothesis",
]
