"""Rebuilding versioned records: JSON-ready dicts that carry a ``schema_version`` key.

Records are written by ``to_dict`` methods with the writing module's ``schema_version``;
reading one back drops that key and validates the rest, and a record that does not fit
is an :class:`~silicolab.core.errors.InputError` that names the record and the problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from silicolab.core.errors import InputError

M = TypeVar("M", bound=BaseModel)

#: The version of every record kind still at its first schema, written as an int. A kind
#: whose schema changed names its own (the study and prediction records are at 2); episode
#: records have written the same version as the string ``"1"`` since their first release,
#: so :data:`silicolab.envs.base.SCHEMA_VERSION` is ``str(SCHEMA_VERSION)`` and old records
#: still read.
SCHEMA_VERSION = 1


def model_from_record(model: type[M], data: Mapping[str, Any], what: str) -> M:
    """``model`` validated from ``data`` without its ``schema_version`` key; ``what`` names
    the record in the error (e.g. ``"variable record {...}"``)."""
    payload = {k: v for k, v in data.items() if k != "schema_version"}
    try:
        return model.model_validate(payload)
    except ValueError as exc:
        raise InputError(f"invalid {what}: {exc}") from exc


__all__ = ["SCHEMA_VERSION", "model_from_record"]
