"""Post-simulation surveys: ask entities typed questions and parse the answers, with NA.

Each :class:`SurveyQuestion` goes to one addressee (an agent or the coordinator). Answering
takes one or two acts:

1. the addressee answers in free text (``raw``), told to lead with the answer itself and to
   say ``NA`` when the question has no sensible answer for it;
2. when ``raw`` does not already state a value unambiguously, the parser (the addressee
   itself unless ``parser=`` is given) maps ``raw`` to a value through a typed
   :class:`~silicolab.sim.entity.ActionSpec` (``"choice"`` among the levels plus ``NA``, or
   ``"float"``), so the structured layer does the parsing.

Values: ``continuous`` a float, ``count`` a non-negative int, ``ordinal`` the 0-based index of
the level, ``binary`` 0/1 (the index in ``levels``, default ``("no", "yes")``), ``nominal``
the level itself (dummy coding happens downstream). ``None`` is NA.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from silicolab.core.errors import InputError, ParseFailure
from silicolab.core.sync import sync_twin
from silicolab.scm.variables import LEVELLED_TYPES, VARIABLE_TYPES, VariableType
from silicolab.sim.entity import ActionSpec, Entity

__all__ = [
    "NA",
    "VARIABLE_TYPES",
    "SurveyAnswer",
    "SurveyQuestion",
    "aask_survey",
    "ask_survey",
    "parse_number",
]

NA = "NA"
Value = float | int | str | None

_NUMBER = re.compile(
    r"(?<![\w.])[-+−]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
)
_NA_START = re.compile(
    r"^\W*(?:n/?a|not applicable|no answer|unknown|i (?:do not|don't) know|"
    r"(?:cannot|can't|can not) (?:say|answer|tell))\b",
    re.IGNORECASE,
)
_BINARY_WORDS = {"yes": 1, "true": 1, "1": 1, "no": 0, "false": 0, "0": 0}


@dataclass(frozen=True)
class SurveyQuestion:
    """One survey question measuring ``variable``, put to the entity named ``addressee``."""

    variable: str
    question: str
    type: VariableType
    levels: tuple[str, ...] = ()
    addressee: str = "coordinator"

    def __post_init__(self) -> None:
        if self.type not in VARIABLE_TYPES:
            raise InputError(
                f"SurveyQuestion.type must be one of {VARIABLE_TYPES}, got {self.type!r}"
            )
        levels = tuple(str(level) for level in self.levels)
        if self.type == "binary" and not levels:
            levels = ("no", "yes")
        if self.type in LEVELLED_TYPES and len(levels) < 2:
            raise InputError(f"{self.type} question {self.variable!r} needs at least two levels")
        if self.type == "binary" and len(levels) != 2:
            raise InputError(f"binary question {self.variable!r} needs exactly two levels")
        if len({level.casefold() for level in levels}) != len(levels) or NA in levels:
            raise InputError(f"levels must be distinct and must not include {NA!r}: {levels}")
        object.__setattr__(self, "levels", levels)


@dataclass(frozen=True)
class SurveyAnswer:
    """One parsed answer: ``raw`` is what the addressee said, ``value`` is ``None`` for NA,
    ``explanation`` says how the value was obtained. ``parse_failed`` marks an NA that is
    not the respondent's: its answer could not be read even by the parser (the parser's
    reply stayed invalid after the repair loop; the explanation names who and shows it)."""

    variable: str
    addressee: str
    question: str
    raw: str
    value: Value
    explanation: str
    parse_failed: bool = False

    @property
    def is_na(self) -> bool:
        """Whether the answer is NA."""
        return self.value is None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return asdict(self)


def parse_number(text: str) -> float | None:
    """The single number stated in ``text`` (``"$1,200.50"`` -> 1200.5), or ``None`` when
    ``text`` states no number or several different ones."""
    found = set()
    for match in _NUMBER.finditer(text):
        token = match.group().replace(",", "").replace("−", "-")
        if not any(ch.isdigit() for ch in token):
            continue
        try:
            found.add(float(token))
        except ValueError:
            continue
    if len(found) != 1:
        return None
    value = found.pop()
    return value if math.isfinite(value) else None


def _lead(raw: str) -> str:
    """The answer's leading phrase: text before the first sentence or clause break."""
    head = re.split(r"[.;:!?](?:\s|$)|,\s|\n|\s[-–—]\s|\bbecause\b", raw.strip(), maxsplit=1)[0]
    return head.strip().strip("\"'*").strip()


