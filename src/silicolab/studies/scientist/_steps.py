"""The machinery of the LLM-as-scientist chain: one typed, logged, cacheable call per step.

Every step of hypothesis generation (and of follow-on planning) renders its own jinja2
template from ``studies/prompts/``, asks the scientist model for a small pydantic reply
(an ``explanation`` plus the payload), and records the payload and the explanation as a
:class:`~silicolab.studies.hypothesis.Decision`. Each prompt starts with machine-readable
marker lines (``Step: <name>``, ``Subject: <variable or agent>``) so that offline test
doubles (:mod:`silicolab.studies.scripted`) can tell the steps apart without parsing prose.

A step's ``sample_index`` is derived from the seed and the step's identity (e.g.
``price.units``), never from call order, so a rerun hits the exact-prompt LLM cache. With a
:class:`~silicolab.studies.scientist._journal.StepJournal` every accepted reply is written
as it is taken and a journaled step is replayed without a call (``study hypothesis
--resume``); a step whose reply stayed invalid before is asked with a fresh sample
identity (the cache holds the invalid one); a model error (no reply) leaves it as it was.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from silicolab.core.errors import ParseFailure
from silicolab.core.seeding import stable_hash
from silicolab.core.templates import render_template
from silicolab.llm import LanguageModel, astructured
from silicolab.studies.hypothesis import AgentSpec, Decision

PROMPTS = Path(__file__).parents[1] / "prompts"
#: How much of a bad reply an error message shows.
REPLY_CUT = 300
R = TypeVar("R", bound="Reply")


class Reply(BaseModel):
    """Base of every step's reply: the model's reasoning, then the payload fields."""

    model_config = ConfigDict(extra="ignore")

    explanation: str = Field(description="one or two sentences on why you chose this")


def render(template: str, **values: Any) -> str:
    """Render ``prompts/<template>.j2`` (a missing variable is an error, not a blank)."""
    return render_template(PROMPTS, template, **values)


def slug(text: str) -> str:
    """A snake_case identifier from a model-chosen name: ``"Buyer's budget"`` ->
    ``buyers_budget``; a leading digit gets a ``v_`` prefix."""
    text = re.sub(r"['’`]", "", str(text).strip().lower())
    name = re.sub(r"[^a-z0-9]+", "_", text).strip("_") or "variable"
    return name if name[0].isalpha() else f"v_{name}"


def unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3``... whichever is not in ``taken`` (which is updated)."""
    out, k = name, 2
    while out in taken:
        out, k = f"{name}_{k}", k + 1
    taken.add(out)
    return out


def payload_fields(schema: type[BaseModel]) -> dict[str, str]:
    """``{field: description}`` of a reply schema, without ``explanation``; a list of
    objects names the keys of each object."""
    out = {}
    for name, info in schema.model_fields.items():
        if name == "explanation":
            continue
        text = info.description or ""
        item = next(iter(get_args(info.annotation)), None)
        if isinstance(item, type) and issubclass(item, BaseModel):
            keys = ", ".join(f'"{k}"' for k in item.model_fields)
            text += f" (a list of objects with the keys {keys})"
        out[name] = text
    return out


def _reply_format(schema: type[BaseModel]) -> str:
    lines = [f'- "{name}": {text}'.rstrip(": ") for name, text in payload_fields(schema).items()]
    return (
        "Reply with one JSON object and nothing else. Its keys:\n"
        '- "explanation": one or two sentences on why you chose this\n' + "\n".join(lines)
    )


@dataclass
class Scientist:
    """A scientist session: the model, its settings, what is known so far, and the log.

    ``agents`` grows as the chain learns them (templates list them); ``decisions`` holds
    every step's :class:`Decision` in the order taken; ``taken`` the variable names used;
    ``journal`` (optional) keeps every accepted reply on disk and replays the ones it has
    (``calls`` counts the steps asked of the model, ``replayed`` those taken from it).
    """

    model: LanguageModel
    scenario: str
    temperature: float = 0.4
    seed: int = 0
    on_step: Callable[[Decision], None] | None = None
    agents: list[AgentSpec] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    taken: set[str] = field(default_factory=set)
    calls: int = 0
    journal: Any = None
    replayed: int = 0

    def record(self, step: str, value: Any, explanation: str) -> Decision:
        """Log a decision (also those taken by code, e.g. an attribute dropped)."""
        decision = Decision(step=step, value=value, explanation=explanation)
        self.decisions.append(decision)
        if self.on_step is not None:
            self.on_step(decision)
        return decision

    async def ask(self, step: str, schema: type[R], *, subject: str = "", **context: Any) -> R:
        """Render the template ``step`` for ``subject``, ask for ``schema``, log the decision.

        A reply that stays invalid after the repair loop raises :class:`ParseFailure`
        naming the step and showing the start of the reply."""
        ident = f"{subject}.{step}" if subject else step
        replayed = self._replay(ident, schema)
        if replayed is not None:
            return replayed
        prompt = render(
            step,
            step=step,
            subject=subject,
            scenario=self.scenario,
            agents=self.agents,
            **context,
        )
        messages = [
            {"role": "system", "content": render("system")},
            {"role": "user", "content": f"{prompt}\n\n{_reply_format(schema)}"},
        ]
        self.calls += 1
        attempt = self.journal.attempt(ident) if self.journal is not None else 0
        identity = f"{self.seed}:{ident}" + (f"#{attempt}" if attempt else "")
        try:
            reply = await astructured(
                self.model,
                messages,
                schema,
                retries=2,
                tag="scientist",
                temperature=self.temperature,
                sample_index=stable_hash(identity) % 2**31,
            )
        except ParseFailure as exc:
            cut = exc.raw[:REPLY_CUT] + ("..." if len(exc.raw) > REPLY_CUT else "")
            failure = ParseFailure(
                f"scientist step {ident!r} failed: {exc}. The last reply began: {cut!r}",
                raw=exc.raw,
                attempts=exc.attempts,
            )
            if self.journal is not None:
                self.journal.fail(ident, failure)
            raise failure from exc
        if self.journal is not None:
            self.journal.accept(ident, reply.model_dump(mode="json"))
        return self._take(ident, reply)

    def _take(self, ident: str, reply: R) -> R:
        payload = reply.model_dump(mode="json", exclude={"explanation"})
        value = next(iter(payload.values())) if len(payload) == 1 else payload
        self.record(ident, value, reply.explanation)
        return reply

    def _replay(self, ident: str, schema: type[R]) -> R | None:
        """The journaled reply of step ``ident``, validated again, or ``None``."""
        stored = self.journal.reply(ident) if self.journal is not None else None
        if stored is None:
            return None
        try:
            reply = schema.model_validate(stored)
        except ValidationError:  # the schema changed since: ask again
            return None
        self.replayed += 1
        return self._take(ident, reply)


__all__ = ["PROMPTS", "Reply", "Scientist", "payload_fields", "render", "slug", "unique"]
