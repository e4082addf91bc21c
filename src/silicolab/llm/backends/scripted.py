"""``scripted``: a deterministic test double of a language model.

It is **not** a language model: it answers from canned replies, regex rules or a Python
callable, so tests, examples and the offline demo run without any server. Token usage is
counted as whitespace-separated words, which makes ledgers easy to check by hand.

Answer selection, first match wins:

1. ``fn(request) -> str`` if given;
2. the first ``rules`` entry whose pattern matches the last user message (``re.search``);
   the reply may be a string (``\\1``-style groups are expanded) or a callable of the match;
3. the next of ``replies`` (in call order, cycling) — deterministic for sequential use;
4. a request with a ``json_schema``: a schema-valid example chosen deterministically
   from a hash of the request;
5. ``default``.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from silicolab.core.errors import InputError
from silicolab.core.files import canonical_json
from silicolab.llm.base import LanguageModel
from silicolab.llm.types import Completion, Request, Usage

Rule = tuple[str | re.Pattern[str], str | Callable[[re.Match[str]], str]]


def word_count(text: str) -> int:
    """The scripted model's token count: whitespace-separated words."""
    return len(text.split())


class ScriptedModel(LanguageModel):
    """A deterministic stand-in for a language model (see the module docstring)."""

    def __init__(
        self,
        *,
        replies: Sequence[str] | None = None,
        rules: Iterable[Rule] | Mapping[str, str] | None = None,
        fn: Callable[[Request], str] | None = None,
        default: str = "OK",
        latency_s: float = 0.0,
        name: str = "scripted",
    ):
        self.spec = name if name.startswith("scripted") else f"scripted:{name}"
        pairs = rules.items() if isinstance(rules, Mapping) else (rules or ())
        self.rules = [(re.compile(p) if isinstance(p, str) else p, r) for p, r in pairs]
        self.replies = list(replies or [])
        self._cycle = itertools.cycle(self.replies) if self.replies else None
        self.fn = fn
        self.default = default
        self.latency_s = latency_s
        self.calls: list[Request] = []

    def identity(self) -> dict[str, Any]:
        script = {
            "rules": [
                (p.pattern, r if isinstance(r, str) else _callable_id(r)) for p, r in self.rules
            ],
            "replies": self.replies,
            "fn": _callable_id(self.fn) if self.fn else None,
            "default": self.default,
        }
        return {"backend": "scripted", "name": self.spec, "script": script}

    def answer(self, request: Request) -> str:
        """The reply text for ``request`` (no side effects besides the reply cycle)."""
        if self.fn is not None:
            return str(self.fn(request))
        last_user = next(
            (m["content"] for m in reversed(request.messages) if m["role"] == "user"), ""
        )
        for pattern, reply in self.rules:
            match = pattern.search(last_user)
            if match:
                return reply(match) if callable(reply) else match.expand(reply)
        if self._cycle is not None:
            return next(self._cycle)
        if request.json_schema is not None:
            seed = int(
                hashlib.sha256(
                    canonical_json(request.params() | {"messages": request.messages}).encode()
                ).hexdigest()[:16],
                16,
            )
            value = example_from_schema(dict(request.json_schema), np.random.default_rng(seed))
            return json.dumps(value)
        return self.default

    async def acomplete(self, request: Request) -> Completion:
        self.calls.append(request)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        text = self.answer(request)
        if request.stop:
            for stop in request.stop:
                text = text.split(stop, 1)[0]
        if request.max_tokens is not None:
            words = text.split(" ")
            if len(words) > request.max_tokens:
                text = " ".join(words[: request.max_tokens])
        prompt = " ".join(m["content"] for m in request.messages)
        return Completion(
            text=text,
            usage=Usage(word_count(prompt), word_count(text)),
            model=self.spec,
            latency_s=self.latency_s,
        )


def _callable_id(fn: Any) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def example_from_schema(
    schema: Mapping[str, Any], rng: np.random.Generator, defs: Mapping[str, Any] | None = None
) -> Any:
    """A value valid under ``schema`` (the JSON-schema subset pydantic emits), drawn with
    ``rng``: enums and literals pick a member, numbers respect their bounds, objects fill
    every property, arrays respect ``minItems``."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        ref = str(schema["$ref"])
        name = ref.rsplit("/", 1)[-1]
        if name not in defs:
            raise InputError(f"cannot resolve schema reference {ref!r}")
        return example_from_schema(defs[name], rng, defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        options = list(schema["enum"])
        return options[int(rng.integers(len(options)))]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return example_from_schema(options[int(rng.integers(len(options)))], rng, defs)
    if "allOf" in schema:
        return example_from_schema(schema["allOf"][0], rng, defs)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if "default" in schema and kind not in ("object", "array"):
        return schema["default"]
    if kind == "object":
        props = schema.get("properties", {})
        return {k: example_from_schema(v, rng, defs) for k, v in props.items()}
    if kind == "array":
        n = max(int(schema.get("minItems", 1)), 1)
        items = schema.get("items", {"type": "string"})
        return [example_from_schema(items, rng, defs) for _ in range(n)]
    if kind in ("integer", "number"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        hi = schema.get("maximum", schema.get("exclusiveMaximum", lo + 10))
        if kind == "integer":
            lo_i = int(np.ceil(lo)) + (1 if "exclusiveMinimum" in schema and lo == int(lo) else 0)
            hi_i = int(np.floor(hi)) - (1 if "exclusiveMaximum" in schema and hi == int(hi) else 0)
            return int(rng.integers(lo_i, max(lo_i, hi_i) + 1))
        return float(np.round(rng.uniform(lo, hi), 3))
    if kind == "boolean":
        return bool(rng.integers(2))
    if kind == "null":
        return None
    length = max(int(schema.get("minLength", 1)), 1)
    words = ["alpha", "beta", "gamma", "delta", "omega"]
    text = " ".join(words[int(rng.integers(len(words)))] for _ in range(2))
    return (text * length)[: max(length, len(text))][: schema.get("maxLength", 10**6)]
