"""The exception types shared by every silicolab layer.

Each error that a user can cause carries a message that says what was wrong *and* how
to fix it; the CLI prints that message as one line and exits with code 2 (no traceback).
"""

from __future__ import annotations


class SilicolabError(Exception):
    """Base class of every error silicolab raises on purpose."""

    #: Process exit code the CLI uses for this error.
    exit_code: int = 1


class InputError(SilicolabError, ValueError):
    """Bad user input: the message names the problem and the fix."""

    exit_code = 2


class ConfigError(SilicolabError):
    """A configuration problem: a malformed ``silicolab.yaml``, an unknown model spec,
    a missing API key. The message names the setting and how to correct it."""

    exit_code = 2


class LLMError(SilicolabError):
    """A language-model call that still failed after the bounded retries."""

    exit_code = 1

    def __init__(self, message: str, *, attempts: int = 0, status: int | None = None):
        super().__init__(message)
        self.attempts = attempts
        self.status = status


class ParseFailure(SilicolabError):
    """LLM output that stayed invalid after the repair loop.

    The raw text is kept so a record can show exactly what the model said; it is never
    silently coerced into a valid-looking value.
    """

    exit_code = 1

    def __init__(self, message: str, *, raw: str = "", attempts: int = 0):
        super().__init__(message)
        self.raw = raw
        self.attempts = attempts
