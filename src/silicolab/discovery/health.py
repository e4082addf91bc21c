"""How well the language model behaved in an LLM discovery run, per debated question.

A MAC debate asks the judge to decide each open question once per round and, for questions
still open at the end, once more in a forced final verdict; a single-agent call answers
every question of one source at once. Each such decision is a *step* of the question
(``cause->effect``); a decision whose reply stayed invalid after the repair loop is a parse
failure, with the model's reply kept as a sample. A question whose every step failed ends
``undecided``, and a run with such a question is degraded (see
:class:`silicolab.runs.RunHealth`). A Debate-Coding executor is one more unit: each script
it wrote is a step, and a script that failed (crash, sandbox violation, no ``result.json``,
broken contract) an invalid action; when every script failed the graph is the statistical
fallback's and the run is degraded. An LLM-KBCI pair (``cause->effect``) is a unit whose
steps are its sampled answers; an answer that stayed invalid is a parse failure, and a
pair with no valid answer is undecided (no constraint).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from silicolab.runs import RunHealth, UnitHealth


def _debates(raw: Any) -> Iterator[Mapping[str, Any]]:
    """Every meta-debate or single-agent record inside ``raw`` (hybrids nest them)."""
    if isinstance(raw, Mapping):
        if "source" in raw and "questions" in raw and ("rounds" in raw or "verdicts" in raw):
            yield raw
            return
        for value in raw.values():
            yield from _debates(value)
    elif isinstance(raw, list | tuple):
        for value in raw:
            yield from _debates(value)


def _question_health(debate: Mapping[str, Any], question: Mapping[str, Any]) -> UnitHealth:
    unit = UnitHealth(unit=f"{debate['source']}->{question['effect']}")
    number = question.get("number")
    if "rounds" not in debate:  # single agent: one call answers every question
        unit.steps = 1
        error = debate.get("error")
        if error:
            unit.note_failure("parse_failures", error.get("raw") or error.get("message"))
        return unit
    for record in debate.get("rounds") or ():
        if number not in record.get("open", ()):
            continue
        unit.steps += 1
        error = record.get("judge_error")
        if error:
            unit.note_failure("parse_failures", error.get("raw") or error.get("message"))
    final = debate.get("final") or {}
    if number in final.get("forced", ()):
        unit.steps += 1
        if "error" in final:
            unit.note_failure("parse_failures", final.get("raw") or final.get("error"))
    return unit


def _codings(raw: Any) -> Iterator[Mapping[str, Any]]:
    """Every Debate-Coding record inside ``raw`` (the hybrids nest it under ``coding``)."""
    if isinstance(raw, Mapping):
        if raw.get("module") == "coding" and isinstance(raw.get("execution"), Mapping):
            yield raw
            return
        for value in raw.values():
            yield from _codings(value)


def _executor_health(coding: Mapping[str, Any]) -> UnitHealth:
    unit = UnitHealth(unit="coding executor")
    for attempt in coding["execution"].get("attempts") or ():
        unit.steps += 1
        if attempt.get("problem"):
            unit.note_failure("invalid_actions", attempt["problem"])
    return unit


def _kbci_pairs(raw: Any) -> Iterator[Mapping[str, Any]]:
    """Every asked pair of an LLM-KBCI record inside ``raw``."""
    if isinstance(raw, Mapping) and raw.get("module") == "llm_kbci":
        yield from raw.get("pairs") or ()


def _pair_health(pair: Mapping[str, Any]) -> UnitHealth:
    """One LLM-KBCI pair: each sampled answer is a step, an invalid one a parse failure."""
    unit = UnitHealth(unit=f"{pair['cause']}->{pair['effect']}")
    unit.steps = len(pair.get("answers") or ())
    for failure in pair.get("failures") or ():
        unit.note_failure("parse_failures", failure.get("raw") or failure.get("message"))
    return unit


def discovery_health(raw: Any) -> RunHealth | None:
    """The per-question (and per-executor) health of an LLM discovery result's ``raw``
    record, or ``None`` when it holds neither (a statistical method)."""
    units = [
        _question_health(debate, question)
        for debate in _debates(raw)
        for question in debate.get("questions") or ()
    ]
    units += [_executor_health(coding) for coding in _codings(raw)]
    units += [_pair_health(pair) for pair in _kbci_pairs(raw)]
    return RunHealth.of(units) if units else None


__all__ = ["discovery_health"]
