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
silently, and never scored as the method: :func:`fallback_of` tells callers (the bench,
``silicolab discover``) that the graph is the fallback's. The same happens, with its own
note, when the plan judge never gives a valid verdict (the first allowed algorithm is used).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from silicolab.core.errors import InputError, ParseFailure
from silicolab.core.records import SCHEMA_VERSION
from silicolab.core.sync import sync_twin
from silicolab.discovery.knowledge import Knowledge
from silicolab.discovery.mac.algorithms import algorithm_info, check_algorithms
from silicolab.discovery.mac.common import (
    Meter,
    check_data,
    check_model,
    knowledge_lines,
    knowledge_violations,
    variable_lines,
)
from silicolab.discovery.mac.executor import ExecutorLimits, run_executor
from silicolab.discovery.mac.panel import DEBATER_INSTRUCTIONS, SIDES, DebateSettings, Panel
from silicolab.discovery.mac.schemas import plan_verdict_schema
from silicolab.discovery.mac.templates import render
from silicolab.discovery.result import GraphResult
from silicolab.llm import LanguageModel

DEFAULT_ALGORITHMS = ("pc", "exact", "direct_lingam", "ges", "fci", "cdnod")
HEAD_ROWS = 5


async def _plan_judge(
    settings: DebateSettings, algorithms: Sequence[str], turn: str, *, allow_follow_up: bool
) -> dict[str, Any]:
    return await settings.structured(
        "plan-judge",
        render("plan_judge", allow_follow_up=allow_follow_up, names=list(algorithms)),
        turn,
        plan_verdict_schema(algorithms, allow_follow_up=allow_follow_up),
        max_tokens=settings.judge_max_tokens,
    )


def _plan_asks(round_no: int, follow_up: str) -> dict[str, str]:
    """What each debater is asked in round ``round_no``: the affirmative proposes (later:
    answers the judge's ``follow_up``), the negative rebuts."""
    return {
        "affirmative": (
            "propose the algorithm and a numbered step-by-step plan"
            if round_no == 1
            else f"answer the judge's follow-up question ({follow_up}) and defend or "
            "repair your plan"
        ),
        "negative": "rebut the affirmative's proposal and propose a better algorithm and plan",
    }


def _decision(verdict: Mapping[str, Any], *, forced: bool) -> dict[str, Any]:
    return {k: verdict[k] for k in ("winner", "algorithm", "plan")} | {"forced": forced}


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
    systems = {
        side: render("plan_debater", side=side, algorithms=cards, paper=settings.paper_debaters)
        for side in SIDES
    }
    context = {
        "description": description,
        "variables": variables,
        "n_rows": len(data),
        "head": data.head(HEAD_ROWS).to_string(),
        "constraints": knowledge_lines(knowledge),
    }
    panel = Panel(settings, "plan_turn", context, systems, role_prefix="plan-")
    follow_up = ""
    decision: dict[str, Any] | None = None
    for round_no in range(1, settings.max_rounds + 1):
        record: dict[str, Any] = {"round": round_no}
        await panel.speeches(round_no, record, _plan_asks(round_no, follow_up))
        judge_turn = panel.turn(
            f"You are the judge. Round {round_no} is over: decide or ask a follow-up."
        )
        verdict = await panel.close(
            record, _plan_judge(settings, algorithms, judge_turn, allow_follow_up=True)
        )
        if verdict is None:
            break
        if verdict["decision"] == "decide":
            decision = _decision(verdict, forced=False)
            break
        follow_up = verdict["follow_up"].strip() or "Which plan is more reliable, and why?"
        panel.say("judge", round_no, f"Follow-up: {follow_up}")
    final_error = None
    if decision is None:
        try:
            verdict = await _plan_judge(
                settings,
                algorithms,
                panel.turn("You are the judge. The debate is closed: give your final decision."),
                allow_follow_up=False,
            )
            decision = _decision(verdict, forced=True)
        except ParseFailure as err:
            final_error = {"message": str(err), "raw": err.raw}
    return {"rounds": panel.rounds, "final_error": final_error, "decision": decision}


def _default_decision(algorithms: Sequence[str], notes: list[str]) -> dict[str, Any]:
    """The decision when the plan judge never gave a valid verdict: the first allowed
    algorithm with a default plan (said in ``notes``)."""
    notes.append(
        f"the plan judge gave no valid verdict; used the first allowed algorithm "
        f"{algorithms[0]!r} with a default plan"
    )
    return {
        "winner": None,
        "algorithm": algorithms[0],
        "plan": [f"Run {algorithms[0]} with its default settings and write result.json."],
        "forced": True,
    }


def _fallback(algorithm: str, data: pd.DataFrame, knowledge: Knowledge | None) -> Any:
    from silicolab.discovery import statistical

    return getattr(statistical, algorithm)(data, knowledge=knowledge)


