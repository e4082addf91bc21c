"""The game master: turns attempted actions into event statements and keeps the world true.

Agents say what they *try* to do; the :class:`GameMaster` decides what happens. For every
:class:`Attempt` it, in order:

1. runs its ``validator`` — an impossible action is rejected with a message to the actor
   and costs nothing (no state change, no language-model call);
2. invokes a typed :class:`Tool` if the intent names one (``bid(amount=120)`` or
   ``{"tool": "bid", "args": {"amount": 120}}``);
3. otherwise calls the ``resolver`` function, or else (also when the resolver returns
   ``None``) the language model: exactly one call per event, whose reply is an event
   statement, a JSON tool call or, when the game master lets the narrator change some
   grounded variables (``narrated``), a JSON object ``{"event": ..., "updates": {...}}``;
4. checks the proposed grounded-variable updates as one batch, applies them, records the
   event and routes observations to the entities that perceive it.

It also holds the clock, a seeded RNG, the schedule (who acts each step) and termination.
Engines (:mod:`silicolab.sim.engines`) drive it; it never calls entities itself. The game
master is an :class:`~silicolab.sim.entity.Entity` too: it observes notes (``observe``) and
answers an :class:`ActionSpec` about the world (``act``: with its model, else from the
grounded state), so a nested game or an interviewer can question it like any agent.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from silicolab.core.errors import InputError
from silicolab.sim.entity import ActionSpec, Entity
from silicolab.sim.grounded import GroundedState
from silicolab.sim.tools import Tool, parse_tool_call

if TYPE_CHECKING:
    from silicolab.llm.base import LanguageModel


@dataclass(frozen=True)
class Attempt:
    """What ``actor`` tried to do at ``step`` (its raw answer to the action spec)."""

    actor: str
    action: str
    step: int = 0


@dataclass(frozen=True)
class Resolution:
    """The outcome of one attempt.

    ``observers``: who perceives ``event`` (``None`` = every entity). ``private`` adds
    per-entity observations. ``rejected`` marks an impossible action: then ``event`` is the
    message for the actor only and nothing else happens. ``nested``: a
    :class:`~silicolab.sim.nested.NestedGame` to play before committing (see that module).
    """

    event: str
    updates: Mapping[str, Any] = field(default_factory=dict)
    observers: tuple[str, ...] | None = None
    private: Mapping[str, str] = field(default_factory=dict)
    terminate: bool = False
    rejected: bool = False
    nested: Any = None


Resolver = Callable[["GameMaster", Attempt], "Resolution | str | None"]
AttemptValidator = Callable[["GameMaster", Attempt], "str | None"]
Schedule = Callable[["GameMaster", Sequence[Entity], int], Sequence[Entity]]
SpecFor = Callable[["GameMaster", str], ActionSpec]


@dataclass
class Clock:
    """Simulated time: ``start`` plus one ``tick`` per engine step (serialisable)."""

    start: datetime = datetime(2024, 1, 1, 9, 0)
    tick: timedelta = timedelta(minutes=10)
    steps: int = 0

    @property
    def now(self) -> datetime:
        return self.start + self.steps * self.tick

    def advance(self) -> None:
        self.steps += 1

    def text(self) -> str:
        return self.now.strftime("%Y-%m-%d %H:%M")

    def state_dict(self) -> dict[str, Any]:
        return {
            "start": self.start.isoformat(),
            "tick_s": self.tick.total_seconds(),
            "steps": self.steps,
        }

    @classmethod
    def from_state(cls, data: Mapping[str, Any]) -> Clock:
        return cls(
            datetime.fromisoformat(data["start"]),
            timedelta(seconds=data["tick_s"]),
            int(data["steps"]),
        )


_LLM_INSTRUCTIONS = (
    "You are the game master of a simulation. Decide what actually happens when the actor "
    "attempts the action below, consistent with the state of the world. Reply with ONE "
    "sentence, the event statement (who did what, quoting any speech)"
)


class GameMaster(Entity):
    """Resolves attempts into events, keeps grounded state, routes observations (see module).

    ``state``: grounded variables. ``resolver``: ``(gm, attempt) -> Resolution | str``.
    ``model``: a language model used when no resolver is given (one call per event).
    ``tools``: functions with docstrings agents may invoke. ``validator``: rejects impossible
    attempts before anything is spent. ``schedule``: who acts at a step (default: every
    entity for simultaneous engines, round robin for sequential ones). ``action_spec``: a
    fixed spec or ``(gm, name) -> ActionSpec``. ``terminator``: ``gm -> bool``.
    ``narrated``: the grounded variables the model may change when it resolves an event
    (its reply is then JSON with ``event`` and ``updates``; every update is checked).
    ``memo`` is a prefab's own JSON-ready episode state, saved in checkpoints.
    ``narration_tokens`` caps the model's reply when it resolves an event (one sentence,
    or the JSON with its updates), so a rambling model cannot stall the episode.
    """

    def __init__(
        self,
        *,
        state: GroundedState | None = None,
        resolver: Resolver | None = None,
        model: LanguageModel | None = None,
        tools: Iterable[Callable[..., Any] | Tool] = (),
        validator: AttemptValidator | None = None,
        schedule: Schedule | None = None,
        action_spec: ActionSpec | SpecFor | None = None,
        terminator: Callable[[GameMaster], bool] | None = None,
        clock: Clock | None = None,
        premise: str = "",
        name: str = "Game Master",
        history_window: int = 20,
        narrated: Iterable[str] = (),
        narration_tokens: int = 200,
    ):
        self.state = state if state is not None else GroundedState()
        self.resolver = resolver
        self.model = model
        self.tools: dict[str, Tool] = {}
        for tool in tools:
            t = tool if isinstance(tool, Tool) else Tool.from_function(tool)
            self.tools[t.name] = t
        self.validator = validator
        self.schedule = schedule
        self.action_spec = action_spec
        self.terminator = terminator
        self.clock = clock if clock is not None else Clock()
        self.premise = premise
        self.name = name
        self.history_window = history_window
        self.narrated = tuple(narrated)
        self.narration_tokens = narration_tokens
        unknown = [n for n in self.narrated if n not in self.state]
        if unknown:
            raise InputError(f"narrated variables {unknown} are not grounded variables")
        self.memo: dict[str, Any] = {}
        self.notes: list[str] = []
        self.rng = random.Random(0)
        self.seed = 0
        self.entity_names: list[str] = []
        self.events: list[str] = []
        self.rejections: list[tuple[Attempt, str]] = []
        self.llm_calls = 0
        self.done = False
        self._queues: dict[str, list[str]] = {}

    # -- episode set-up and scheduling -------------------------------------------------
    def begin(self, entities: Sequence[Entity], *, seed: int = 0) -> None:
        """Start an episode: register entities (initiative order), seed the RNG, queue the
        premise for everyone."""
        names = [e.name for e in entities]
        if len(set(names)) != len(names):
            raise InputError(f"entity names must be unique, got {names}")
        self.entity_names = names
        self.rng, self.seed = random.Random(seed), seed
        self._queues = {n: [] for n in names}
        if self.premise:
            self.broadcast(self.premise)

    def next_acting(
        self, entities: Sequence[Entity], step: int, *, simultaneous: bool
    ) -> list[Entity]:
        """Who acts at ``step``, in initiative order."""
        if self.schedule is not None:
            chosen = list(self.schedule(self, entities, step))
            order = {e.name: i for i, e in enumerate(entities)}
            return sorted(chosen, key=lambda e: order[e.name])
        if simultaneous:
            return list(entities)
        return [entities[step % len(entities)]] if entities else []

    def spec_for(self, name: str) -> ActionSpec:
        """The action spec ``name`` answers this step."""
        if callable(self.action_spec):
            return self.action_spec(self, name)
        if self.action_spec is not None:
            return self.action_spec
        tools = "".join(f"\n- {t.usage()}" for t in self.tools.values())
        extra = f" You may use these tools (write name(arg=value)):{tools}" if tools else ""
        return ActionSpec(f"What does {name} do next?{extra}")

    def terminated(self) -> bool:
        """True once a resolution or the ``terminator`` ended the episode."""
        if not self.done and self.terminator is not None and self.terminator(self):
            self.done = True
        return self.done

    def state_dict(self) -> dict[str, Any]:
        """JSON-ready episode state (see :func:`silicolab.sim.checkpoint.gm_state_dict`)."""
        from silicolab.sim.checkpoint import gm_state_dict

        return gm_state_dict(self)

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict` output into a game master with the same configuration."""
        from silicolab.sim.checkpoint import load_gm_state

        load_gm_state(self, state)

    # -- the game master as an entity -----------------------------------------------------
    def observe(self, text: str) -> None:
        """Note ``text`` (an aside from a parent game, an interviewer, a script); notes
        appear in the game master's own answers."""
        self.notes.append(text)

    async def aact(self, spec: ActionSpec) -> str:
        """Answer ``spec`` about the world: one model call over the premise, time, grounded
        state, recent events and notes; without a model, the grounded state in words (a
        "choice" spec: the first option)."""
        if self.model is None:
            if spec.kind == "choice":
                return spec.options[0]
            return self.state.text() or (self.events[-1] if self.events else self.premise)
        from silicolab.llm.structured import achoose, anumber

        parts = [self.premise, f"Time: {self.clock.text()}", self.state.text()]
        parts += [f"- {e}" for e in self.events[-self.history_window :]]
        parts += [f"Note: {n}" for n in self.notes[-self.history_window :]]
        system = "You are the game master of a simulation.\n" + "\n".join(p for p in parts if p)
        self.llm_calls += 1
        if spec.kind == "choice":
            picked = await achoose(self.model, spec.call_to_action, spec.options, system=system)
            return spec.options[picked]
        if spec.kind == "float":
            value = await anumber(self.model, f"{system}\n\n{spec.call_to_action}", tag="gm")
            return repr(float(value))
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": spec.call_to_action},
        ]
        reply = await self.model.agenerate(messages, tag="gm", max_tokens=spec.max_tokens)
        return spec.validate(reply.text.strip())

    # -- observations ------------------------------------------------------------------
    def tell(self, name: str, text: str) -> None:
        """Queue an observation for one entity."""
        if name not in self._queues:
            raise InputError(f"no entity named {name!r} in this episode")
        self._queues[name].append(text)

    def broadcast(self, text: str, names: Iterable[str] | None = None) -> None:
        """Queue an observation for ``names`` (default everyone)."""
        for name in self.entity_names if names is None else names:
            self.tell(name, text)

    def pending(self, name: str) -> list[str]:
        """Drain and return the observations queued for ``name``."""
        queued, self._queues[name] = self._queues.get(name, []), []
        return queued

    # -- resolution --------------------------------------------------------------------
    def resolve(self, attempt: Attempt) -> Resolution:
        """Resolve one attempt (synchronous; uses ``model.generate`` if needed)."""
        outcome = self._prepare(attempt)
        if isinstance(outcome, list):
            self.llm_calls += 1
            reply = self.model.generate(outcome, tag="gm", max_tokens=self.narration_tokens)  # type: ignore[union-attr]
            outcome = self._from_reply(attempt, reply.text)
        return self._commit(attempt, outcome)

    async def aresolve(self, attempt: Attempt) -> Resolution:
        """The async twin of :meth:`resolve`."""
        outcome = self._prepare(attempt)
        if isinstance(outcome, list):
            self.llm_calls += 1
            reply = await self.model.agenerate(outcome, tag="gm", max_tokens=self.narration_tokens)  # type: ignore[union-attr]
            outcome = self._from_reply(attempt, reply.text)
        return self._commit(attempt, outcome)

    def _prepare(self, attempt: Attempt) -> Resolution | list[dict[str, str]]:
        """A resolution without the model, or the messages for the one model call."""
        if self.validator is not None:
            message = self.validator(self, attempt)
            if message:
                return Resolution(message, rejected=True)
        try:
            found = parse_tool_call(attempt.action, self.tools)
            if found is not None:
                return _as_resolution(found[0].call(self, attempt.actor, found[1]))
        except InputError as err:
            return Resolution(str(err), rejected=True)
        if self.resolver is not None:
            resolved = self.resolver(self, attempt)
            if resolved is not None:
                return _as_resolution(resolved)
        if self.model is not None:
            return self.prompt(attempt)
        return Resolution(f"{attempt.actor}: {attempt.action}")

    def prompt(self, attempt: Attempt) -> list[dict[str, str]]:
        """The chat messages of the model call that resolves ``attempt``."""
        parts = [f"Premise: {self.premise}"] if self.premise else []
        parts.append(f"Time: {self.clock.text()}")
        if self.state.variables:
            parts.append(f"State of the world:\n{self.state.text()}")
        recent = self.events[-self.history_window :]
        if recent:
            parts.append("Recent events:\n" + "\n".join(f"- {e}" for e in recent))
        if self.narrated:
            parts.append(
                "Reply with only JSON: "
                '{"event": the event statement, "updates": {variable: new value}} where '
                f"updates may change only {', '.join(self.narrated)} and only when the "
                'event changes them (else "updates": {}).'
            )
        if self.tools:
            tools = "\n".join(f"- {t.usage()}" for t in self.tools.values())
            parts.append(
                "If the attempt is best carried out by a tool, reply instead with only JSON "
                f'{{"tool": name, "args": {{...}}}}. Tools:\n{tools}'
            )
        parts.append(f"Actor: {attempt.actor}\nAttempted action: {attempt.action}")
        return [
            {"role": "system", "content": _LLM_INSTRUCTIONS},
            {"role": "user", "content": "\n\n".join(parts)},
        ]

    def _from_reply(self, attempt: Attempt, text: str) -> Resolution:
        try:
            found = parse_tool_call(text, self.tools)
            if found is not None:
                return _as_resolution(found[0].call(self, attempt.actor, found[1]))
        except InputError as err:
            return Resolution(str(err), rejected=True)
        if self.narrated:
            narrated = _narrated(text, self.narrated)
            if narrated is not None:
                return narrated
        return Resolution(text.strip() or f"{attempt.actor}: {attempt.action}")

    def _commit(self, attempt: Attempt, res: Resolution) -> Resolution:
        """Play a nested game if asked, check and apply updates, record, route observations."""
        if res.nested is not None and not res.rejected:
            from silicolab.sim.nested import play_nested

            res = play_nested(self, attempt, res)
        if not res.rejected and res.updates:
            message = self.state.check(res.updates)
            if message:
                res = Resolution(message, rejected=True, nested=res.nested)
        if res.rejected:
            self.rejections.append((attempt, res.event))
            if attempt.actor in self._queues:
                self.tell(attempt.actor, f"Your action was not possible: {res.event}")
            return res
        self.state.apply(res.updates, step=attempt.step, cause=res.event)
        self.events.append(res.event)
        observers = self.entity_names if res.observers is None else res.observers
        self.broadcast(res.event, [n for n in observers if n in self._queues])
        for name, text in res.private.items():
            self.tell(name, text)
        if res.terminate:
            self.done = True
        return res


def _narrated(text: str, allowed: Sequence[str]) -> Resolution | None:
    """A narrator's JSON reply as a resolution, or ``None`` when it holds no JSON object
    with a string ``event`` (the text is then the event). Updates of variables the
    narrator may not change are dropped; the grounded state checks the rest."""
    brace = text.find("{")
    try:
        obj = json.loads(text[brace : text.rfind("}") + 1]) if brace >= 0 else None
    except ValueError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("event"), str):
        return None
    raw = obj.get("updates")
    updates = {k: v for k, v in raw.items() if k in allowed} if isinstance(raw, dict) else {}
    return Resolution(obj["event"].strip() or text.strip(), updates=updates)


def _as_resolution(value: Resolution | str) -> Resolution:
    if isinstance(value, Resolution):
        return value
    if isinstance(value, str):
        return Resolution(value)
    raise InputError(f"a resolver or tool must return a str or Resolution, got {value!r}")
