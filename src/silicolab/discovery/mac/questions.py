"""The batched edge questions shared by the meta-debate and the single-agent baseline.

One batch per *source* variable X asks, as a numbered list, whether X directly causes
each other variable (pairs the user's knowledge decides are not asked). The answers come
back as words per effect (``yes``, ``no``, ``undecided``) and become the verdict
``G[p][q]`` on "does p directly cause q" -- silicolab's own ``A[p, q] = 1`` means
``p -> q``, so no transpose anywhere.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from silicolab.discovery.mac.common import Pair

CONVENTION_NOTE = (
    "verdict matrix G[p][q] answers 'does p directly cause q' (silicolab's row = cause); "
    "no transpose applied"
)


@dataclass(frozen=True)
class Question:
    """One numbered question of a batch: does ``cause`` directly cause ``effect``?"""

    number: int
    cause: str
    effect: str
    evidence: str = ""


def build_questions(
    nodes: Sequence[str],
    source: str,
    skip: Mapping[Pair, bool],
    evidence: Mapping[Pair, str] | None,
) -> list[Question]:
    """The questions about ``source``: one per other node, except the pairs in ``skip``."""
    effects = [q for q in nodes if q != source and (source, q) not in skip]
    evidence = evidence or {}
    return [
        Question(i, source, effect, evidence.get((source, effect), ""))
        for i, effect in enumerate(effects, start=1)
    ]


@dataclass(frozen=True)
class Decisions:
    """What asking every source gave: the per-source ``records`` (node order), every
    pair's ``verdicts`` (knowledge first) and the ``undecided`` pairs."""

    records: list[dict[str, Any]]
    verdicts: dict[Pair, bool | None]
    undecided: list[list[str]]

    @property
    def yes(self) -> list[Pair]:
        """The pairs decided causal: the edges of the graph."""
        return [pair for pair, value in self.verdicts.items() if value]


async def ask_each_source(
    nodes: Sequence[str],
    fixed: Mapping[Pair, bool],
    evidence: Mapping[Pair, str] | None,
    jobs: int,
    ask: Callable[..., Awaitable[dict[str, Any]]],
) -> Decisions:
    """``ask(source=, questions=)`` for every source with questions left, at most ``jobs``
    at a time, and what the records decide: the one way the meta-debate and the
    single-agent baseline turn answers into edges (records in node order)."""
    gate = asyncio.Semaphore(jobs)

    async def one(source: str) -> dict[str, Any] | None:
        questions = build_questions(nodes, source, fixed, evidence)
        if not questions:
            return None
        async with gate:
            return await ask(source=source, questions=questions)

    records = [r for r in await asyncio.gather(*(one(s) for s in nodes)) if r is not None]
    verdicts = collect_verdicts(fixed, records)
    return Decisions(records, verdicts, undecided_pairs(verdicts))


def collect_verdicts(
    fixed: Mapping[Pair, bool], records: Iterable[Mapping[str, Any]]
) -> dict[Pair, bool | None]:
    """Every pair's verdict: the knowledge's ``fixed`` pairs first, then each record's
    ``verdicts`` words (``yes`` -> True, ``no`` -> False, ``undecided`` -> None)."""
    verdicts: dict[Pair, bool | None] = dict(fixed)
    for record in records:
        for effect, word in record["verdicts"].items():
            verdicts[(record["source"], effect)] = {"yes": True, "no": False}.get(word)
    return verdicts


def undecided_pairs(verdicts: Mapping[Pair, bool | None]) -> list[list[str]]:
    """The ``[cause, effect]`` pairs left undecided, sorted (they count as no edge)."""
    return sorted([c, e] for (c, e), v in verdicts.items() if v is None)


__all__ = [
    "CONVENTION_NOTE",
    "Decisions",
    "Question",
    "ask_each_source",
    "build_questions",
    "collect_verdicts",
    "undecided_pairs",
]
