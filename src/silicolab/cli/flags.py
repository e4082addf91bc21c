"""Library messages in the command line's words.

Library errors name Python parameters (``conditions=0``, ``subjects='rule'``) and list
them in :attr:`silicolab.core.errors.InputError.params`; :func:`as_flags` rewrites each
listed ``name=value`` as the flag a command-line user types (``--conditions 0``,
``--subjects rule``), so the two front doors share one message.
"""

from __future__ import annotations

import re

#: Python parameter -> its command-line form, where that is not ``--name-with-dashes``.
#: A value of the form ``"A|B"`` maps a boolean: ``A`` for True, ``B`` for False.
FLAGS: dict[str, str] = {
    "example": "STUDY (the built-in study's name)",
    "hypothesis": "--hypothesis FILE",
    "prior": "--prior|--no-prior",
    "suites": "--suite",
    "goals": "--env",
    "envs": "--env",
    "simulation": "NAME",
    "params": "--param",
    "truth": "--truth-edges",
    "prices": "--price-in/--price-out",
    "predict": "--predict|no --predict",
    "follow_on": "--follow-on|no --follow-on",
    "aggregate_replicates": "--aggregate-replicates|no --aggregate-replicates",
    "folder": "--write",
    "force": "--force|no --force",
}

_VALUE = r"""(?:'(?P<q1>[^']*)'|"(?P<q2>[^"]*)"|(?P<bare>[^\s,;:)]*))"""


def flag_of(param: str) -> str:
    """The flag of Python parameter ``param`` (``max_cost`` -> ``--max-cost``)."""
    return FLAGS.get(param, "--" + param.replace("_", "-"))


def as_flags(message: str, params: tuple[str, ...]) -> str:
    """``message`` with each ``name=value`` of a listed parameter written as its flag."""
    for param in params:
        flag = flag_of(param)
        pattern = re.compile(rf"(?<![\w.-]){re.escape(param)}={_VALUE}")
        message = pattern.sub(lambda m, flag=flag: _flag_text(flag, m), message)
    return message


def _flag_text(flag: str, match: re.Match[str]) -> str:
    value = match.group("q1") or match.group("q2") or match.group("bare") or ""
    if "|" in flag:  # a boolean parameter: its on or off flag
        on, off = flag.split("|", 1)
        return off if value in ("False", "0") else on
    if " " in flag or not value:  # the flag already shows its argument, or no value given
        return flag
    return f"{flag} {value}"
