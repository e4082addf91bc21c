"""MAC's Debate-Coding module: a plan debate picks the algorithm, an executor runs it.

Phase 1 (plan debate): affirmative and negative debaters, who know short cards of the
allowed algorithms (assumptions, suitable data, meaning of the output), see the dataset
description, the variables and ``df.head()``; the affirmative proposes an algorithm and a
numbered plan, the negative attacks it and proposes another; the judge returns a
structured verdict (winner, algorithm from the allowed list, the winning plan's steps) or
a follow-up question, bounded by ``max_rounds`` and then forced, as in the meta-debate.

Phase 2 (executor, :mod:`.executor`): code in the sandbox with a repair loop. If every
attempt fails, the chosen algorithm runs through :mod:`silicolab.discovery.statistical`
instead; the result then says so (``params["fallback"] = True`` and a note) -- never
silently. The same happens, with its own note, when the plan judge never gives a valid
verdict (the first allowed algorithm is used).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from silicolab.core.errors import InputError, ParseFailure
from silicolab.discovery.knowledge import Knowledge
from silicolab.discovery.mac.algorithms import algorithm_info, check_algorithms
from silicolab.discovery.mac.common import (
    check_data,
    check_model,
    knowledge_lines,
    knowledge_violations,
    ledger_snapshot,
    sync_twin,
    usage_between,
    variable_lines,
)
from silicolab.discovery.mac.debate import DebateSettings, speak
from silicolab.discovery.mac.executor import run_executor
from silicolab.discovery.mac.schemas import plan_verdict_schema
from silicolab.discovery.mac.templates import render
from silicolab.discovery.result import DiscoveryResult
from silicolab.llm import LanguageModel, astructured

SCHEMA_VERSION = 1
DEFAULT_ALGORITHMS = ("pc", "exact", "direct_lingam", "ges", "fci", "cdnod")
HEAD_ROWS = 5


async def _plan_judge(
    settings: DebateSettings, algorithms: Sequence[str], turn: str, *, allow_follow_up: bool
) -> dict[str, Any]:
    system = render("plan_judge", allow_follow_up=allow_follow_up, names=list(algorithms))
    reply = await astructured(
        settings.model,
        [{"role": "system", "content": system}, {"role": "user", "content": turn}],
        plan_verdict_schema(algorithms, allow_follow_up=allow_follow_up),
        retries=2,
        tag=settings.tag("plan-judge"),
        temperature=settings.temperature,
        max_tokens=settings.judge_max_tokens,
        sample_index=settings.replicate,
        seed=settings.seed,
    )
    return reply.model_dump()


async def plan_debate(
    settings: DebateSettings,
    *,
    algorithms: Sequence[str],
    data: pd.DataFrame,
    description: str,
    variables: Sequence[tuple[str, str]],
    knowledge: Knowledge | None,
) -> dict[str, Any]:
    """Run the plan debate; returns its JSON-ready transcript with ``decision``
    (``winner``, ``algorithm``, ``plan``, ``forced``) or ``decision = None`` when even the
    forced judge call gave no valid verdict."""
    cards = [algorithm_info(name).as_prompt() for name in algorithms]
    context = {
        "description": description,
        "variables": variables,
        "n_rows": len(data),
        "head": data.head(HEAD_ROWS).to_string(),
        "constraints": knowledge_lines(knowledge),
    }
    entries: list[dict[str, Any]] = []
    rounds: list[dict[str, Any]] = []
    follow_up = ""
    decision: dict[str, Any] | None = None

    def turn(instruction: str) -> str:
        return render("plan_turn", transcript=entries, instruction=instruction, **context)

    for round_no in range(1, settings.max_rounds + 1):
        record: dict[str, Any] = {"round": round_no}
        for side in ("affirmative", "negative"):
            if side == "affirmative":
                ask = (
                    "propose the algorithm and a numbered step-by-step plan"
                    if round_no == 1
                    else f"answer the judge's follow-up question ({follow_up}) and defend or "
                    "repair your plan"
                )
            else:
                ask = "rebut the affirmative's proposal and propose a better algorithm and plan"
            text = await speak(
                settings,
                f"plan-{side}",
                render("plan_debater", side=side, algorithms=cards),
                turn(f"You are the {side} debater. Round {round_no}: {ask}."),
            )
            record[side] = text
            entries.append({"speaker": f"{side} debater", "round": round_no, "text": text})
        try:
            verdict = await _plan_judge(
                settings,
                algorithms,
                turn(f"You are the judge. Round {round_no} is over: decide or ask a follow-up."),
                allow_follow_up=True,
            )
        except ParseFailure as err:
            record["judge_error"] = {"message": str(err), "raw": err.raw}
            rounds.append(record)
            break
        record["judge"] = verdict
        rounds.append(record)
        if verdict["decision"] == "decide":
            decision = {k: verdict[k] for k in ("winner", "algorithm", "plan")} | {"forced": False}
            break
        follow_up = verdict["follow_up"].strip() or "Which plan is more reliable, and why?"
        entries.append({"speaker": "judge", "round": round_no, "text": f"Follow-up: {follow_up}"})
    final_error = None
    if decision is None:
        try:
            verdict = await _plan_judge(
                settings,
                algorithms,
                turn("You are the judge. The debate is closed: give your final decision."),
                allow_follow_up=False,
            )
            decision = {k: verdict[k] for k in ("winner", "algorithm", "plan")} | {"forced": True}
        except ParseFailure as err:
            final_error = {"message": str(err), "raw": err.raw}
    return {"rounds": rounds, "final_error": final_error, "decision": decision}


def _fallback(algorithm: str, data: pd.DataFrame, knowledge: Knowledge | None) -> Any:
    from silicolab.discovery import statistical

    return getattr(statistical, algorithm)(data, knowledge=knowledge)


async def adebate_coding(
    data: pd.DataFrame,
    *,
    model: LanguageModel,
    knowledge: Knowledge | None = None,
    description: str = "",
    variables: Mapping[str, str] | None = None,
    algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
    max_rounds: int = 2,
    max_repairs: int = 3,
    timeout_s: float = 120.0,
    memory_mb: int = 2048,
    tag_prefix: str = "mac",
    temperature: float = 0.0,
    debater_max_tokens: int | None = 1024,
    judge_max_tokens: int | None = None,
    executor_max_tokens: int | None = 2048,
    replicate: int = 0,
    seed: int | None = None,
    method: str = "mac_debate_coding",
) -> DiscoveryResult:
    """Discover the graph of ``data`` by plan debate + executor (module docstring).

    ``knowledge`` is shown to the debaters, given to the executor in the chosen
    algorithm's own encoding, and used by the statistical fallback; the result lists any
    constraint the final graph breaks in ``params["knowledge_violations"]``.
    """
    started = time.perf_counter()
    columns = check_data(data)
    model = check_model(model)
    algorithms = check_algorithms(list(algorithms))
    if knowledge:
        knowledge.validate(columns)
    if int(max_rounds) < 1 or int(max_repairs) < 0:
        raise InputError("max_rounds must be >= 1 and max_repairs >= 0")
    settings = DebateSettings(
        model=model,
        tag_prefix=tag_prefix,
        module="coding",
        temperature=temperature,
        max_rounds=int(max_rounds),
        debater_max_tokens=debater_max_tokens,
        judge_max_tokens=judge_max_tokens,
        replicate=int(replicate),
        seed=seed,
    )
    before = ledger_snapshot(model)
    notes: list[str] = []
    debate = await plan_debate(
        settings,
        algorithms=algorithms,
        data=data,
        description=description,
        variables=variable_lines(columns, variables),
        knowledge=knowledge,
    )
    decision = debate["decision"]
    if decision is None:
        decision = {
            "winner": None,
            "algorithm": algorithms[0],
            "plan": [f"Run {algorithms[0]} with its default settings and write result.json."],
            "forced": True,
        }
        notes.append(
            f"the plan judge gave no valid verdict; used the first allowed algorithm "
            f"{algorithms[0]!r} with a default plan"
        )
    algorithm = decision["algorithm"]
    execution = await run_executor(
        settings,
        algorithm=algorithm,
        plan=decision["plan"],
        data=data,
        knowledge=knowledge,
        max_repairs=max_repairs,
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        max_tokens=executor_max_tokens,
    )
    graph = execution.pop("graph")
    fallback = graph is None
    if fallback:
        graph = _fallback(algorithm, data, knowledge).graph
        notes.append(
            f"all {len(execution['attempts'])} executor attempts failed; FALLBACK: ran "
            f"{algorithm} through silicolab.discovery.statistical instead"
        )
    notes.append("executor matrix converted to silicolab's convention (row = cause)")
    violations = knowledge_violations(graph, knowledge)
    if violations:
        notes.append(f"the graph breaks {len(violations)} prior-knowledge constraint(s)")
    params = {
        "algorithm": algorithm,
        "algorithms": list(algorithms),
        "winner": decision["winner"],
        "plan_forced": decision["forced"],
        "max_rounds": int(max_rounds),
        "max_repairs": int(max_repairs),
        "attempts": len(execution["attempts"]),
        "fallback": fallback,
        "timeout_s": timeout_s,
        "memory_mb": memory_mb,
        "temperature": temperature,
        "tag_prefix": tag_prefix,
        "replicate": int(replicate),
        "seed": seed,
        "knowledge": knowledge.to_dict() if knowledge else None,
        "knowledge_violations": violations,
    }
    raw = {
        "schema_version": SCHEMA_VERSION,
        "module": "coding",
        "plan_debate": debate | {"decision": decision},
        "execution": execution,
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


debate_coding = sync_twin(adebate_coding, "debate_coding")
