"""Components: small keyed objects that each contribute one piece of an agent's prompt.

A :class:`GenerativeAgent` asks every component for ``context(spec, agent)`` before it
acts, joins the non-empty pieces in order under their titles, and logs each piece. Every
observation is passed to ``update``. A component's state is plain JSON data returned by
``state_dict`` so that checkpoints round-trip exactly.

Writing one is a small class::

    class Mood(Component):
        key = "mood"

        def __init__(self, mood: str = "calm"):
            self.mood = mood

        def context(self, spec, agent):
            return f"{agent.name} feels {self.mood}."

        def update(self, observation):
            if "insult" in observation:
                self.mood = "annoyed"
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from silicolab.core.errors import InputError

if TYPE_CHECKING:
    from silicolab.sim.agents import GenerativeAgent
    from silicolab.sim.entity import ActionSpec


class Component:
    """Base class of agent components; override :meth:`context`, optionally :meth:`update`.

    ``key`` names the component in logs and checkpoints (unique within an agent);
    ``title`` heads its section of the prompt ("" for no heading). The default
    ``state_dict`` / ``load_state`` save the instance's public JSON-ready attributes.
    """

    key: str = "component"
    title: str = ""

    def context(self, spec: ActionSpec, agent: GenerativeAgent) -> str:
        """This component's text for the prompt of the coming act ("" contributes nothing)."""
        return ""

    def update(self, observation: str) -> None:
        """React to one observation the agent received (default: ignore it)."""

    def state_dict(self) -> dict[str, Any]:
        """JSON-ready state: public attributes other than ``key`` and ``title``."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_") and k not in ("key",)}

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned."""
        for k, v in state.items():
            setattr(self, k, v)


class Identity(Component):
    """Who the agent is: a fixed description (``"{name}"`` is filled in)."""

    key = "identity"
    title = "Identity"

    def __init__(self, description: str):
        self.description = description

    def context(self, spec: ActionSpec, agent: GenerativeAgent) -> str:
        return self.description.replace("{name}", agent.name)


class Goal(Component):
    """What the agent is trying to achieve."""

    key = "goal"
    title = "Goal"

    def __init__(self, goal: str):
        self.goal = goal

    def context(self, spec: ActionSpec, agent: GenerativeAgent) -> str:
        return self.goal


class Constraint(Component):
    """Rules the agent must respect, one per line."""

    key = "constraint"
    title = "Constraints"

    def __init__(self, *rules: str):
        self.rules = list(rules)

    def context(self, spec: ActionSpec, agent: GenerativeAgent) -> str:
        return "\n".join(f"- {r}" for r in self.rules)


class Attributes(Component):
    """Named traits (age, occupation, personality scores …) rendered as ``name: value``."""

    key = "attributes"
    title = "Attributes"

    def __init__(self, attributes: Mapping[str, Any]):
        self.attributes = dict(attributes)

    def context(self, spec: ActionSpec, agent: GenerativeAgent) -> str:
        return "\n".join(f"{k}: {v}" for k, v in self.attributes.items())


class Observation(Component):
    """The last ``n`` observations, oldest first (counts observations, not memories)."""

    key = "observation"
    title = "Recent observations"

    def __init__(self, n: int = 10):
        if n < 1:
            raise InputError("Observation n must be at least 1")
        self.n = n
        self.observations: list[str] = []

    def update(self, observation: str) -> None:
        self.observations.append(observation)
        del self.observations[: -self.n]

    def context(self, spec: ActionSpec, agent: GenerativeAgent) -> str:
        return "\n".join(self.observations)


class MemoryRetrieval(Component):
    """The ``k`` memories most associated with the call to action (and recent events).

    Stateless: the memories live in the agent's :class:`AssociativeMemory`.
    """

    key = "memory"
    title = "Relevant memories"

    def __init__(self, k: int = 5):
        self.k = k

    def context(self, spec: ActionSpec, agent: GenerativeAgent) -> str:
        if agent.memory is None:
            return ""
        found = agent.memory.retrieve(spec.call_to_action, self.k, now=agent.now)
        return "\n".join(f"- {m.text}" for m in found)


class Plan(Component):
    """The agent's current plan: set at construction or later with :meth:`set`.

    Kept as plain text so that the plan costs no LLM call per act; a caller (or a game
    master) may revise it between acts.
    """

    key = "plan"
    title = "Plan"

    def __init__(self, plan: str = ""):
        self.plan = plan

    def set(self, plan: str) -> None:
        """Replace the plan."""
        self.plan = plan

    def context(self, spec: ActionSpec, agent: GenerativeAgent) -> str:
        return self.plan
