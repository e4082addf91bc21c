"""The entity protocol: anything that can observe text and act on an :class:`ActionSpec`.

Agents, rule-based agents and game masters all share this small interface so that engines,
conversations and surveys can drive any of them without knowing how they decide.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from silicolab.core.errors import InputError
from silicolab.core.sync import sync_twin

ActionKind = Literal["free", "choice", "float", "statement"]
_KINDS = ("free", "choice", "float", "statement")


@dataclass(frozen=True)
class ActionSpec:
    """What an entity is asked to do in one act.

    ``kind`` fixes the answer's shape: ``"free"`` and ``"statement"`` are free text,
    ``"choice"`` must be exactly one of ``options`` and ``"float"`` a number rendered as text.
    ``tag`` labels the LLM call in the ledger; ``max_tokens`` caps a free-text answer.
    """

    call_to_action: str
    kind: ActionKind = "free"
    options: tuple[str, ...] = ()
    tag: str = "action"
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise InputError(f"ActionSpec.kind must be one of {_KINDS}, got {self.kind!r}")
        if not isinstance(self.options, tuple):
            object.__setattr__(self, "options", tuple(self.options))
        if self.kind == "choice":
            if len(self.options) < 2:
                raise InputError("a 'choice' ActionSpec needs at least two options")
            if len(set(self.options)) != len(self.options):
                raise InputError(f"ActionSpec options must be unique, got {self.options!r}")

    def validate(self, answer: str) -> str:
        """Return ``answer`` if it satisfies the spec, else raise :class:`InputError`."""
        if self.kind == "choice" and answer not in self.options:
            raise InputError(f"{answer!r} is not one of the options {self.options!r}")
        if self.kind == "float":
            try:
                float(answer)
            except ValueError as err:
                raise InputError(f"{answer!r} is not a number") from err
        return answer


class Entity(ABC):
    """Something with a ``name`` that observes text and acts on an :class:`ActionSpec`.

    Subclasses implement :meth:`observe` and :meth:`aact`; :meth:`act` is the synchronous
    twin for scripts and notebooks (it works inside a running event loop too).
    """

    name: str

    @abstractmethod
    def observe(self, text: str) -> None:
        """Receive one observation (an entity may get several between acts)."""

    @abstractmethod
    async def aact(self, spec: ActionSpec) -> str:
        """Return the entity's answer to ``spec`` ("choice": one option exactly)."""

    act = sync_twin(aact)

    async def aact_all(
        self, specs: Sequence[ActionSpec], *, return_exceptions: bool = False
    ) -> list[str | Exception]:
        """Answer every spec; the answers in order.

        An entity that can answer each spec from its current state, as if it were asked
        first, overrides this to send them at once (:class:`~silicolab.sim.agents.
        GenerativeAgent` does); this default acts on them one after another, which is
        right for any entity. ``return_exceptions`` puts an act's error in its place
        instead of raising it (as :func:`asyncio.gather` does).
        """
        out: list[str | Exception] = []
        for spec in specs:
            try:
                out.append(await self.aact(spec))
            except Exception as err:
                if not return_exceptions:
                    raise
                out.append(err)
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
