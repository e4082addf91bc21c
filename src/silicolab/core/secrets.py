"""Keep secrets out of records, logs and cache keys.

:func:`redact` removes values whose *key* looks like a credential;
:func:`scrub_text` replaces known secret *values* (for example the API keys present in
the environment) wherever they appear in a string.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

_SECRET_KEY = re.compile(
    r"(api[_-]?key|secret|token(?!s\b|_count)|password|passwd|authorization|auth[_-]?header|"
    r"credential|bearer|cookie)",
    re.IGNORECASE,
)
#: Key names that match the pattern above but hold no secret.
_NOT_SECRET = {
    "api_key_env",
    "max_tokens",
    "input_tokens",
    "output_tokens",
    "tokens_per_minute",
    "total_tokens",
    "prompt_tokens",
    "completion_tokens",
}
REDACTED = "***"


def is_secret_key(key: str) -> bool:
    """Whether a mapping key names a credential (``api_key``, ``Authorization``, …)."""
    return key not in _NOT_SECRET and bool(_SECRET_KEY.search(key))


def redact(obj: Any) -> Any:
    """A copy of ``obj`` (nested dicts, lists, tuples) with credential-named values replaced
    by ``"***"``. Non-container values are returned unchanged."""
    if isinstance(obj, dict):
        return {
            k: (REDACTED if isinstance(k, str) and is_secret_key(k) and v else redact(v))
            for k, v in obj.items()
        }
    if isinstance(obj, list | tuple):
        return type(obj)(redact(v) for v in obj)
    return obj


def secret_env_values(min_length: int = 8) -> list[str]:
    """Values of environment variables whose names look like credentials."""
    return [
        value
        for name, value in os.environ.items()
        if is_secret_key(name) and value and len(value) >= min_length
    ]


def scrub_text(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with every occurrence of a secret value replaced by ``"***"``.

    ``secrets`` defaults to the credential-like environment variables.
    """
    for value in secrets if secrets is not None else secret_env_values():
        if value:
            text = text.replace(value, REDACTED)
    return text


def scrub_strings(obj: Any, secrets: list[str]) -> Any:
    """A copy of the JSON-like ``obj`` with ``secrets`` replaced in every string, keys
    included (for a secret that overlaps JSON syntax, which text scrubbing cannot undo)."""
    if isinstance(obj, str):
        return scrub_text(obj, secrets)
    if isinstance(obj, dict):
        return {scrub_strings(k, secrets): scrub_strings(v, secrets) for k, v in obj.items()}
    if isinstance(obj, list):
        return [scrub_strings(v, secrets) for v in obj]
    return obj
