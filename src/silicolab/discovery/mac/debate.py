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

import functools
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

import pandas as pd

from silicolab.core.errors import InputError, ParseFailure
from silicolab.core.records import SCHEMA_VERSION
from silicolab.core.sync import sync_twin
from silicolab.discovery.knowledge import Knowledge
from silicolab.discovery.mac.common import (
    Meter,
    Pair,
    check_data,
    check_model,
    fixed_pairs,
    graph_from_pairs,
    variable_lines,
)
from silicolab.discovery.mac.panel import DEBATER_INSTRUCTIONS, SIDES, DebateSettings, Panel
from silicolab.discovery.mac.questions import CONVENTION_NOTE, Question, ask_each_source
from silicolab.discovery.mac.schemas import judge_final_schema, judge_round_schema, question_key
from silicolab.discovery.mac.templates import render
from silicolab.discovery.result import GraphResult
from silicolab.llm import LanguageModel

_REBUTS = {"affirmative": "negative", "negative": "affirmative"}


def _listing(numbers: Sequence[int]) -> str:
    return ", ".join(f"Q{n}" for n in numbers)


async def _judge(
    settings: DebateSettings, schema: type, turn: str, *, allow_follow_up: bool
) -> dict[str, Any]:
    system = render("meta_judge", allow_follow_up=allow_follow_up)
    return await settings.structured(
        "judge", system, turn, schema, max_tokens=settings.judge_max_tokens
    )


def _round_asks(
    round_no: int, open_: Sequence[int], follow_ups: Mapping[int, str]
) -> dict[str, str]:
    """What each debater is asked in round ``round_no``: every question first, then the
    judge's follow-ups; each side rebuts the other once someone has spoken."""
    if round_no == 1:
        ask = f"answer every question ({_listing(open_)})"
    else:
        asked = "\n".join(f"- Q{n}: {follow_ups[n]}" for n in open_)
        ask = (
            f"answer the judge's follow-up questions, then give a final Yes/No for "
            f"{_listing(open_)}:\n{asked}"
        )
    return {
        side: ask + (f" and rebut the {_REBUTS[side]} debater" if rebut else "")
        for side, rebut in zip(SIDES, (round_no > 1, True), strict=True)
    }


def _follow_ups(
    verdict: Mapping[str, Any], open_: Sequence[int], decided: dict[int, str]
) -> dict[int, str]:
    """The judge's follow-up question per question still open; the decided ones go into
    ``decided``."""
    follow_ups = {}
    for n in open_:
        item = verdict[question_key(n)]
        if item["decision"] == "follow_up":
            follow_ups[n] = item["follow_up"].strip() or (
                f"Give your strongest argument on Q{n} once more, addressing the other side."
            )
        else:
            decided[n] = item["decision"]
    return follow_ups


async def _forced_verdicts(
    settings: DebateSettings, turn: str, open_: Sequence[int], decided: dict[int, str]
) -> dict[str, Any]:
    """The judge's final yes/no on the questions still open after the last round (into
    ``decided``); the record of that call, with the error when it stayed invalid."""
    try:
        answers = await _judge(settings, judge_final_schema(open_), turn, allow_follow_up=False)
    except ParseFailure as err:
        return {"forced": list(open_), "error": str(err), "raw": err.raw}
    decided.update({n: answers[question_key(n)] for n in open_})
    return {"forced": list(open_), "verdicts": answers}


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
    systems = {
        side: render("meta_debater", side=side, paper=settings.paper_debaters) for side in SIDES
    }
    panel = Panel(settings, "meta_turn", context, systems)
    decided: dict[int, str] = {}
    open_ = list(by_number)
    follow_ups: dict[int, str] = {}
    for round_no in range(1, settings.max_rounds + 1):
        record: dict[str, Any] = {"round": round_no, "open": list(open_)}
        await panel.speeches(round_no, record, _round_asks(round_no, open_, follow_ups))
        judge_turn = panel.turn(
            f"You are the judge. Round {round_no} is over: decide {_listing(open_)} "
            "(yes, no, or follow_up with one question)."
        )
        schema = judge_round_schema(open_)
        verdict = await panel.close(
            record, _judge(settings, schema, judge_turn, allow_follow_up=True)
        )
        if verdict is None:
            break
        follow_ups = _follow_ups(verdict, open_, decided)
        open_ = list(follow_ups)
        if not open_:
            break
        asked = "\n".join(f"Q{n}: {text}" for n, text in follow_ups.items())
        panel.say("judge", round_no, f"Follow-up:\n{asked}")

    final: dict[str, Any] | None = None
    if open_:
        final_turn = panel.turn(
            f"You are the judge. The debate is closed: give your final verdict, yes or no, "
            f"on {_listing(open_)}."
        )
        final = await _forced_verdicts(settings, final_turn, open_, decided)
    return {
        "source": source,
        "questions": [asdict(q) for q in questions],
        "rounds": panel.rounds,
        "final": final,
        "verdicts": {by_number[n].effect: decided.get(n, "undecided") for n in by_number},
    }


