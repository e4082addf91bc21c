"""The debate panel shared by the meta-debate and Debate-Coding's plan debate.

Both debates run the same round: the affirmative speaks, then the negative (each sees the
transcript so far), then a judge returns a structured verdict; a verdict that stays invalid
after the repair loop closes the round with the error recorded. Every call of a MAC
method (debaters, judges, executor, the single agent) is made with one
:class:`DebateSettings`, so tags, sampling and caching follow one rule.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from typing import Any

from silicolab.core.errors import InputError, ParseFailure
from silicolab.discovery.mac.templates import render
from silicolab.llm import LanguageModel, astructured

SIDES = ("affirmative", "negative")
#: The debaters' instructions per fidelity: the paper's (Listings 1 and 3: both sides get
#: the same instructions, to always disagree with the other side) or ours (an affirmative
#: that argues its own answer and a negative that looks for the weak spots).
DEBATER_INSTRUCTIONS = {"faithful": "paper", "fixed": "silicolab"}


@dataclass(frozen=True)
class DebateSettings:
    """How the calls of one method call are made (shared by all its debates and agents).

    ``fidelity`` picks the debaters' instructions (:data:`DEBATER_INSTRUCTIONS`)."""

    model: LanguageModel
    tag_prefix: str = "mac"
    module: str = "meta"
    temperature: float = 0.0
    max_rounds: int = 2
    debater_max_tokens: int | None = 1024
    judge_max_tokens: int | None = None
    replicate: int = 0
    seed: int | None = None
    fidelity: str = "faithful"

    def __post_init__(self) -> None:
        if self.fidelity not in DEBATER_INSTRUCTIONS:
            raise InputError(
                f"fidelity must be 'faithful' (the paper's debaters) or 'fixed' (ours), "
                f"got {self.fidelity!r}"
            )

    @property
    def paper_debaters(self) -> bool:
        """Whether the debaters get the paper's instructions."""
        return self.fidelity == "faithful"

    def tag(self, role: str) -> str:
        return f"{self.tag_prefix}/{self.module}/{role}"

    async def structured(
        self, role: str, system: str, turn: str, schema: type, *, max_tokens: int | None
    ) -> dict[str, Any]:
        """One structured call of ``role`` (``schema`` validated, repaired up to twice);
        raises :class:`ParseFailure` when the reply stays invalid."""
        reply = await astructured(
            self.model,
            [{"role": "system", "content": system}, {"role": "user", "content": turn}],
            schema,
            retries=2,
            tag=self.tag(role),
            temperature=self.temperature,
            max_tokens=max_tokens,
            sample_index=self.replicate,
            seed=self.seed,
        )
        return reply.model_dump()


async def speak(settings: DebateSettings, role: str, system: str, turn: str) -> str:
    """One free-text speech of ``role`` (a debater), stripped."""
    completion = await settings.model.agenerate(
        [{"role": "system", "content": system}, {"role": "user", "content": turn}],
        temperature=settings.temperature,
        max_tokens=settings.debater_max_tokens,
        seed=settings.seed,
        tag=settings.tag(role),
        sample_index=settings.replicate,
    )
    return completion.text.strip()


@dataclass
class Panel:
    """One debate's transcript and its rounds: the debaters speak, a judge closes.

    ``template`` renders every turn from ``context`` plus the transcript so far;
    ``systems`` holds each side's system prompt; ``role_prefix`` goes before the side in
    the call's tag (``plan-`` for the plan debate).
    """

    settings: DebateSettings
    template: str
    context: Mapping[str, Any]
    systems: Mapping[str, str]
    role_prefix: str = ""
    entries: list[dict[str, Any]] = field(default_factory=list)
    rounds: list[dict[str, Any]] = field(default_factory=list)

    def turn(self, instruction: str) -> str:
        """The user turn: the context, the transcript so far and ``instruction``."""
        return render(
            self.template, transcript=self.entries, instruction=instruction, **self.context
        )

    def say(self, speaker: str, round_no: int, text: str) -> None:
        """Add ``text`` to the transcript the next turns show."""
        self.entries.append({"speaker": speaker, "round": round_no, "text": text})

    async def speeches(
        self, round_no: int, record: dict[str, Any], asks: Mapping[str, str]
    ) -> None:
        """Round ``round_no``'s two speeches, affirmative first: each side is asked its
        ``asks`` entry after seeing the transcript (which its speech joins) and is stored
        in the round's ``record`` under its side."""
        for side in SIDES:
            text = await speak(
                self.settings,
                f"{self.role_prefix}{side}",
                self.systems[side],
                self.turn(f"You are the {side} debater. Round {round_no}: {asks[side]}."),
            )
            record[side] = text
            self.say(f"{side} debater", round_no, text)

    async def close(
        self, record: dict[str, Any], verdict: Awaitable[dict[str, Any]]
    ) -> dict[str, Any] | None:
        """Close the round in ``record`` (added to ``rounds``) with the judge's
        ``verdict``, or with ``judge_error`` and ``None`` when the reply stayed invalid."""
        try:
            decided = await verdict
        except ParseFailure as err:
            record["judge_error"] = {"message": str(err), "raw": err.raw}
            self.rounds.append(record)
            return None
        record["judge"] = decided
        self.rounds.append(record)
        return decided


__all__ = ["DEBATER_INSTRUCTIONS", "SIDES", "DebateSettings", "Panel", "speak"]
