"""How well the language model behaved in an LLM discovery run, per debated question.

A MAC debate asks the judge to decide each open question once per round and, for questions
still open at the end, once more in a forced final verdict; a single-agent call answers
every question of one source at once. Each such decision is a *step* of the question
(``cause->effect``); a decision whose reply stayed invalid after the repair loop is a parse
failure, with the model's reply kept as a sample. A question whose every step failed ends
``undecided``, and a run with such a question is degraded (see
:class:`silicolab.runs.RunHealth`).
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


def discovery_health(raw: Any) -> RunHealth | None:
    """The per-question health of an LLM discovery result's ``raw`` record, or ``None``
    when it holds no debate (a statistical method)."""
    units = [
        _question_health(debate, question)
        for debate in _debates(raw)
        for question in debate.get("questions") or ()
    ]
    return RunHealth.of(units) if units else None


__all__ = ["discovery_health"]
