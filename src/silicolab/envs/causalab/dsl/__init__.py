"""The CausaLab agent record (DSL, spec §5): what the lab accepts from a scientist.

Each agent turn is one JSON object; :func:`extract_json` finds it in a raw LLM reply,
:func:`parse_record` validates it into a :class:`DSLRecord` (or precise error sentences
that :func:`repair_message` turns into the re-prompt), and :class:`DSLState` carries the
agent's memory between steps. The private modules hold the parts: ``_record`` (the typed
record and its parser), ``_equation`` (the frequency equation: parse, evaluate, classify),
``_family`` (which equation families an episode admits), ``_validate`` (the per-field
checks) and ``_state`` (carry-over and truncation).
"""

from __future__ import annotations

from silicolab.envs.causalab.dsl._equation import normalize_name
from silicolab.envs.causalab.dsl._record import (
    DSLRecord,
    Hypothesis,
    ParseOutcome,
    extract_json,
    extract_json_with_error,
    parse_record,
)
from silicolab.envs.causalab.dsl._state import DSLState, dump_json, repair_message, truncate_field
from silicolab.envs.causalab.dsl._validate import ACTION_KEYS, DSL_KEYS

__all__ = [
    "ACTION_KEYS",
    "DSL_KEYS",
    "DSLRecord",
    "DSLState",
    "Hypothesis",
    "ParseOutcome",
    "dump_json",
    "extract_json",
    "extract_json_with_error",
    "normalize_name",
    "parse_record",
    "repair_message",
    "truncate_field",
]
