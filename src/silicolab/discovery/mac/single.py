"""The single-agent baseline: one LLM call per source variable, no debate.

It asks exactly the batched questions of the meta-debate (one call per source variable
X: "does X directly cause Y?" for every other Y) of one agent, which answers with a
structured ``yes``/``no`` (plus a short thought) per question. The paper uses it to show
what the debate adds. A reply that stays invalid after the repair loop leaves that
source's questions undecided (no edge), named in ``notes`` and ``params["undecided"]``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

import pandas as pd

from silicolab.core.errors import ParseFailure
from silicolab.core.records import SCHEMA_VERSION
from silicolab.core.sync import sync_twin
from silicolab.discovery.knowledge import Knowledge
from silicolab.discovery.mac.common import (
    Meter,
    check_data,
    check_model,
    fixed_pairs,
    graph_from_pairs,
    variable_lines,
)
from silicolab.discovery.mac.panel import DebateSettings
from silicolab.discovery.mac.questions import CONVENTION_NOTE, Question, ask_each_source
from silicolab.discovery.mac.schemas import question_key, single_agent_schema
from silicolab.discovery.mac.templates import render
from silicolab.discovery.result import GraphResult
from silicolab.llm import LanguageModel


async def _ask_source(
    settings: DebateSettings,
    *,
    source: str,
    questions: Sequence[Question],
    description: str,
    variables: Sequence[tuple[str, str]],
    max_tokens: int | None,
) -> dict[str, Any]:
    """One structured call answering every question about ``source``; its JSON-ready
    record with ``verdicts`` (all ``undecided`` when the reply stayed invalid)."""
    numbers = [q.number for q in questions]
    turn = render(
        "meta_turn",
        description=description,
        variables=variables,
        source=source,
        questions=[asdict(q) for q in questions],
        evidence_note="",
        transcript=[],
        instruction=f"Answer every question (Q{numbers[0]} to Q{numbers[-1]}).",
    )
    record: dict[str, Any] = {"source": source, "questions": [asdict(q) for q in questions]}
    try:
        answers = await settings.structured(
            "agent",
            render("single_agent"),
            turn,
            single_agent_schema(numbers),
            max_tokens=max_tokens,
        )
    except ParseFailure as err:
        record["error"] = {"message": str(err), "raw": err.raw}
        record["verdicts"] = {q.effect: "undecided" for q in questions}
        return record
    record["answers"] = answers
    record["verdicts"] = {q.effect: answers[question_key(q.number)]["answer"] for q in questions}
    return record


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
) -> GraphResult:
    """Discover the graph of ``data`` with one structured call per source variable."""
    nodes = check_data(data)
    model = check_model(model)
    lines = variable_lines(nodes, variables)
    fixed = fixed_pairs(knowledge, nodes)
    settings = DebateSettings(
        model=model,
        tag_prefix=tag_prefix,
        module="single",
        temperature=temperature,
        replicate=int(replicate),
        seed=seed,
    )
    meter = Meter(model, tag_prefix)

    ask = functools.partial(
        _ask_source, settings, description=description, variables=lines, max_tokens=max_tokens
    )
    decided = await ask_each_source(nodes, fixed, None, max(1, int(jobs)), ask)
    calls, undecided = decided.records, decided.undecided
    notes = [CONVENTION_NOTE]
    if undecided:
        notes.append(f"{len(undecided)} question(s) undecided (invalid replies), no edge")
    return meter.result(
        "mac_single_agent",
        graph_from_pairs(nodes, decided.yes),
        raw={"schema_version": SCHEMA_VERSION, "module": "single", "calls": calls},
        params={
            "temperature": temperature,
            "jobs": int(jobs),
            "tag_prefix": tag_prefix,
            "replicate": int(replicate),
            "seed": seed,
            "n_calls": len(calls),
            "undecided": undecided,
        },
        notes=notes,
    )


single_agent = sync_twin(asingle_agent)
