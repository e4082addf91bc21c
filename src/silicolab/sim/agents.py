"""Agents: a component-based LLM agent and a Python-policy agent behind one interface.

:class:`GenerativeAgent` makes exactly one language-model request per act (a typed answer
may add validation re-prompts from :mod:`silicolab.llm.structured`, never extra reasoning
calls): its prompt is the agent's components' contexts, joined in order, plus the call to
action. Each act's contributions are logged as a :class:`StepLog`, and its
``sample_index`` is derived from (agent name, act number) and the agent's optional
``sample_key`` (the simulation it acts in, e.g. an experimental condition and its
replicate), so reruns and resumed runs hit the exact-prompt cache while two simulations
whose prompts happen to coincide still draw independent samples. :class:`RuleAgent` is
the no-LLM baseline.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from silicolab.core.errors import InputError, LLMError, ParseFailure
from silicolab.llm.base import LanguageModel
from silicolab.llm.structured import achoose, anumber
from silicolab.runs.health import cut
from silicolab.sim.components import Component, MemoryRetrieval
from silicolab.sim.entity import ActionSpec, Entity
from silicolab.sim.log import EpisodeLog, StepLog
from silicolab.sim.memory import AssociativeMemory

CALL_TO_ACTION_KEY = "call_to_action"


def stable_sample_index(name: str, step: int, key: str = "") -> int:
    """A process-independent sample index for one act (sha256, not the salted ``hash``).

    ``key`` names the simulation the act belongs to; ``""`` gives the index of an agent
    without one (the same as before keys existed, so existing caches stay valid)."""
    text = f"{name}\x1f{step}" if not key else f"{key}\x1f{name}\x1f{step}"
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def repair_choice(raw: str, options: Sequence[str]) -> str | None:
    """The option a malformed reply clearly names, or None when it is ambiguous.

    Accepts an exact (case-insensitive) option, or a reply mentioning exactly one option
    as a whole word (so "no" is not read from "not" or "number").
    """
    text = raw.strip().strip("\"'.").lower()
    for opt in options:
        if text == opt.lower():
            return opt
    mentioned = [
        opt
        for opt in options
        if re.search(rf"(?<!\w){re.escape(opt)}(?!\w)", raw, flags=re.IGNORECASE)
    ]
    return mentioned[0] if len(mentioned) == 1 else None


@dataclass(frozen=True)
class _Act:
    """One act's prompt, built before its request is sent."""

    step: int
    contexts: dict[str, str]
    system: str
    question: str
    index: int


