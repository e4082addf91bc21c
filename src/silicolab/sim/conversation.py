"""Multi-agent conversations under the six turn-taking protocols of Manning, Zhu & Horton.

A conversation is a sequence of *statements* by agents. Who speaks next follows a protocol:

* ``ordered``: a fixed order, repeated;
* ``random``: a uniformly random speaker, never the previous one;
* ``central_ordered`` / ``central_random``: a central agent alternates with the others, taken
  in a fixed order or at random;
* ``coordinator_before``: a coordinator (an entity the agents never see) reads the transcript
  and picks the next speaker among everyone but the previous one;
* ``coordinator_after``: every eligible agent drafts a reply privately and the coordinator
  realizes exactly one; the other drafts are discarded (kept only in the log and
  :attr:`Conversation.drafts`), never shown to anyone.

Two stopping rules apply to every protocol: at most ``max_statements`` agent statements (the
coordinator's decisions do not count), and, when a coordinator is given and
``coordinator_stops`` is true, the coordinator decides after each statement whether the
conversation goes on. Every speaker sees the transcript so far and the number of statements
left. In the coordinator protocols the stop decision is folded into the coordinator's
selection (a ``STOP`` option), so the coordinator costs one call per statement everywhere.

:meth:`Conversation.coordination` keeps each turn's coordinator decision with the drafts it
chose among (a failed conversation leaves it on the error as ``err.coordination``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

from silicolab.core.errors import InputError
from silicolab.core.seeding import rng
from silicolab.core.sync import sync_twin
from silicolab.sim.entity import ActionSpec, Entity
from silicolab.sim.log import EpisodeLog, StepLog, keep_log

__all__ = [
    "PROTOCOLS",
    "STOP",
    "Conversation",
    "CoordinatorDecision",
    "Draft",
    "Statement",
    "arun_conversation",
    "coordination",
    "run_conversation",
]

Protocol = Literal[
    "ordered",
    "random",
    "central_ordered",
    "central_random",
    "coordinator_before",
    "coordinator_after",
]
PROTOCOLS: tuple[Protocol, ...] = get_args(Protocol)
StopReason = Literal["coordinator", "cap"]
STOP = "STOP"
"""The coordinator's option that ends the conversation in the coordinator protocols."""


@dataclass(frozen=True)
class Statement:
    """One realized statement: its 0-based position, who said it and what was said."""

    index: int
    speaker: str
    text: str


@dataclass(frozen=True)
class Draft:
    """A private reply drafted under ``coordinator_after`` for statement ``turn``."""

    turn: int
    speaker: str
    text: str
    realized: bool


@dataclass(frozen=True)
class CoordinatorDecision:
    """One answer of the coordinator: taken when ``turn`` statements had been made, among
    ``options`` (speakers, ``STOP``, or ``continue``/``stop``)."""

    turn: int
    options: tuple[str, ...]
    choice: str


def coordination(
    decisions: Sequence[CoordinatorDecision], drafts: Sequence[Draft]
) -> list[dict[str, Any]]:
    """One JSON-ready entry per turn at which the coordinator decided or drafts were made:
    ``{"turn", "options", "decision", "drafts"}``, in turn order. ``decision`` is the
    coordinator's answer (``None`` when a single option needed no call); ``drafts`` lists
    the replies drafted for that turn (``coordinator_after`` only) with the realized one
    marked, so the discarded ones stay visible."""
    turns: dict[int, dict[str, Any]] = {}

    def entry(turn: int) -> dict[str, Any]:
        return turns.setdefault(turn, {"turn": turn, "options": [], "decision": None, "drafts": []})

    for d in decisions:
        entry(d.turn).update(options=list(d.options), decision=d.choice)
    for draft in drafts:
        entry(draft.turn)["drafts"].append(
            {"speaker": draft.speaker, "text": draft.text, "realized": draft.realized}
        )
    return [turns[t] for t in sorted(turns)]