def _check_settings(max_rounds: int, jobs: int) -> None:
    if int(max_rounds) < 1:
        raise InputError(f"max_rounds={max_rounds}: a debate needs at least one round")
    if int(jobs) < 1:
        raise InputError(f"jobs={jobs}: run at least one debate at a time")


def _notes(
    verdicts: Mapping[Pair, bool | None], undecided: Sequence[Any], fixed: Mapping[Pair, bool]
) -> list[str]:
    """What a reader of the graph must know: the convention, the pairs judged both ways
    (undirected edges), the undecided questions and the pairs knowledge decided."""
    yes = [pair for pair, value in verdicts.items() if value]
    both_ways = sorted({tuple(sorted(p)) for p in yes if verdicts.get((p[1], p[0]))})
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
    return notes


def _meta_params(
    settings: DebateSettings, jobs: int, debates: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The effective parameters of a meta-debate run and how much debating it did."""
    return {
        "max_rounds": settings.max_rounds,
        "temperature": settings.temperature,
        "fidelity": settings.fidelity,
        "debater_instructions": DEBATER_INSTRUCTIONS[settings.fidelity],
        "jobs": jobs,
        "tag_prefix": settings.tag_prefix,
        "replicate": settings.replicate,
        "seed": settings.seed,
        "debater_max_tokens": settings.debater_max_tokens,
        "judge_max_tokens": settings.judge_max_tokens,
        "n_debates": len(debates),
        "n_questions": sum(len(d["questions"]) for d in debates),
        "rounds_run": sum(len(d["rounds"]) for d in debates),
        "forced_verdicts": sum(len(d["final"]["forced"]) for d in debates if d["final"]),
    }


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
    fidelity: str = "faithful",
) -> GraphResult:
    """Discover the graph of ``data``'s columns by meta-debate (see the module docstring).

    ``knowledge`` decides its pairs without debate (required -> edge, forbidden or
    tier-forbidden -> no edge). ``evidence`` maps ``(cause, effect)`` to a sentence shown
    with that question (the Coding-Debating hybrid's statistical result). ``replicate``
    is the ``sample_index`` of every call: equal values reuse the cache, different values
    give independent, separately cached runs. ``fidelity`` ``"faithful"`` gives the
    debaters the paper's instructions (both always disagree with the other side),
    ``"fixed"`` ours (an affirmative that argues its answer, a negative that probes it).
    """
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
        fidelity=fidelity,
    )
    meter = Meter(model, tag_prefix)

    debate = functools.partial(
        debate_source,
        settings,
        description=description,
        variables=lines,
        evidence_note=evidence_note,
    )
    decided = await ask_each_source(nodes, fixed, evidence, int(jobs), debate)
    debates = decided.records
    params = _meta_params(settings, int(jobs), debates)
    params |= {
        "undecided": decided.undecided,
        "knowledge": knowledge.to_dict() if knowledge else None,
    }
    table = [
        {"cause": c, "effect": e, "verdict": v, "by": "knowledge" if (c, e) in fixed else "debate"}
        for (c, e), v in decided.verdicts.items()
    ]
    raw = {"schema_version": SCHEMA_VERSION, "module": "meta", "debates": debates}
    return meter.result(
        method,
        graph_from_pairs(nodes, decided.yes),
        raw=raw | {"verdicts": table},
        params=params,
        notes=_notes(decided.verdicts, decided.undecided, fixed),
    )


meta_debate = sync_twin(ameta_debate)
