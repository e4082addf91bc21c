"""Plain data types of the language-model layer: messages, requests, completions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from silicolab.core.errors import InputError

#: A chat message: ``{"role": "system" | "user" | "assistant", "content": str}``.
Message = dict[str, str]
#: What callers may pass as ``messages``: a list of messages or one user prompt string.
MessagesLike = str | Sequence[Mapping[str, Any]]

_ROLES = frozenset({"system", "user", "assistant"})


def normalize_messages(messages: MessagesLike) -> tuple[Message, ...]:
    """Messages as a tuple of ``{"role", "content"}`` dicts, checked.

    A bare string becomes a single user message. Anything else that is not a role/content
    pair raises :class:`InputError` naming the offending message.
    """
    if isinstance(messages, str):
        return ({"role": "user", "content": messages},)
    out: list[Message] = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, Mapping) or "role" not in msg or "content" not in msg:
            raise InputError(
                f"message {i} is {msg!r}: each message must be a mapping with 'role' and "
                "'content', e.g. {'role': 'user', 'content': 'Hello'}"
            )
        role, content = msg["role"], msg["content"]
        if role not in _ROLES:
            raise InputError(
                f"message {i} has role {role!r}: use one of 'system', 'user', 'assistant'"
            )
        if not isinstance(content, str):
            raise InputError(f"message {i} content must be a string, got {type(content).__name__}")
        out.append({"role": role, "content": content})
    if not out:
        raise InputError("no messages given: pass at least one user message")
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one completion, as reported by the server (or estimated when the
    server reports none, in which case ``estimated`` is True)."""

    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class Request:
    """One generation request after argument checking; what wrappers and backends see.

    ``tag`` labels the call for metering only; it never changes the answer and is not part
    of the cache key. ``sample_index`` distinguishes independent samples of the same prompt
    so that they are cached separately (derive it from the call's logical identity).
    ``top_p`` is the nucleus-sampling mass (None: the server's default), sent by the
    OpenAI-compatible and Anthropic backends.
    """

    messages: tuple[Message, ...]
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stop: tuple[str, ...] | None = None
    json_schema: Mapping[str, Any] | None = None
    tag: str = ""
    sample_index: int = 0
    top_p: float | None = None

    def params(self) -> dict[str, Any]:
        """The parameters that determine the answer (everything but messages and tag).

        ``top_p`` joins only when set, so the cache keys of requests without it are the
        same as before nucleus sampling could be asked for."""
        params: dict[str, Any] = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "stop": list(self.stop) if self.stop else None,
            "json_schema": self.json_schema,
            "sample_index": self.sample_index,
        }
        if self.top_p is not None:
            params["top_p"] = self.top_p
        return params

    def prompt_chars(self) -> int:
        return sum(len(m["content"]) for m in self.messages)


@dataclass(frozen=True, slots=True)
class Completion:
    """The answer to one request.

    ``cached`` is True when it came from the exact-prompt cache without any network call;
    ``attempts`` counts the HTTP attempts made (1 = no retry; 0 for a cache hit).
    """

    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    cached: bool = False
    latency_s: float = 0.0
    attempts: int = 1
    finish_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "usage": {
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
                "estimated": self.usage.estimated,
            },
            "model": self.model,
            "cached": self.cached,
            "latency_s": self.latency_s,
            "attempts": self.attempts,
            "finish_reason": self.finish_reason,
        }


def estimate_tokens(text: str) -> int:
    """A rough token count (about four characters a token) for budgeting when a server
    reports no usage; never used when real counts exist."""
    return max(1, (len(text) + 3) // 4) if text else 0