@dataclass
class Conversation:
    """The outcome of :func:`arun_conversation`.

    ``stop_reason`` is ``"coordinator"`` (the coordinator ended it) or ``"cap"`` (the
    statement limit was reached). ``drafts`` holds every ``coordinator_after`` draft with the
    realized one marked (empty under the other protocols); ``decisions`` every answer of the
    coordinator. ``llm_calls`` counts entity acts: agents' statements and drafts plus the
    coordinator's decisions.
    """

    protocol: str
    statements: list[Statement]
    stop_reason: StopReason
    drafts: list[Draft] = field(default_factory=list)
    log: EpisodeLog = field(default_factory=EpisodeLog)
    llm_calls: int = 0
    decisions: list[CoordinatorDecision] = field(default_factory=list)

    def transcript(self) -> str:
        """The transcript as numbered ``speaker: text`` lines."""
        return _render(self.statements)

    def coordination(self) -> list[dict[str, Any]]:
        """The coordinator's decisions and the drafts of each turn (see :func:`coordination`)."""
        return coordination(self.decisions, self.drafts)

    @property
    def calls_per_statement(self) -> float:
        """Entity acts per realized statement (``nan`` for an empty conversation)."""
        return self.llm_calls / len(self.statements) if self.statements else float("nan")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy (statements, stop reason, drafts, decisions, log, call count)."""
        return {
            "protocol": self.protocol,
            "statements": [asdict(s) for s in self.statements],
            "stop_reason": self.stop_reason,
            "drafts": [asdict(d) for d in self.drafts],
            "decisions": [asdict(d) for d in self.decisions],
            "log": self.log.to_list(),
            "llm_calls": self.llm_calls,
        }


def _render(statements: Sequence[Statement]) -> str:
    if not statements:
        return "(nothing has been said yet)"
    return "\n".join(f"{s.index + 1}. {s.speaker}: {s.text}" for s in statements)


def _speaker_prompt(name: str, opening: str, statements: Sequence[Statement], left: int) -> str:
    more = (
        "This is the last statement of the conversation."
        if left == 1
        else f"{left} statements are left in the conversation, including this one."
    )
    return (
        f"{opening.strip()}\n\n"
        f"Conversation so far:\n{_render(statements)}\n\n"
        f"{more}\n"
        f"You are {name}. Write what you say next, in your own voice. Reply with your words "
        f"only, without your name or any stage directions."
    )


def _stop_prompt(opening: str, statements: Sequence[Statement], left: int) -> str:
    return (
        "You are the coordinator of the conversation below; the participants do not know you "
        f"exist. Scenario:\n{opening.strip()}\n\n"
        f"Transcript so far:\n{_render(statements)}\n\n"
        f"At most {left} more statements are allowed. Should the conversation continue? "
        "Answer 'stop' if it has reached a natural end (for example, a deal was made or "
        "refused, or everyone has said goodbye) and 'continue' otherwise."
    )


def _pick_prompt(
    opening: str, statements: Sequence[Statement], left: int, options: Sequence[str], stops: bool
) -> str:
    end = (
        f" Answer '{STOP}' instead if the conversation has reached a natural end." if stops else ""
    )
    return (
        "You are the coordinator of the conversation below; the participants do not know you "
        f"exist. Scenario:\n{opening.strip()}\n\n"
        f"Transcript so far:\n{_render(statements)}\n\n"
        f"At most {left} more statements are allowed. Who should speak next? Choose one of: "
        f"{', '.join(options)}.{end}"
    )


def _realize_prompt(
    opening: str, statements: Sequence[Statement], left: int, drafts: Sequence[Draft], stops: bool
) -> str:
    listed = "\n".join(f"- {d.speaker}: {d.text}" for d in drafts)
    end = (
        f" Answer '{STOP}' instead if the conversation has already reached a natural end."
        if stops
        else ""
    )
    return (
        "You are the coordinator of the conversation below; the participants do not know you "
        f"exist. Scenario:\n{opening.strip()}\n\n"
        f"Transcript so far:\n{_render(statements)}\n\n"
        f"Each participant who may speak next has privately drafted a reply:\n{listed}\n\n"
        f"At most {left} more statements are allowed. Which reply becomes the real next "
        f"statement? Answer with the speaker's name; the other drafts are discarded.{end}"
    )


def _clean(name: str, text: str) -> str:
    """Strip whitespace and an echoed ``name:`` prefix from a statement."""
    text = text.strip()
    prefix = f"{name}:"
    if text.lower().startswith(prefix.lower()):
        text = text[len(prefix) :].strip()
    return text


def _validate(
    agents: Sequence[Entity],
    protocol: str,
    coordinator: Entity | None,
    central: str | None,
    order: Sequence[str] | None,
    max_statements: int,
) -> list[str]:
    """Check the arguments; return the speaking order (non-central agents for central_*)."""
    names = [a.name for a in agents]
    if protocol not in PROTOCOLS:
        raise InputError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    if len(names) < 2:
        raise InputError("a conversation needs at least two agents (nobody speaks twice in a row)")
    if len(set(names)) != len(names):
        raise InputError(f"agent names must be unique, got {names}")
    if max_statements < 1:
        raise InputError(f"max_statements must be at least 1, got {max_statements}")
    if protocol.startswith("coordinator") and coordinator is None:
        raise InputError(f"protocol {protocol!r} needs a coordinator entity")
    if coordinator is not None and coordinator.name in names:
        raise InputError(f"the coordinator {coordinator.name!r} must not also be an agent")
    if protocol.startswith("central") and central not in names:
        raise InputError(f"protocol {protocol!r} needs central= one of {names}, got {central!r}")
    others = [n for n in names if not (protocol.startswith("central") and n == central)]
    if order is None:
        return others
    order = [n for n in order if not (protocol.startswith("central") and n == central)]
    if sorted(order) != sorted(others):
        raise InputError(f"order must list each of {others} exactly once, got {list(order)}")
    return order


class _Run:
    """The mutable state of one conversation run."""

    def __init__(
        self,
        agents: Sequence[Entity],
        opening: str,
        max_statements: int,
        statement_tokens: int | None = None,
    ) -> None:
        self.by_name = {a.name: a for a in agents}
        self.opening = opening
        self.max_statements = max_statements
        self.statement_tokens = statement_tokens
        self.statements: list[Statement] = []
        self.drafts: list[Draft] = []
        self.decisions: list[CoordinatorDecision] = []
        self.log = EpisodeLog()
        self.calls = 0

    @property
    def left(self) -> int:
        return self.max_statements - len(self.statements)

    @property
    def previous(self) -> str | None:
        return self.statements[-1].speaker if self.statements else None

    def record(
        self, who: str, kind: str, output: str, context: dict[str, str], event: str | None = None
    ) -> None:
        self.log.add(StepLog(len(self.log), who, kind, output, context, event))

    async def ask(self, entity: Entity, spec: ActionSpec) -> str:
        self.calls += 1
        return await entity.aact(spec)

    async def draft(self, name: str) -> tuple[str, str]:
        """``name``'s next statement (cleaned) and the prompt it was given."""
        spec = ActionSpec(
            _speaker_prompt(name, self.opening, self.statements, self.left),
            kind="statement",
            tag="conversation",
            max_tokens=self.statement_tokens,
        )
        return _clean(name, await self.ask(self.by_name[name], spec)), spec.call_to_action

    def realize(self, name: str, text: str) -> None:
        statement = Statement(len(self.statements), name, text)
        self.statements.append(statement)
        for agent in self.by_name.values():
            agent.observe(f"{name}: {text}")

    async def say(self, name: str) -> None:
        text, prompt = await self.draft(name)
        self.record(name, "statement", text, {"call_to_action": prompt})
        self.realize(name, text)

    async def choose(self, coordinator: Entity, prompt: str, options: tuple[str, ...]) -> str:
        answer = await self.ask(
            coordinator, ActionSpec(prompt, kind="choice", options=options, tag="coordinator")
        )
        answer = answer.strip()
        if answer not in options:  # entities should enforce this; be strict if one does not
            raise InputError(f"coordinator answered {answer!r}, not one of {options}")
        self.record(coordinator.name, "decision", answer, {"call_to_action": prompt})
        self.decisions.append(CoordinatorDecision(len(self.statements), options, answer))
        return answer

    def result(self, protocol: str, stop_reason: StopReason) -> Conversation:
        """The finished :class:`Conversation`."""
        return Conversation(
            protocol, self.statements, stop_reason, self.drafts, self.log, self.calls,
            self.decisions,
        )  # fmt: skip