class GenerativeAgent(Entity):
    """An LLM agent whose prompt is assembled from keyed :class:`Component` objects.

    ``memory`` (optional) receives every observation and the agent's own actions; a
    :class:`~silicolab.sim.components.MemoryRetrieval` component reads it back. ``clock``
    gives the time stamps of memories (default: a counter of observations and acts).
    ``sample_key`` names the simulation the agent acts in (see :func:`stable_sample_index`):
    agents with different keys draw independent samples even when their prompts coincide.
    """

    def __init__(
        self,
        name: str,
        model: LanguageModel,
        components: Sequence[Component],
        memory: AssociativeMemory | None = None,
        *,
        clock: Callable[[], float] | None = None,
        remember_actions: bool = True,
        sample_key: str = "",
    ):
        keys = [c.key for c in components]
        if len(set(keys)) != len(keys):
            raise InputError(f"component keys must be unique within an agent, got {keys}")
        if CALL_TO_ACTION_KEY in keys:
            raise InputError(f"{CALL_TO_ACTION_KEY!r} is reserved and cannot be a component key")
        self.name = name
        self.model = model
        self.components: list[Component] = list(components)
        self.memory = memory
        self.clock = clock
        self.remember_actions = remember_actions
        self.sample_key = str(sample_key)
        self.step = 0
        self.events = 0
        self.log = EpisodeLog()

    @property
    def now(self) -> float:
        """The current time for memory stamps and recency."""
        return float(self.clock()) if self.clock is not None else float(self.events)

    def get_component(self, key: str) -> Component:
        """The component with ``key`` (KeyError with the known keys otherwise)."""
        for c in self.components:
            if c.key == key:
                return c
        raise KeyError(
            f"{self.name} has no component {key!r}; keys: {[c.key for c in self.components]}"
        )

    @property
    def last_log(self) -> StepLog | None:
        """The latest act's log entry."""
        return self.log.steps[-1] if self.log.steps else None

    def attach_memory(self, *, k: int = 5) -> AssociativeMemory:
        """The agent's memory, created (with a :class:`MemoryRetrieval` component of ``k``
        memories, placed before the recent observations) when it was built without one:
        an initializer giving people a backstory after they were built uses it, and so
        does :meth:`load_state` when the saved state holds such a memory."""
        if self.memory is None:
            self.memory = AssociativeMemory()
        if all(c.key != MemoryRetrieval.key for c in self.components):
            keys = [c.key for c in self.components]
            at = keys.index("observation") if "observation" in keys else len(keys)
            self.components.insert(at, MemoryRetrieval(k=k))
        return self.memory

    def observe(self, text: str) -> None:
        """Pass ``text`` to every component and store it in memory."""
        self.events += 1
        for c in self.components:
            c.update(text)
        if self.memory is not None:
            self.memory.add(text, time=self.now)

    def contexts(self, spec: ActionSpec) -> dict[str, str]:
        """Each component's contribution for ``spec``, keyed and in component order."""
        return {c.key: c.context(spec, self).strip() for c in self.components}

    def render_context(self, contexts: dict[str, str]) -> str:
        """The system prompt: the agent's name, then each non-empty piece under its title."""
        parts = [f"You are {self.name}. Stay in character and answer as {self.name}."]
        for c in self.components:
            text = contexts.get(c.key, "")
            if text:
                parts.append(f"{c.title}:\n{text}" if c.title else text)
        return "\n\n".join(parts)

    async def aact(self, spec: ActionSpec) -> str:
        """Answer ``spec`` with one model request; log the context each component gave."""
        step = self.step
        self.step += 1
        self.events += 1
        act = self._prepare(spec, step)
        output = await self._run(spec, act)
        self._record(spec, act, output)
        return output

    async def aact_all(
        self, specs: Sequence[ActionSpec], *, return_exceptions: bool = False
    ) -> list[str | Exception]:
        """Answer every spec from the agent's current state, all requests at once.

        Each prompt is built before any request is sent, as if its spec were asked first
        (no answer sees another, whichever finishes first); the acts are numbered in spec
        order (so their sample indices, hence cache keys, are stable), and the log and
        memory receive the answers in spec order once all are in. ``return_exceptions``
        puts an act's error in its place; otherwise the first error in spec order is
        raised after every request has ended.
        """
        if not specs:
            return []
        first, events = self.step, self.events
        self.step += len(specs)
        self.events += 1  # every prompt sees the clock of the first act
        acts = [self._prepare(spec, first + i) for i, spec in enumerate(specs)]
        results = await asyncio.gather(
            *(self._run(spec, act) for spec, act in zip(specs, acts, strict=True)),
            return_exceptions=True,
        )
        for i, (spec, act, output) in enumerate(zip(specs, acts, results, strict=True)):
            self.events = events + i + 1
            if isinstance(output, str):
                self._record(spec, act, output)
            elif not isinstance(output, Exception):
                raise output  # cancelled: not an act's error
        errors = [r for r in results if isinstance(r, Exception)]
        if errors and not return_exceptions:
            raise errors[0]
        return list(results)  # type: ignore[arg-type]

    def _prepare(self, spec: ActionSpec, step: int) -> _Act:
        """The prompt of act number ``step`` from the agent's state now."""
        contexts = self.contexts(spec)
        question = spec.call_to_action.replace("{name}", self.name)
        index = stable_sample_index(self.name, step, self.sample_key)
        return _Act(step, contexts, self.render_context(contexts), question, index)

    async def _run(self, spec: ActionSpec, act: _Act) -> str:
        try:
            output = await self._answer(spec, act.system, act.question, act.index)
        except (ParseFailure, LLMError) as err:
            reply = f"; last reply: {cut(err.raw)!r}" if isinstance(err, ParseFailure) else ""
            raise err.in_context(f"{self.name}, act {act.step} ({spec.kind})", reply) from err
        return spec.validate(output)

    def _record(self, spec: ActionSpec, act: _Act, output: str) -> None:
        self.log.add(
            StepLog(
                act.step,
                self.name,
                spec.kind,
                output,
                {**act.contexts, CALL_TO_ACTION_KEY: act.question},
            )
        )
        if self.memory is not None and self.remember_actions:
            self.memory.add(f"{self.name}: {output}", time=self.now)

    async def _answer(self, spec: ActionSpec, system: str, question: str, index: int) -> str:
        """One model request (plus the typed answer's repair re-prompts) for ``spec``."""
        if spec.kind == "choice":
            return await self._choose(spec, system, question, index)
        if spec.kind == "float":
            value = await anumber(
                self.model, f"{system}\n\n{question}", tag=spec.tag, sample_index=index
            )
            return repr(float(value))
        completion = await self.model.agenerate(
            [{"role": "system", "content": system}, {"role": "user", "content": question}],
            tag=spec.tag,
            sample_index=index,
            max_tokens=spec.max_tokens,
        )
        return completion.text.strip()

    async def _choose(self, spec: ActionSpec, system: str, question: str, index: int) -> str:
        try:
            picked = await achoose(
                self.model,
                question,
                spec.options,
                system=system,
                tag=spec.tag,
                sample_index=index,
            )
        except ParseFailure as err:
            repaired = repair_choice(err.raw, spec.options) if err.raw else None
            if repaired is None:
                raise err.in_context(f"no valid choice among {list(spec.options)}") from err
            return repaired
        return spec.options[picked]

    def state_dict(self) -> dict[str, Any]:
        """JSON-ready state: counters, every component's state, memory and the log."""
        return {
            "name": self.name,
            "step": self.step,
            "events": self.events,
            "components": {c.key: c.state_dict() for c in self.components},
            "memory": self.memory.state_dict() if self.memory is not None else None,
            "log": self.log.to_list(),
        }

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` output into an agent built with the same components."""
        if state.get("name") != self.name:
            raise InputError(f"state is for {state.get('name')!r}, not {self.name!r}")
        saved = state["components"].get(MemoryRetrieval.key)
        if state.get("memory") is not None and saved is not None:
            self.attach_memory(k=int(saved.get("k", 5)))
        missing = set(state["components"]) ^ {c.key for c in self.components}
        if missing:
            raise InputError(f"state and agent disagree on components: {sorted(missing)}")
        self.step = int(state["step"])
        self.events = int(state["events"])
        for c in self.components:
            c.load_state(state["components"][c.key])
        if self.memory is not None and state.get("memory") is not None:
            self.memory.load_state(state["memory"])
        self.log = EpisodeLog.from_list(state.get("log", []))


Policy = Callable[["RuleAgent", ActionSpec], str]


class RuleAgent(Entity):
    """An entity driven by a Python ``policy(agent, spec) -> str``; no language model.

    The policy may read ``agent.observations`` and keep its own data in ``agent.state``
    (a dict, checkpointed when JSON-ready). "choice" answers must be one of the options.
    """

    def __init__(self, name: str, policy: Policy, state: dict[str, Any] | None = None):
        self.name = name
        self.policy = policy
        self.state: dict[str, Any] = dict(state or {})
        self.observations: list[str] = []
        self.step = 0
        self.log = EpisodeLog()

    def observe(self, text: str) -> None:
        """Record the observation for the policy to read."""
        self.observations.append(text)

    async def aact(self, spec: ActionSpec) -> str:
        """Run the policy and check its answer against ``spec``."""
        output = str(self.policy(self, spec))
        spec.validate(output)
        self.log.add(StepLog(self.step, self.name, spec.kind, output, {}))
        self.step += 1
        return output

    def state_dict(self) -> dict[str, Any]:
        """JSON-ready state: the policy's data, observations, counter and log."""
        return {
            "name": self.name,
            "state": self.state,
            "observations": list(self.observations),
            "step": self.step,
            "log": self.log.to_list(),
        }

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` output."""
        self.state = dict(state["state"])
        self.observations = list(state["observations"])
        self.step = int(state["step"])
        self.log = EpisodeLog.from_list(state.get("log", []))
