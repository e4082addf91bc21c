"""The CausaLab agent record (DSL, spec §5): extraction, validation and the typed record.

Each agent turn is one JSON object with the keys ``memory``, ``thought``, ``past_data``,
``hypothesis``, ``experiment`` and one action form (``action``/``arg1``/``arg2``, or
``chosen_dialog_option_int``, or ``value``). :func:`extract_json` finds that object in a raw
LLM reply (§5.2); :func:`parse_record` validates it (§5.4) and returns precise error
sentences the model can act on, which :func:`repair_message` turns into the re-prompt.
State carry-over between steps lives in :mod:`silicolab.envs.causalab.dsl._state`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from silicolab.core.errors import InputError
from silicolab.envs.causalab.dsl._equation import (
    evaluate,
    normalize_name,
    parse_equation,
)
from silicolab.envs.causalab.dsl._validate import (
    ACTION_KEYS,
    DSL_KEYS,
    check_action,
    check_coefficients,
    check_edges,
    check_experiment,
    check_past_data,
    check_terms,
    zero_coefficients,
)
from silicolab.envs.causalab.suite import TARGET
from silicolab.scm import CausalGraph


@dataclass(frozen=True)
class Hypothesis:
    """The agent's causal hypothesis: directed edges plus the frequency equation.

    ``edges`` are ``(cause, effect)`` pairs with frequency aliases normalised;
    ``freq_equation`` is ``"resonanceFreq = <expr>"`` (``^`` already rewritten to ``**``);
    ``coefficients`` maps coefficient names to numbers, or None where unknown.
    """

    edges: tuple[tuple[str, str], ...] = ()
    freq_equation: str = ""
    coefficients: dict[str, float | None] = field(default_factory=dict)

    EMPTY: ClassVar[Hypothesis]

    def graph(self) -> CausalGraph | None:
        """The edges as a :class:`CausalGraph` (TARGET always a node), or None if cyclic."""
        nodes = dict.fromkeys([TARGET, *(n for e in self.edges for n in e)])
        try:
            return CausalGraph(list(nodes), self.edges)
        except InputError:
            return None

    def predict(self, props: Mapping[str, float]) -> float | None:
        """The frequency the equation gives for ``props`` (AST-evaluated, never ``eval``).

        None when the equation is empty or malformed, a needed coefficient is null or
        missing, or a property it uses is absent from ``props``.
        """
        return evaluate(self.freq_equation, self.coefficients, props)

    def is_empty(self) -> bool:
        """True when there are no edges, no equation and no coefficients."""
        return not self.edges and not self.freq_equation.strip() and not self.coefficients

    def parents(self) -> tuple[str, ...]:
        """The hypothesised direct parents of TARGET, in edge order."""
        return tuple(a for a, b in self.edges if b == TARGET)

    def to_dict(self) -> dict[str, Any]:
        """The DSL JSON form (``{"edges": [{"from", "to"}], "freq_equation", ...}``)."""
        return {
            "edges": [{"from": a, "to": b} for a, b in self.edges],
            "freq_equation": self.freq_equation,
            "coefficients": dict(self.coefficients),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Hypothesis:
        """A lenient, *unvalidated* reading of a logged hypothesis (for scoring raw logs).

        Malformed edges are skipped, names are alias-normalised, non-numeric coefficient
        values become None. Use :func:`parse_record` to validate agent output.
        """
        if not isinstance(data, Mapping):
            return cls.EMPTY
        edges: list[tuple[str, str]] = []
        raw_edges = data.get("edges")
        for edge in raw_edges if isinstance(raw_edges, list) else []:
            pair = _raw_pair(edge)
            if pair is not None and pair not in edges:
                edges.append(pair)
        equation = data.get("freq_equation")
        equation = equation.replace("^", "**").strip() if isinstance(equation, str) else ""
        raw = data.get("coefficients")
        coefficients = {
            str(k): _number_or_none(v) for k, v in (raw.items() if isinstance(raw, Mapping) else ())
        }
        return cls(tuple(edges), equation, coefficients)


Hypothesis.EMPTY = Hypothesis()


def _raw_pair(edge: Any) -> tuple[str, str] | None:
    if isinstance(edge, Mapping):
        a, b = edge.get("from"), edge.get("to")
    elif isinstance(edge, list | tuple) and len(edge) == 2:
        a, b = edge
    else:
        return None
    if not isinstance(a, str) or not isinstance(b, str):
        return None
    return normalize_name(a.strip()), normalize_name(b.strip())


def _number_or_none(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class DSLRecord:
    """One validated agent step. ``action`` holds only the action fields."""

    memory: str
    thought: str
    past_data: list[dict]
    hypothesis: Hypothesis
    experiment: dict
    action: dict


@dataclass(frozen=True)
class ParseOutcome:
    """Result of :func:`parse_record`.

    ``record`` is None whenever ``errors`` is non-empty. ``raw_json`` is the extracted
    object (None if no JSON was found). ``action`` holds the action fields when they are
    valid on their own, so a controller can still execute them after the repair budget is
    spent (spec §5.4 rule 7) even if the hypothesis stayed invalid.
    """

    record: DSLRecord | None
    errors: list[str]
    warnings: list[str]
    raw_json: dict | None
    action: dict | None = None

    @property
    def ok(self) -> bool:
        """True when the record validated."""
        return self.record is not None


# -- extraction (§5.2) -------------------------------------------------------------------

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE_JSON = re.compile(r"```[ \t]*json[^\n]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
_FENCE_OPEN = re.compile(r"```[ \t]*json[^\n]*\n(.*)\Z", re.DOTALL | re.IGNORECASE)
_FENCE_ANY = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)


def _strip_think(text: str) -> str:
    text = _THINK.sub("", text)
    close = text.lower().rfind("</think>")
    return text[close + len("</think>") :] if close >= 0 else text


def _last_object(text: str) -> dict | None:
    """The last top-level ``{...}`` substring that decodes to a JSON object."""
    decoder = json.JSONDecoder()
    found: dict | None = None
    i = text.find("{")
    while i >= 0:
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        if isinstance(value, dict):
            found = value
        i = text.find("{", end)
    return found


def extract_json_with_error(text: str) -> tuple[dict | None, str | None]:
    """Like :func:`extract_json`, but also return why extraction failed (or None)."""
    text = _strip_think(text or "")
    candidates: list[str] = []
    fenced = _FENCE_JSON.search(text)
    if fenced:
        candidates.append(fenced.group(1))
    else:
        partial = _FENCE_OPEN.search(text)
        if partial:
            candidates.append(partial.group(1))
        plain = _FENCE_ANY.search(text)
        if plain:
            candidates.append(plain.group(1))
    candidates.append(text)
    first_error: str | None = None
    for candidate in candidates:
        try:
            value = json.loads(candidate.strip())
        except json.JSONDecodeError as exc:
            first_error = first_error or f"{exc.msg} at line {exc.lineno} column {exc.colno}"
            continue
        if isinstance(value, dict):
            return value, None
        first_error = first_error or f"the JSON value is a {type(value).__name__}, not an object"
    found = _last_object(candidates[0]) if len(candidates) > 1 else None
    found = found if found is not None else _last_object(text)
    if found is not None:
        return found, None
    if "{" not in text:
        return None, "no JSON object was found in your reply"
    return None, f"the JSON object in your reply could not be decoded ({first_error})"


def extract_json(text: str) -> dict | None:
    """The agent's JSON object from a raw reply, by the §5.2 rules, or None.

    ``<think>…</think>`` is removed; then the first fenced block labelled json is tried,
    else an unterminated json fence, else the whole text, else the last balanced
    ``{...}`` that decodes to an object.
    """
    return extract_json_with_error(text)[0]


# -- validation (§5.4) ---------------------------------------------------------------------


def _hypothesis(
    data: Any, properties: Sequence[str], family: str, errors: list[str], warnings: list[str]
) -> Hypothesis | None:
    if not isinstance(data, Mapping):
        errors.append(
            "hypothesis must be an object with keys edges, freq_equation and coefficients; "
            f"got {type(data).__name__}"
        )
        return None
    for key in data:
        if key not in ("edges", "freq_equation", "coefficients"):
            warnings.append(f"hypothesis key {key!r} is not part of the schema and was ignored")
    edges = check_edges(data.get("edges", []), properties, errors)
    text = data.get("freq_equation", "")
    if text is None:
        text = ""
    if not isinstance(text, str):
        errors.append(
            f"freq_equation must be a string like '{TARGET} = base + c_X*X'; got "
            f"{type(text).__name__}"
        )
        return None
    parents = {a for a, b in edges or () if b == TARGET}
    equation = None
    if text.strip():
        equation, eq_errors = parse_equation(text, properties, family)
        errors.extend(eq_errors)
    raw_coefficients = data.get("coefficients", {})
    if not text.strip():
        if parents:
            warnings.append(
                f"freq_equation is empty although the edges give {TARGET} the parents "
                f"{', '.join(sorted(parents))}; write the equation before using the reactor"
            )
    elif equation is not None:
        zeros = zero_coefficients(raw_coefficients)
        check_terms(equation, parents, zeros, properties, errors, warnings)
    used = set(equation.coefficients) if equation is not None else None
    coefficients = check_coefficients(raw_coefficients, used, properties, errors, warnings, family)
    if edges is None or coefficients is None or (text.strip() and equation is None):
        return None
    canonical = ""
    if text.strip():
        canonical = f"{TARGET} = {equation.expr}" if equation is not None else ""
    return Hypothesis(tuple(edges), canonical, coefficients)


def _text_field(data: Mapping[str, Any], key: str, warnings: list[str]) -> str:
    value = data.get(key, "")
    if isinstance(value, str):
        return value
    warnings.append(f"{key} should be a string; it was converted from {type(value).__name__}")
    return json.dumps(value, ensure_ascii=False)


def parse_record(text: str, *, variables: Sequence[str], family: str = "linear") -> ParseOutcome:
    """Extract and validate one agent reply against the declared ``variables``.

    ``variables`` are the episode's declared properties (TARGET may be included or not);
    ``family`` is the episode's declared ``"linear"`` or ``"quadratic"`` family: every
    equation term must lie in it (a square in a linear episode is refused, naming the term),
    and the quadratic family also allows ``c_X_1``/``c_X_2``. Zero coefficients are
    accepted with a warning, as upstream accepts and scores them.
    Errors are full sentences naming the offending item and the fix; warnings (key order,
    coerced numeric strings, malformed past_data entries) do not block the record.
    """
    if family not in ("linear", "quadratic"):
        raise InputError(f"family must be 'linear' or 'quadratic'; got {family!r}")
    names = dict.fromkeys(str(v) for v in variables)
    properties = [v for v in names if normalize_name(v) != TARGET]
    data, why = extract_json_with_error(text)
    if data is None:
        return ParseOutcome(
            None,
            [
                f"{why}; reply with exactly one JSON object with the keys "
                f"{', '.join(DSL_KEYS)} followed by the action fields"
            ],
            [],
            None,
        )
    errors: list[str] = []
    warnings: list[str] = []
    missing = [k for k in DSL_KEYS if k not in data]
    if missing:
        errors.append(
            f"the JSON object is missing the key(s) {', '.join(missing)}; every reply needs "
            f"{', '.join(DSL_KEYS)} and one action form"
        )
    rank = {k: i for i, k in enumerate([*DSL_KEYS, *(k for f in ACTION_KEYS for k in f)])}
    present = [k for k in data if k in rank]
    if present != sorted(present, key=rank.__getitem__):
        warnings.append(
            f"keys should come in the order {', '.join(DSL_KEYS)}, then the action fields"
        )
    known = set(rank)
    for key in data:
        if key not in known:
            warnings.append(f"top-level key {key!r} is not part of the record and was ignored")
    action = check_action(data, properties, errors, warnings)
    past_data = check_past_data(data.get("past_data", []), errors, warnings)
    experiment = check_experiment(data.get("experiment", {}), properties, errors, warnings)
    hypothesis = (
        _hypothesis(data["hypothesis"], properties, family, errors, warnings)
        if "hypothesis" in data
        else None
    )
    memory = _text_field(data, "memory", warnings)
    thought = _text_field(data, "thought", warnings)
    if errors or hypothesis is None or past_data is None or experiment is None or action is None:
        return ParseOutcome(None, errors, warnings, data, action)
    record = DSLRecord(memory, thought, past_data, hypothesis, experiment, action)
    return ParseOutcome(record, [], warnings, data, action)