async def arun_conversation(
    agents: Sequence[Entity],
    *,
    protocol: str,
    opening: str,
    coordinator: Entity | None = None,
    central: str | None = None,
    order: Sequence[str] | None = None,
    max_statements: int = 20,
    seed: int = 0,
    coordinator_stops: bool = True,
    statement_tokens: int | None = None,
) -> Conversation:
    """Run one conversation among ``agents`` under ``protocol`` (see the module docstring).

    ``opening`` is the scenario text every prompt starts with. ``central`` names the central
    agent of the ``central_*`` protocols; ``order`` fixes the speaking order of ``ordered`` and
    ``central_ordered`` (default: the order of ``agents``). Random choices come from
    ``silicolab.core.seeding.rng(seed, "conversation", protocol)``. ``statement_tokens``
    caps the length of each statement (and draft) in tokens. Each realized statement
    is also delivered to every agent through :meth:`Entity.observe`; discarded drafts and the
    coordinator's decisions never are.
    """
    sequence = _validate(agents, protocol, coordinator, central, order, max_statements)
    run = _Run(agents, opening, max_statements, statement_tokens)
    try:
        return await _converse(
            run, protocol, opening, coordinator, central, sequence, seed, coordinator_stops
        )
    except Exception as err:
        keep_log(err, run.log)  # a failed conversation still leaves its transcript so far
        if getattr(err, "coordination", None) is None:
            err.coordination = coordination(run.decisions, run.drafts)  # type: ignore[attr-defined]
        raise


