"""MAC's Meta-Debate module: two debaters and a judge decide the direct causal links.

Batching follows the paper's transcripts: one debate per *source* variable X asks, as a
numbered list, whether X directly causes each other variable, so a dataset of n variables
takes n debates of n-1 questions (run concurrently, at most ``jobs`` at a time).

A debate round is: the affirmative answers (ReAct-style Thought/Action/Observation, then a
final Yes/No per question), the negative rebuts, and the judge returns a structured verdict
per open question: ``yes``, ``no`` or ``follow_up`` with the question to ask next. Only the
follow-up questions go to the next round. After ``max_rounds`` rounds, questions still open
get a forced final judge call whose schema admits only yes/no. A judge reply that stays
invalid after the structured-output repair loop ends the rounds early (forced call); if the
forced call fails too, the question is *undecided*: no edge, and the result says so in
``notes`` and ``params["undecided"]``.

Convention: the verdict on "does p directly cause q" is ``G[p][q]``, which is silicolab's
own ``A[p, q] = 1`` means ``p -> q`` -- no transpose anywhere. A pair decided yes in both
directions becomes an undirected edge (see :func:`~.common.graph_from_pairs`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from silicolab.core.errors import InputError, ParseFailure
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
from silicolab.discovery.mac.schemas import judge_final_schema, judge_round_schema, question_key
from silicolab.discovery.mac.templates import render
from silicolab.discovery.result import DiscoveryResult
from silicolab.llm import LanguageModel, astructured

SCHEMA_VERSION = 1
CONVENTION_NOTE = (
    "verdict matrix G[p][q] answers 'does p directly cause q' (silicolab's row = cause); "
    "no transpose applied"
)


@dataclass(frozen=True)
class Question:
    """One numbered question of a debate: does ``cause`` directly cause ``effect``?"""

    number: int
    cause: str
    effect: str
    evidence: str = ""


@dataclass(frozen=True)
class DebateSettings:
    """How the debates are run (shared by every debate of one method call)."""

    model: LanguageModel
    tag_prefix: str = "mac"
    module: str = "meta"
    temperature: float = 0.0
    max_rounds: int = 2
    debater_max_tokens: int | None = 1024
    judge_max_tokens: int | None = None
    replicate: int = 0
    seed: int | None = None

    def tag(self, role: str) -> str:
        return f"{self.tag_prefix}/{self.module}/{role}"


def _listing(numbers: Sequence[int]) -> str:
    return ", ".join(f"Q{n}" for n in numbers)


async def speak(settings: DebateSettings, role: str, system: str, turn: str) -> str:
    completion = await settings.model.agenerate(
        [{"role": "system", "content": system}, {"role": "user", "content": turn}],
        temperature=settings.temperature,
        max_tokens=settings.debater_max_tokens,
        seed=settings.seed,
        tag=settings.tag(role),
        sample_index=settings.replicate,
    )
    return completion.text.strip()


async def _judge(
    settings: DebateSettings, schema: type, turn: str, *, allow_follow_up: bool
) -> dict[str, Any]:
    reply = await astructured(
        settings.model,
        [
            {"role": "system", "content": render("meta_judge", allow_follow_up=allow_follow_up)},
            {"role": "user", "content": turn},
        ],
        schema,
        retries=2,
        tag=settings.tag("judge"),
        temperature=settings.temperature,
        max_tokens=settings.judge_max_tokens,
        sample_index=settings.replicate,
        seed=settings.seed,
    )
    return reply.model_dump()


async def debate_source(
    settings: DebateSettings,
    *,
    source: str,
    questions: Sequence[Question],
    description: str,
    variables: Sequence[tuple[str, str]],
    evidence_note: str = "",
) -> dict[str, Any]:
    """Run one batched debate about ``source`` and return its JSON-ready transcript with
    ``verdicts`` ``{effect: "yes" | "no" | "undecided"}``."""
    by_number = {q.number: q for q in questions}
    context = {
        "description": description,
        "variables": variables,
        "source": source,
        "questions": [asdict(q) for q in questions],
        "evidence_note": evidence_note,
    }
    entries: list[dict[str, Any]] = []
    rounds: list[dict[str, Any]] = []
    decided: dict[int, str] = {}
    open_ = list(by_number)
    follow_ups: dict[int, str] = {}

    def turn(instruction: str) -> str:
        return render("meta_turn", transcript=entries, instruction=instruction, **context)

    for round_no in range(1, settings.max_rounds + 1):
        if round_no == 1:
            ask = f"answer every question ({_listing(open_)})"
        else:
            asked = "\n".join(f"- Q{n}: {follow_ups[n]}" for n in open_)
            ask = (
                f"answer the judge's follow-up questions, then give a final Yes/No for "
                f"{_listing(open_)}:\n{asked}"
            )
        record: dict[str, Any] = {"round": round_no, "open": list(open_)}
        for side, other in (("affirmative", "negative"), ("negative", "affirmative")):
            rebut = f" and rebut the {other} debater" if entries else ""
            text = await speak(
                settings,
                side,
                render("meta_debater", side=side),
                turn(f"You are the {side} debater. Round {round_no}: {ask}{rebut}."),
            )
            record[side] = text
            entries.append({"speaker": f"{side} debater", "round": round_no, "text": text})
        judge_turn = turn(
            f"You are the judge. Round {round_no} is over: decide {_listing(open_)} "
            "(yes, no, or follow_up with one question)."
        )
        try:
            verdict = await _judge(
                settings, judge_round_schema(open_), judge_turn, allow_follow_up=True
            )
        except ParseFailure as err:
            record["judge_error"] = {"message": str(err), "raw": err.raw}
            rounds.append(record)
            break
        record["judge"] = verdict
        rounds.append(record)
        follow_ups = {}
        for n in open_:
            item = verdict[question_key(n)]
            if item["decision"] == "follow_up":
                follow_ups[n] = item["follow_up"].strip() or (
                    f"Give your strongest argument on Q{n} once more, addressing the other side."
                )
            else:
                decided[n] = item["decision"]
        open_ = list(follow_ups)
        if not open_:
            break
        asked = "\n".join(f"Q{n}: {text}" for n, text in follow_ups.items())
        entries.append({"speaker": "judge", "round": round_no, "text": f"Follow-up:\n{asked}"})

    final: dict[str, Any] | None = None
    if open_:
        final_turn = turn(
            f"You are the judge. The debate is closed: give your final verdict, yes or no, "
            f"on {_listing(open_)}."
        )
        try:
            answers = await _judge(
                settings, judge_final_schema(open_), final_turn, allow_follow_up=False
            )
            final = {"forced": list(open_), "verdicts": answers}
            decided.update({n: answers[question_key(n)] for n in open_})
        except ParseFailure as err:
            final = {"forced": list(open_), "error": str(err), "raw": err.raw}
    return {
        "source": source,
        "questions": [asdict(q) for q in questions],
        "rounds": rounds,
        "final": final,
        "verdicts": {by_number[n].effect: decided.get(n, "undecided") for n in by_number},
    }


def build_questions(
    nodes: Sequence[str],
    source: str,
    skip: Mapping[Pair, bool],
    evidence: Mapping[Pair, str] | None,
) -> list[Question]:
    effects = [q for q in nodes if q != source and (source, q) not in skip]
    evidence = evidence or {}
    return [
        Question(i, source, effect, evidence.get((source, effect), ""))
        for i, effect in enumerate(effects, start=1)
    ]


def _check_settings(max_rounds: int, jobs: int) -> None:
    if int(max_rounds) < 1:
        raise InputError(f"max_rounds={max_rounds}: a debate needs at least one round")
    if int(jobs) < 1:
        raise InputError(f"jobs={jobs}: run at least one debate at a time")


async def ameta_debate(
    data: pd.DataFrame,
    *,
    model: LanguageModel,
    knowledge: Knowledge | None = None,
    description: str = "",
    variables: Mapping[str, str] | None = None,
    max_rounds: int = 2,
    tag_prefix: str = "mac",
    temperature: float = 0.0,
    jobs: int = 4,
    debater_max_tokens: int | None = 1024,
    judge_max_tokens: int | None = None,
    replicate: int = 0,
    seed: int | None = None,
    evidence: Mapping[Pair, str] | None = None,
    evidence_note: str = "",
    method: str = "mac_meta_debate",
) -> DiscoveryResult:
    """Discover the graph of ``data``'s columns by meta-debate (see the module docstring).

    ``knowledge`` decides its pairs without debate (required -> edge, forbidden or
    tier-forbidden -> no edge). ``evidence`` maps ``(cause, effect)`` to a sentence shown
    with that question (the Coding-Debating hybrid's statistical result). ``replicate``
    is the ``sample_index`` of every call: equal values reuse the cache, different values
    give independent, separately cached runs.
    """
    started = time.perf_counter()
    nodes = check_data(data)
    model = check_model(model)
    _check_settings(max_rounds, jobs)
    lines = variable_lines(nodes, variables)
    fixed = fixed_pairs(knowledge, nodes)
    settings = DebateSettings(
        model=model,
        tag_prefix=tag_prefix,
        temperature=temperature,
        max_rounds=int(max_rounds),
        debater_max_tokens=debater_max_tokens,
        judge_max_tokens=judge_max_tokens,
        replicate=int(replicate),
        seed=seed,
    )
    before = ledger_snapshot(model)
    gate = asyncio.Semaphore(int(jobs))

    async def one(source: str) -> dict[str, Any] | None:
        questions = build_questions(nodes, source, fixed, evidence)
        if not questions:
            return None
        async with gate:
            return await debate_source(
                settings,
                source=source,
                questions=questions,
                description=description,
                variables=lines,
                evidence_note=evidence_note,
            )

    debates = [d for d in await asyncio.gather(*(one(s) for s in nodes)) if d is not None]
    verdicts: dict[Pair, bool | None] = {}
    table: list[dict[str, Any]] = []
    for (cause, effect), value in fixed.items():
        verdicts[(cause, effect)] = value
        table.append({"cause": cause, "effect": effect, "verdict": value, "by": "knowledge"})
    for debate in debates:
        for effect, word in debate["verdicts"].items():
            value = {"yes": True, "no": False}.get(word)
            verdicts[(debate["source"], effect)] = value
            table.append(
                {"cause": debate["source"], "effect": effect, "verdict": value, "by": "debate"}
            )
    yes = [pair for pair, value in verdicts.items() if value]
    graph = graph_from_pairs(nodes, yes)
    undecided = sorted([c, e] for (c, e), v in verdicts.items() if v is None)
    both_ways = sorted(
        {tuple(sorted(p)) for p in yes if (p[1], p[0]) in verdicts and verdicts[(p[1], p[0])]}
    )
    notes = [CONVENTION_NOTE]
    if both_ways:
        notes.append(
            f"{len(both_ways)} pair(s) judged causal in both directions, kept as undirected "
            f"edges: {[list(p) for p in both_ways]}"
        )
    if undecided:
        notes.append(
            f"{len(undecided)} question(s) stayed undecided (the judge's reply was invalid "
            f"even when forced) and count as no edge: {undecided}"
        )
    if fixed:
        notes.append(f"{len(fixed)} pair(s) decided by the given knowledge, not debated")
    params = {
        "max_rounds": int(max_rounds),
        "temperature": temperature,
        "jobs": int(jobs),
        "tag_prefix": tag_prefix,
        "replicate": int(replicate),
        "seed": seed,
        "debater_max_tokens": debater_max_tokens,
        "judge_max_tokens": judge_max_tokens,
        "n_debates": len(debates),
        "n_questions": sum(len(d["questions"]) for d in debates),
        "rounds_run": sum(len(d["rounds"]) for d in debates),
        "forced_verdicts": sum(len(d["final"]["forced"]) for d in debates if d["final"]),
        "undecided": undecided,
        "knowledge": knowledge.to_dict() if knowledge else None,
    }
    raw = {
        "schema_version": SCHEMA_VERSION,
        "module": "meta",
        "debates": debates,
        "verdicts": table,
    }
    return DiscoveryResult(
        method=method,
        graph=graph,
        raw=raw,
        runtime_s=time.perf_counter() - started,
        usage=usage_between(before, ledger_snapshot(model), tag_prefix),
        params=params,
        notes=tuple(notes),
    )


meta_debate = sync_twin(ameta_debate, "meta_debate")