def _level_index(question: SurveyQuestion, text: str) -> int | None:
    folded = text.casefold()
    for i, level in enumerate(question.levels):
        if folded == level.casefold():
            return i
    if question.type == "binary" and folded in _BINARY_WORDS:
        return _BINARY_WORDS[folded]
    return None


def _level_value(question: SurveyQuestion, index: int) -> Value:
    return question.levels[index] if question.type == "nominal" else index


def _typed_number(question: SurveyQuestion, number: float) -> tuple[Value, str]:
    if question.type == "continuous":
        return number, ""
    if number < 0:
        return None, f"NA: a count cannot be negative ({number:g})"
    rounded = round(number)
    note = f" (rounded from {number:g})" if rounded != number else ""
    return int(rounded), note


def _direct(question: SurveyQuestion, raw: str) -> tuple[Value, str] | None:
    """Parse ``raw`` without any act when it states its value unambiguously."""
    if not raw.strip() or _NA_START.match(raw):
        return None, "NA: the respondent said the question has no answer"
    if question.type in ("continuous", "count"):
        number = parse_number(_lead(raw))
        if number is None and len(raw) <= 40:
            number = parse_number(raw)
        if number is None:
            return None
        value, note = _typed_number(question, number)
        return value, note.removeprefix(" ") or f"the number stated in the answer{note}"
    for text in (raw.strip().strip("\"'*. "), _lead(raw)):
        index = _level_index(question, text)
        if index is not None:
            level = question.levels[index]
            return _level_value(question, index), f"the answer begins with the level {level!r}"
    return None


def _answer_prompt(question: SurveyQuestion, context: str) -> str:
    if question.type in ("continuous", "count"):
        shape = "a whole number" if question.type == "count" else "a number"
    else:
        shape = "one of: " + ", ".join(repr(level) for level in question.levels)
    return (
        f"{context.strip()}\n\nSurvey question: {question.question}\n"
        f"Start your reply with the answer itself ({shape}), then give your reason in one "
        f"sentence. If the question has no sensible answer in your situation (for example it "
        f"asks about something that did not happen), start your reply with {NA} instead."
    )


def _parse_prompt(question: SurveyQuestion, raw: str, *, numeric: bool) -> str:
    ask = (
        "What number does this answer state? Reply with the number only."
        if numeric
        else f"Which option matches this answer? Choose {NA} if none does."
    )
    return f"Survey question: {question.question}\nThe answer given was:\n{raw.strip()}\n\n{ask}"


def _answer_spec(question: SurveyQuestion, context: str) -> ActionSpec:
    return ActionSpec(_answer_prompt(question, context), kind="free", tag="survey")


def _parse_spec(question: SurveyQuestion, raw: str) -> ActionSpec:
    """The typed act that maps an ambiguous ``raw`` answer to a value."""
    if question.type in ("continuous", "count"):
        return ActionSpec(_parse_prompt(question, raw, numeric=True), kind="float", tag="parser")
    options = (*question.levels, NA)
    return ActionSpec(
        _parse_prompt(question, raw, numeric=False), kind="choice", options=options, tag="parser"
    )


def _answer(
    question: SurveyQuestion, raw: str, value: Value, explanation: str, failed: bool = False
) -> SurveyAnswer:
    return SurveyAnswer(
        question.variable, question.addressee, question.question, raw, value, explanation, failed
    )


def _parsed(
    question: SurveyQuestion, raw: str, parser: str, reply: str | ParseFailure
) -> SurveyAnswer:
    """The answer once ``parser`` replied ``reply`` to :func:`_parse_spec` (or failed to)."""
    if isinstance(reply, ParseFailure):
        return _answer(question, raw, None, f"NA: parse failure: {reply}", failed=True)
    reply = reply.strip()
    if question.type in ("continuous", "count"):
        try:
            number = float(reply.replace(",", ""))
        except ValueError:
            return _answer(question, raw, None, f"NA: the parser's reply {reply!r} is not a number")
        if not math.isfinite(number):
            return _answer(
                question, raw, None, f"NA: the parser's reply {reply!r} is not a finite number"
            )
        value, note = _typed_number(question, number)
        if value is None:
            return _answer(question, raw, None, note)
        return _answer(
            question, raw, value, f"{parser} read the number {number:g} from the answer{note}"
        )
    options = (*question.levels, NA)
    if reply not in options:
        raise InputError(f"{parser} answered {reply!r}, not one of {options}")
    if reply == NA:
        return _answer(question, raw, None, f"NA: {parser} found no level matching the answer")
    index = question.levels.index(reply)
    return _answer(
        question, raw, _level_value(question, index), f"{parser} mapped the answer to {reply!r}"
    )


