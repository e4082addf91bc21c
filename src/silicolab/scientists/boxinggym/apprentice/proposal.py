"""Proposal: the statistician writes a program, the sandbox runs it, errors are repaired.

The prompts (``prompts/proposal_*.j2``, ``rules.j2``, ``repair.j2``) are silicolab's own.
A reply's program is its first ```python block (else its first fenced block). A version
that fails is sent back with the sandbox's report for at most ``max_repairs`` repairs; the
last version is kept with every error, so a program that never runs is a record, not a crash
(and so is a model that fails after its retries).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from silicolab.core.errors import LLMError
from silicolab.scientists.boxinggym.apprentice.critic import render
from silicolab.scientists.boxinggym.apprentice.execute import ProgramRun
from silicolab.scientists.boxinggym.apprentice.score import Candidate

#: The statistician's sampling (published box-loop settings: temperature 0, 4096 tokens).
TEMPERATURE = 0.0
MAX_TOKENS = 4096
MAX_REPORT_CHARS = 3000


def extract_program(text: str) -> str | None:
    """The code of the first ```python block of ``text`` (else of its first fenced block)."""
    for pattern in (r"```python[^\n]*\n(.*?)```", r"```[^\n]*\n(.*?)```"):
        match = re.search(pattern, text, re.DOTALL)
        if match and match.group(1).strip():
            return match.group(1).strip() + "\n"
    return None


@dataclass(frozen=True, kw_only=True)
class ProposalContext:
    """What the statistician is told: ``mode`` ("prior" or "posterior"), the dataset and
    column descriptions, the input columns and the output column, the data ``table``, the
    ``previous`` programs ({"program", "score"} dicts, best first) and the critic's
    ``hypotheses`` and ``synthesis``."""

    mode: str
    dataset: str
    column_description: str
    inputs: tuple[str, ...]
    target: str
    table: str = ""
    previous: tuple[dict[str, str], ...] = ()
    hypotheses: str = ""
    synthesis: str = ""

    def messages(self) -> list[dict[str, str]]:
        """The proposal conversation's first two messages."""
        rules = render(
            "rules.j2",
            inputs=", ".join(self.inputs),
            first_input=self.inputs[0],
            target=self.target,
        )
        system = render(
            "proposal_system.j2",
            mode=self.mode,
            dataset=self.dataset,
            column_description=self.column_description,
            table=self.table,
            rules=rules,
            previous=list(self.previous),
            hypotheses=self.hypotheses,
            synthesis=self.synthesis,
        )
        user = render("proposal_user.j2", mode=self.mode)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]


Ask = Callable[[list[dict[str, str]]], Awaitable[str]]
Execute = Callable[[str], Awaitable[ProgramRun]]


async def apropose_program(
    ask: Ask, execute: Execute, context: ProposalContext, *, max_repairs: int = 2
) -> Candidate:
    """One candidate: ask for a program, run it, and repair it until it runs or
    ``max_repairs`` repairs are spent. ``ask`` sends a conversation to the statistician's
    model and returns its reply; ``execute`` runs a program in the sandbox."""
    messages = context.messages()
    candidate = Candidate(program=None, run=None)
    for attempt in range(max_repairs + 1):
        try:
            reply = await ask(messages)
        except LLMError as err:  # the model failed after its retries: record, go on
            candidate.errors.append(f"model error: {err}")
            return candidate
        candidate.replies.append(reply)
        messages = [*messages, {"role": "assistant", "content": reply}]
        program = extract_program(reply)
        if program is None:
            report = "The reply contained no ```python fenced block with the program."
            candidate.program, candidate.run = None, None
        else:
            run = await execute(program)
            candidate.program, candidate.run = program, run
            if run.ok:
                return candidate
            report = _trim(run.report or run.message)
        candidate.errors.append(report)
        if attempt < max_repairs:
            messages.append({"role": "user", "content": render("repair.j2", report=report)})
    return candidate


def _trim(text: str) -> str:
    """The sandbox report cut to its last :data:`MAX_REPORT_CHARS` characters (the
    traceback's end says what went wrong)."""
    return text if len(text) <= MAX_REPORT_CHARS else "..." + text[-MAX_REPORT_CHARS:]


def as_previous(candidates: list[Candidate], limit: int = 3) -> tuple[dict[str, Any], ...]:
    """The most recent programs that ran, best first, as the proposal's in-context
    exemplars (published: 3 exemplars, "recent" heuristic)."""
    ran = [c for c in candidates if c.ok][-limit:]
    ran.sort(key=lambda c: -c.elpd_loo)
    return tuple({"program": c.program, "score": c.score_text()} for c in ran)
