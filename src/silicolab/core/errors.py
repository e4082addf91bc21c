"""The exception types shared by every silicolab layer.

Each error that a user can cause carries a message that says what was wrong *and* how
to fix it; the CLI prints that message as one line and exits with code 2 (no traceback).
"""

from __future__ import annotations

import copy
from typing import Any, Self


class SilicolabError(Exception):
    """Base class of every error silicolab raises on purpose."""

    #: Process exit code the CLI uses for this error.
    exit_code: int = 1

    def in_context(self, prefix: str, suffix: str = "") -> Self:
        """This error again, its message framed as ``prefix: message`` + ``suffix``, every
        other attribute (``raw``, ``attempts``, ``status``, ``params``) kept: for a caller
        that knows where the error happened (raise it ``from`` the original)."""
        framed = copy.copy(self)
        framed.args = (f"{prefix}: {self}{suffix}", *self.args[1:])
        return framed


class InputError(SilicolabError, ValueError):
    """Bad user input: the message names the problem and the fix.

    A message about a parameter names it as the Python caller wrote it, ``name=value``
    (``conditions=0``) or ``name=`` alone, and lists it in ``params``; the command line
    rewrites each listed ``name=...`` as its flag (``--conditions 0``,
    :mod:`silicolab.cli.flags`), so one message serves both front doors.
    """

    exit_code = 2

    def __init__(self, message: str, *, params: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.params = tuple(params)

    def __reduce__(self) -> tuple[Any, ...]:  # keep ``params`` across process borders
        return (type(self), self.args, dict(self.__dict__))


class ConfigError(SilicolabError):
    """A configuration problem: a malformed ``silicolab.yaml``, an unknown model spec,
    a missing API key. The message names the setting and how to correct it."""

    exit_code = 2


class LLMError(SilicolabError):
    """A language-model call that still failed after the bounded retries (an unreachable
    server, a timeout, an error status). The CLI exits 3, "the model kept failing", as it
    does for a degraded run, whichever command made the call."""

    exit_code = 3

    def __init__(self, message: str, *, attempts: int = 0, status: int | None = None):
        super().__init__(message)
        self.attempts = attempts
        self.status = status


class ParseFailure(SilicolabError):
    """LLM output that stayed invalid after the repair loop.

    The raw text is kept so a record can show exactly what the model said; it is never
    silently coerced into a valid-looking value. The CLI exits 3, "the model kept
    failing", like :class:`LLMError` and a degraded run.
    """

    exit_code = 3

    def __init__(self, message: str, *, raw: str = "", attempts: int = 0):
        super().__init__(message)
        self.raw = raw
        self.attempts = attempts


class BudgetReached(SilicolabError):
    """A spending limit was reached: no new paid call is made. Not a failure: the run ends
    ``interrupted`` with ``reason`` (``"spending limit $5 reached ($5.0132 spent)"``) in
    ``run.json``, every finished unit kept, and ``--resume`` with a higher limit continues
    it. The message adds that hint to the reason."""

    exit_code = 4

    def __init__(self, limit_usd: float, spent_usd: float):
        self.limit_usd = limit_usd
        self.spent_usd = spent_usd
        self.reason = f"spending limit ${limit_usd:g} reached (${spent_usd:.4f} spent)"
        super().__init__(
            f"{self.reason}: paid calls stopped, the finished units are saved; rerun the "
            "same command with --resume and a higher --max-cost"
        )

    def __reduce__(self) -> tuple[type, tuple[float, float]]:  # crosses process borders
        return (type(self), (self.limit_usd, self.spent_usd))