async def _ask_in_turn(
    questions: Sequence[SurveyQuestion], respondent: Entity, parser: Entity, context: str
) -> list[SurveyAnswer]:
    """One question after another: each answer (and its parse) before the next question."""
    answers = []
    for question in questions:
        raw = (await respondent.aact(_answer_spec(question, context))).strip()
        direct = _direct(question, raw)
        if direct is not None:
            answers.append(_answer(question, raw, *direct))
            continue
        try:
            reply: str | ParseFailure = await parser.aact(_parse_spec(question, raw))
        except ParseFailure as err:
            reply = err
        answers.append(_parsed(question, raw, parser.name, reply))
    return answers


async def _ask_at_once(
    questions: Sequence[SurveyQuestion], respondent: Entity, parser: Entity, context: str
) -> list[SurveyAnswer]:
    """Every question from the respondent's state before the survey, at once
    (:meth:`Entity.aact_all`); then, at once, the parse acts of the answers that need one."""
    specs = [_answer_spec(q, context) for q in questions]
    raws = [str(raw).strip() for raw in await respondent.aact_all(specs)]
    direct = [_direct(q, raw) for q, raw in zip(questions, raws, strict=True)]
    pending = [i for i, found in enumerate(direct) if found is None]
    replies = await parser.aact_all(
        [_parse_spec(questions[i], raws[i]) for i in pending], return_exceptions=True
    )
    for reply in replies:
        if isinstance(reply, BaseException) and not isinstance(reply, ParseFailure):
            raise reply
    parsed = dict(zip(pending, replies, strict=True))
    return [
        _answer(q, raw, *found) if found is not None else _parsed(q, raw, parser.name, parsed[i])
        for i, (q, raw, found) in enumerate(zip(questions, raws, direct, strict=True))
    ]


async def aask_survey(
    entities: Mapping[str, Entity],
    questions: Sequence[SurveyQuestion],
    *,
    context: str,
    parser: Entity | None = None,
    concurrent: bool = False,
) -> list[SurveyAnswer]:
    """Ask every question of its addressee in ``entities``; answers in question order.

    ``context`` (for example the scenario and the transcript) starts every question's prompt.
    Different addressees answer concurrently. By default each addressee answers its
    questions one after another, so a stateful agent sees them in order (an agent that
    remembers its acts may recall its earlier answers). ``concurrent=True`` asks an
    addressee all its questions at once, each from its state before the survey (as if it
    were the first question), then the parse acts of the answers that need one, at once:
    the values do not depend on which call finishes first, and a
    :class:`~silicolab.sim.agents.GenerativeAgent` numbers its acts (hence its sample
    indices and cache keys) in question order, answers first, then parses. It is the
    faster choice for respondents whose answers should not see each other; entities that
    cannot act from one snapshot (:meth:`Entity.aact_all`) still answer in turn.
    ``parser`` maps ambiguous answers to values (default: the addressee itself).
    """
    missing = sorted({q.addressee for q in questions} - set(entities))
    if missing:
        raise InputError(f"no entity for addressee(s) {missing}; have {sorted(entities)}")
    ask = _ask_at_once if concurrent else _ask_in_turn
    positions: dict[str, list[int]] = {}
    for i, question in enumerate(questions):
        positions.setdefault(question.addressee, []).append(i)
    answered = await asyncio.gather(
        *(
            ask([questions[i] for i in at], entities[name], parser or entities[name], context)
            for name, at in positions.items()
        )
    )
    answers: dict[int, SurveyAnswer] = {}
    for at, theirs in zip(positions.values(), answered, strict=True):
        answers.update(zip(at, theirs, strict=True))
    return [answers[i] for i in range(len(questions))]


ask_survey = sync_twin(aask_survey)
