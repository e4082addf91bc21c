"""Typed answers from any model: validated pydantic objects, choices, numbers.

:func:`astructured` asks for JSON of the schema (constrained by the server where it can
be), validates it, and on failure re-prompts with the validation error, at most
``retries`` times; output that stays invalid raises :class:`ParseFailure` carrying the
raw text — it is never coerced into a plausible-looking value.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar, Unpack

from pydantic import BaseModel, Field, ValidationError, create_model

from silicolab.core.errors import InputError, ParseFailure
from silicolab.core.sync import sync_twin
from silicolab.llm.base import LanguageModel, SamplingOptions
from silicolab.llm.types import MessagesLike, normalize_messages

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def extract_json(text: str) -> str:
    """The JSON document inside a reply: the whole text, a fenced block, or the outermost
    ``{...}`` / ``[...]`` span. Returns the text unchanged when nothing better is found."""
    stripped = text.strip()
    fenced = _FENCE.search(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    if stripped[:1] in "{[":
        return stripped
    for open_, close in (("{", "}"), ("[", "]")):
        start, end = stripped.find(open_), stripped.rfind(close)
        if 0 <= start < end:
            return stripped[start : end + 1]
    return stripped


@functools.lru_cache(maxsize=1024)
def json_schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a pydantic model, computed once per class (building it costs
    about 0.3 ms, more than the rest of a call). Treat the result as read-only."""
    return schema.model_json_schema()


@functools.lru_cache(maxsize=256)
def _choice_model(n_options: int) -> type[BaseModel]:
    # An enum (not ge/le bounds): grammar-constrained servers enforce enums, not ranges.
    numbers = Literal[tuple(range(1, n_options + 1))]  # type: ignore[valid-type]
    return create_model(
        "Choice", choice=(numbers, Field(description="number of the chosen option"))
    )


@functools.lru_cache(maxsize=256)
def _number_model(integer: bool, lo: float | None, hi: float | None) -> type[BaseModel]:
    bounds: dict[str, float] = {}
    if lo is not None:
        bounds["ge"] = lo
    if hi is not None:
        bounds["le"] = hi
    kind: type = int if integer else float
    return create_model("Number", value=(kind, Field(**bounds)))


def _error_text(err: Exception) -> str:
    if isinstance(err, ValidationError):
        parts = [
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}"
            for e in err.errors()[:8]
        ]
        return "; ".join(parts)
    return str(err)


async def astructured(
    model: LanguageModel,
    messages: MessagesLike,
    schema: type[M],
    retries: int = 2,
    *,
    lenient: Callable[[str], M | None] | None = None,
    **options: Unpack[SamplingOptions],
) -> M:
    """Ask ``model`` for an instance of the pydantic model ``schema`` and return it validated.

    Each failed attempt adds the bad reply and the validation error to the conversation
    and asks again, at most ``retries`` extra times. ``lenient`` reads a reply that is not
    valid JSON in plain words (e.g. an option's label) before any re-prompt is paid for.
    ``options`` (temperature, max_tokens, seed, tag, sample_index) go to every attempt's call.
    """
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        raise InputError(f"schema must be a pydantic BaseModel class, got {schema!r}")
    json_schema = json_schema_of(schema)
    conversation = list(normalize_messages(messages))
    last_text, last_error = "", ""
    for _attempt in range(retries + 1):
        completion = await model.agenerate(conversation, json_schema=json_schema, **options)
        last_text = completion.text
        try:
            return schema.model_validate_json(extract_json(last_text))
        except (ValidationError, ValueError) as err:
            last_error = _error_text(err)
        plain = lenient(last_text) if lenient is not None else None
        if plain is not None:
            return plain
        conversation += [
            {"role": "assistant", "content": last_text},
            {
                "role": "user",
                "content": (
                    f"That reply was not valid: {last_error}. Answer again with only a JSON "
                    f"object that conforms to this schema:\n{json.dumps(json_schema)}"
                ),
            },
        ]
    raise ParseFailure(
        f"{schema.__name__}: the reply stayed invalid after {retries + 1} attempts ({last_error})",
        raw=last_text,
        attempts=retries + 1,
    )


structured = sync_twin(astructured)


async def achoose(
    model: LanguageModel,
    question: str,
    options: Sequence[str],
    *,
    retries: int = 2,
    system: str | None = None,
    **sampling: Unpack[SamplingOptions],
) -> int:
    """Ask ``question`` with numbered ``options``; return the 0-based index chosen.
    ``sampling`` options go to the call as in :func:`astructured`."""
    options = [str(o) for o in options]
    if len(options) < 2:
        raise InputError("choose() needs at least two options")
    listing = "\n".join(f"{i}. {o}" for i, o in enumerate(options, start=1))
    choice_model = _choice_model(len(options))
    prompt = f"{question}\n\nOptions:\n{listing}\n\nAnswer with the number of one option."
    messages = ([{"role": "system", "content": system}] if system else []) + [
        {"role": "user", "content": prompt}
    ]
    picked = await astructured(
        model, messages, choice_model, retries, lenient=_plain_choice(options, choice_model),
        **sampling,
    )  # fmt: skip
    return int(picked.choice) - 1  # type: ignore[attr-defined]


def _plain_choice(options: Sequence[str], choice_model: type[M]) -> Callable[[str], M | None]:
    """A reader of a choice given in words: exactly an option's label or its number
    (case, quotes and a final full stop ignored), else ``None`` (the reply is re-asked)."""
    labels = {o.strip().casefold(): i for i, o in enumerate(options, start=1)}

    def read(text: str) -> M | None:
        said = text.strip().strip("\"'`").rstrip(".").strip().casefold()
        number = labels.get(said) or (int(said) if said.isdigit() else None)
        if number is None or not 1 <= number <= len(options):
            return None
        return choice_model(choice=number)

    return read


choose = sync_twin(achoose)


async def anumber(
    model: LanguageModel,
    question: str,
    *,
    lo: float | None = None,
    hi: float | None = None,
    integer: bool = False,
    retries: int = 2,
    **sampling: Unpack[SamplingOptions],
) -> float | int:
    """Ask for a number (within ``[lo, hi]`` when given); validated like :func:`astructured`."""
    number_model = _number_model(integer, lo, hi)
    picked = await astructured(model, question, number_model, retries, **sampling)
    return picked.value  # type: ignore[attr-defined]


number = sync_twin(anumber)