def fallback_of(result: GraphResult) -> tuple[str, bool] | None:
    """``(algorithm, graph_is_fallback)`` when a Debate-Coding phase of ``result`` failed
    every executor attempt and ran the statistical ``algorithm`` instead, else ``None``.

    ``graph_is_fallback`` says whether ``result.graph`` is that algorithm's graph (Debate-
    Coding itself; Debating-Coding, whose graph is its coding phase's) or the fallback only
    gave the evidence of a later debate (Coding-Debating). Either way the coding agent
    failed, so callers mark the run degraded; only the first may not be scored as the
    method."""
    params = result.params or {}
    if params.get("fallback"):
        return str(params["algorithm"]), True
    coding = params.get("coding")
    if isinstance(coding, Mapping) and coding.get("fallback"):
        raw = result.raw if isinstance(result.raw, Mapping) else {}
        last_phase = list(raw.get("order") or ())[-1:]  # a hybrid's graph is its last phase's
        return str(coding["algorithm"]), last_phase == ["coding"]
    return None


def _graph_of(
    execution: dict[str, Any],
    algorithm: str,
    data: pd.DataFrame,
    knowledge: Knowledge | None,
    notes: list[str],
) -> tuple[Any, bool]:
    """The executor's graph (taken out of ``execution``), or the statistical fallback's
    when every attempt failed; and whether it fell back (``notes`` say which)."""
    graph = execution.pop("graph")
    fallback = graph is None
    if fallback:
        graph = _fallback(algorithm, data, knowledge).graph
        notes.append(
            f"all {len(execution['attempts'])} executor attempts failed; FALLBACK: ran "
            f"{algorithm} through silicolab.discovery.statistical instead"
        )
    notes.append("executor matrix converted to silicolab's convention (row = cause)")
    return graph, fallback


def _coding_params(
    settings: DebateSettings,
    limits: ExecutorLimits,
    algorithms: Sequence[str],
    decision: Mapping[str, Any],
    execution: Mapping[str, Any],
    fallback: bool,
) -> dict[str, Any]:
    """The effective parameters of a Debate-Coding run and what the run chose."""
    return {
        "algorithm": decision["algorithm"],
        "algorithms": list(algorithms),
        "winner": decision["winner"],
        "plan_forced": decision["forced"],
        "max_rounds": settings.max_rounds,
        "max_repairs": limits.max_repairs,
        "attempts": len(execution["attempts"]),
        "fallback": fallback,
        "timeout_s": limits.timeout_s,
        "memory_mb": limits.memory_mb,
        "temperature": settings.temperature,
        "fidelity": settings.fidelity,
        "debater_instructions": DEBATER_INSTRUCTIONS[settings.fidelity],
        "tag_prefix": settings.tag_prefix,
        "replicate": settings.replicate,
        "seed": settings.seed,
    }


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
    fidelity: str = "faithful",
) -> GraphResult:
    """Discover the graph of ``data`` by plan debate + executor (module docstring).

    ``knowledge`` is shown to the debaters, given to the executor in the chosen
    algorithm's own encoding, and used by the statistical fallback; the result lists any
    constraint the final graph breaks in ``params["knowledge_violations"]``. ``fidelity``:
    the plan debaters' instructions, as in :func:`~.debate.ameta_debate`."""
    columns = check_data(data)
    model = check_model(model)
    algorithms = check_algorithms(list(algorithms))
    if knowledge:
        knowledge.validate(columns)
    if int(max_rounds) < 1 or int(max_repairs) < 0:
        raise InputError("max_rounds must be >= 1 and max_repairs >= 0")
    settings = DebateSettings(
        model=model, tag_prefix=tag_prefix, module="coding", temperature=temperature,
        max_rounds=int(max_rounds), replicate=int(replicate), seed=seed, fidelity=fidelity,
        debater_max_tokens=debater_max_tokens, judge_max_tokens=judge_max_tokens,
    )  # fmt: skip
    limits = ExecutorLimits(int(max_repairs), timeout_s, memory_mb, executor_max_tokens)
    meter = Meter(model, tag_prefix)
    notes: list[str] = []
    debate = await plan_debate(
        settings,
        algorithms=algorithms,
        data=data,
        description=description,
        variables=variable_lines(columns, variables),
        knowledge=knowledge,
    )
    decision = debate["decision"] or _default_decision(algorithms, notes)
    algorithm = decision["algorithm"]
    execution = await run_executor(
        settings,
        algorithm=algorithm,
        plan=decision["plan"],
        data=data,
        knowledge=knowledge,
        limits=limits,
    )
    graph, fallback = _graph_of(execution, algorithm, data, knowledge, notes)
    violations = knowledge_violations(graph, knowledge)
    if violations:
        notes.append(f"the graph breaks {len(violations)} prior-knowledge constraint(s)")
    params = _coding_params(settings, limits, algorithms, decision, execution, fallback)
    params |= {
        "knowledge": knowledge.to_dict() if knowledge else None,
        "knowledge_violations": violations,
    }
    plan = debate | {"decision": decision}
    raw = {"schema_version": SCHEMA_VERSION, "module": "coding", "plan_debate": plan}
    return meter.result(
        method, graph, raw=raw | {"execution": execution}, params=params, notes=notes
    )


debate_coding = sync_twin(adebate_coding)
