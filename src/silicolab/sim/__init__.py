"""Generative agent-based simulation: entities, components, memory, logs, conversations,
surveys, a Game Master with grounded variables and tools, and the engines that run them.

>>> from silicolab.llm import load_model
>>> from silicolab.sim import ActionSpec, GenerativeAgent, Identity, Observation
>>> alice = GenerativeAgent("Alice", load_model("scripted", replies=["Hello."]),
...                         [Identity("{name} is a baker."), Observation()])
>>> alice.observe("Bob enters the shop.")
>>> alice.act(ActionSpec("What does {name} say?"))
'Hello.'
"""

from silicolab.sim.agents import GenerativeAgent, RuleAgent, repair_choice, stable_sample_index
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
from silicolab.sim.conversation import (
    PROTOCOLS,
    Conversation,
    Statement,
    arun_conversation,
    run_conversation,
)
from silicolab.sim.engines import arun_simultaneous, run_sequential, run_simultaneous
from silicolab.sim.entity import ActionSpec, Entity
from silicolab.sim.game_master import Attempt, Clock, GameMaster, Resolution, Tool
from silicolab.sim.grounded import GroundedState, GroundedVariable
from silicolab.sim.log import EpisodeLog, StepLog
from silicolab.sim.memory import AssociativeMemory, HashingEmbedder, MemoryItem
from silicolab.sim.nested import NestedGame, NestedOutcome
from silicolab.sim.survey import SurveyAnswer, SurveyQuestion, aask_survey, ask_survey

__all__ = [
    "PROTOCOLS",
    "ActionSpec",
    "AssociativeMemory",
    "Attempt",
    "Attributes",
    "Clock",
    "Component",
    "Constraint",
    "Conversation",
    "Entity",
    "EpisodeLog",
    "GameMaster",
    "GenerativeAgent",
    "Goal",
    "GroundedState",
    "GroundedVariable",
    "HashingEmbedder",
    "Identity",
    "MemoryItem",
    "MemoryRetrieval",
    "NestedGame",
    "NestedOutcome",
    "Observation",
    "Plan",
    "Resolution",
    "RuleAgent",
    "Statement",
    "StepLog",
    "SurveyAnswer",
    "SurveyQuestion",
    "Tool",
    "aask_survey",
    "arun_conversation",
    "arun_simultaneous",
    "ask_survey",
    "repair_choice",
    "run_conversation",
    "run_sequential",
    "run_simultaneous",
    "stable_sample_index",
]
