"""The single-agent baseline: one LLM call per source variable, no debate.

It asks exactly the batched questions of the meta-debate (one call per source variable
X: "does X directly cause Y?" for every other Y) of one agent, which answers with a
structured ``yes``/``no`` (plus a short thought) per question. The paper uses it to show
what the debate adds. A reply that stays invalid after the repair loop leaves that
source's questions undecided (no edge), named in ``notes`` and ``params["undecided"]``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

import pandas as pd

from silicolab.core.errors import ParseFailure
from silicolab.discovery.knowledge import Knowledge
from silicolab.discovery.mac.common import (
    Pair,
    check_data,
    check_model,
    fixed_pairs,
    graph_from_pairs,
    ledger_snapshot,
    sync_twin,
    usage_between,
    variable_lines,
)
from silicolab.discovery.mac.debate import CONVENTION_NOTE, build_questions
from silicolab.discovery.mac.schemas import question_key, single_agent_schema
from silicolab.discovery.mac.templates import render
from silicolab.discovery.result import DiscoveryResult
from silicolab.llm import LanguageModel, astructured

SCHEMA_VERSION = 1


async def asingle_agent(
    data: pd.DataFrame,
    *,
    model: LanguageModel,
    knowledge: Knowledge | None = None,
    description: str = "",
    variables: Mapping[str, str] | None = None,
    tag_prefix: str = "mac",
    temperature: float = 0.0,
    jobs: int = 4,
    max_tokens: int | None = None,
    replicate: int = 0,
    seed: int | None = None,
) -> DiscoveryResult:
    """Discover the graph of ``data`` with one structured call per source variable."""
    started = time.perf_counter()
    nodes = check_data(data)
    model = check_model(model)
    lines = variable_lines(nodes, variables)
    fixed = fixed_pairs(knowledge, nodes)
    before = ledger_snapshot(model)
    gate = asyncio.Semaphore(max(1, int(jobs)))
    system = render("single_agent")

    async def ask(source: str) -> dict[str, Any] | None:
        questions = build_questions(nodes, source, fixed, None)
        if not questions:
            return None
        numbers = [q.number for q in questions]
        turn = render(
            "meta_turn",
            description=description,
            variables=lines,
            source=source,
            questions=[asdict(q) for q in questions],
            evidence_note="",
            transcript=[],
            instruction=f"Answer every question (Q{numbers[0]} to Q{numbers[-1]}).",
        )
        record: dict[str, Any] = {"source": source, "questions": [asdict(q) for q in questions]}
        async with gate:
            try:
                reply = await astructured(
                    model,
                    [{"role": "system", "content": system}, {"role": "user", "content": turn}],
                    single_agent_schema(numbers),
                    retries=2,
                    tag=f"{tag_prefix}/single/agent",
                    temperature=temperature,
                    max_tokens=max_tokens,
                    sample_index=int(replicate),
                    seed=seed,
                )
            except ParseFailure as err:
                record["error"] = {"message": str(err), "raw": err.raw}
                record["verdicts"] = {q.effect: "undecided" for q in questions}
                return record
        answers = reply.model_dump()
        record["answers"] = answers
        record["verdicts"] = {
            q.effect: answers[question_key(q.number)]["answer"] for q in questions
        }
        return record

    calls = [c for c in await asyncio.gather(*(ask(s) for s in nodes)) if c is not None]
    verdicts: dict[Pair, bool | None] = dict(fixed)
    for call in calls:
        for effect, word in call["verdicts"].items():
            verdicts[(call["source"], effect)] = {"yes": True, "no": False}.get(word)
    undecided = sorted([c, e] for (c, e), v in verdicts.items() if v is None)
    notes = [CONVENTION_NOTE]
    if undecided:
        notes.append(f"{len(undecided)} question(s) undecided (invalid replies), no edge")
    return DiscoveryResult(
        method="mac_single_agent",
        graph=graph_from_pairs(nodes, [p for p, v in verdicts.items() if v]),
        raw={"schema_version": SCHEMA_VERSION, "module": "single", "calls": calls},
        runtime_s=time.perf_counter() - started,
        usage=usage_between(before, ledger_snapshot(model), tag_prefix),
        params={
            "temperature": temperature,
            "jobs": int(jobs),
            "tag_prefix": tag_prefix,
            "replicate": int(replicate),
            "seed": seed,
            "n_calls": len(calls),
            "undecided": undecided,
        },
        notes=tuple(notes),
    )


single_agent = sync_twin(asingle_agent, "single_agent")