async def _converse(
    run: _Run,
    protocol: str,
    opening: str,
    coordinator: Entity | None,
    central: str | None,
    sequence: list[str],
    seed: int,
    coordinator_stops: bool,
) -> Conversation:
    gen = rng(seed, "conversation", protocol)
    names = list(run.by_name)
    stops = coordinator is not None and coordinator_stops
    turn = 0  # position in `sequence` for the ordered protocols
    while run.left > 0:
        prev = run.previous
        eligible = tuple(n for n in names if n != prev)
        if protocol == "coordinator_before":
            assert coordinator is not None
            if not await _coordinator_before(run, coordinator, eligible, stops):
                return run.result(protocol, "coordinator")
            continue
        if protocol == "coordinator_after":
            assert coordinator is not None
            if not await _coordinator_after(run, coordinator, eligible, stops):
                return run.result(protocol, "coordinator")
            continue
        if protocol == "ordered":
            speaker = sequence[turn % len(sequence)]
            turn += 1
        elif protocol == "random":
            speaker = str(gen.choice(eligible))
        elif prev != central:
            speaker = str(central)
        elif protocol == "central_ordered":
            speaker = sequence[turn % len(sequence)]
            turn += 1
        else:
            speaker = str(gen.choice(sequence))
        await run.say(speaker)
        if stops and run.left > 0:
            assert coordinator is not None
            prompt = _stop_prompt(opening, run.statements, run.left)
            if await run.choose(coordinator, prompt, ("continue", "stop")) == "stop":
                return run.result(protocol, "coordinator")
    return run.result(protocol, "cap")


async def _coordinator_pick(
    run: _Run,
    coordinator: Entity,
    eligible: tuple[str, ...],
    stops: bool,
    prompt: Callable[[], str],
) -> str:
    """The coordinator's choice among ``eligible`` (plus STOP once someone has spoken, when
    it may stop), asked with ``prompt()``; no call when there is a single option."""
    options = eligible + ((STOP,) if stops and run.statements else ())
    if len(options) == 1:
        return options[0]
    return await run.choose(coordinator, prompt(), options)


async def _coordinator_before(
    run: _Run, coordinator: Entity, eligible: tuple[str, ...], stops: bool
) -> bool:
    """The coordinator picks the next speaker (or stops); False when it stopped."""
    pick = await _coordinator_pick(
        run,
        coordinator,
        eligible,
        stops,
        lambda: _pick_prompt(run.opening, run.statements, run.left, eligible, stops),
    )
    if pick == STOP:
        return False
    await run.say(pick)
    return True


async def _coordinator_after(
    run: _Run, coordinator: Entity, eligible: tuple[str, ...], stops: bool
) -> bool:
    """Everyone eligible drafts; the coordinator realizes one (or stops); False when stopped."""
    texts = await asyncio.gather(*(run.draft(n) for n in eligible))
    index = len(run.statements)
    drafts = [Draft(index, n, t, False) for n, (t, _) in zip(eligible, texts, strict=True)]
    pick = await _coordinator_pick(
        run,
        coordinator,
        eligible,
        stops,
        lambda: _realize_prompt(run.opening, run.statements, run.left, drafts, stops),
    )
    for d, (_, p) in zip(drafts, texts, strict=True):
        kept = d.speaker == pick
        run.drafts.append(Draft(d.turn, d.speaker, d.text, kept))
        run.record(
            d.speaker, "draft", d.text, {"call_to_action": p}, "realized" if kept else "discarded"
        )
    if pick == STOP:
        return False
    run.realize(pick, next(d.text for d in drafts if d.speaker == pick))
    return True


run_conversation = sync_twin(arun_conversation)
