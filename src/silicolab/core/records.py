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


def model_from_record(model: type[M], data: Mapping[str, Any], what: str) -> M:
    """``model`` validated from ``data`` without its ``schema_version`` key; ``what`` names
    the record in the error (e.g. ``"variable record {...}"``)."""
    payload = {k: v for k, v in data.items() if k != "schema_version"}
    try:
        return model.model_validate(payload)
    except ValueError as exc:
        raise InputError(f"invalid {what}: {exc}") from exc


__all__ = ["model_from_record"]
