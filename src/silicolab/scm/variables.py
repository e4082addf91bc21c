"""Variables of a structural causal model: what a column of data measures and how.

A :class:`Variable` carries the measurement facts estimation needs (type, levels) and the
descriptive facts reports and prompts need (units, description, role). It is a frozen
pydantic model so it can be shared between graphs, SCMs and studies without copies.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from silicolab.core.records import SCHEMA_VERSION, model_from_record

#: The types a variable can have: the one vocabulary of the scm, sim and studies layers.
VariableType = Literal["continuous", "ordinal", "nominal", "binary", "count"]
VARIABLE_TYPES: tuple[VariableType, ...] = get_args(VariableType)
#: The types whose values are named levels (a question about one offers its levels).
LEVELLED_TYPES: tuple[VariableType, ...] = ("ordinal", "nominal", "binary")


class Variable(BaseModel):
    """One variable of a causal model.

    ``levels`` orders the categories of ordinal variables (lowest first; they are scored
    1..k in estimation), lists the categories of nominal ones (the first is the reference
    of the dummy coding) and names the two values of a binary one (scored 0 and 1).
    ``role`` is free text such as ``"outcome"``, ``"cause"`` or ``"mediator"``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    type: VariableType = "continuous"
    role: str | None = None
    units: str | None = None
    levels: tuple[str, ...] | None = None
    description: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _name_not_blank(cls, value: str) -> str:
        if not value or not value.strip():
            raise ValueError("a variable needs a non-empty name, e.g. Variable(name='price')")
        return value

    @model_validator(mode="after")
    def _levels_fit_type(self) -> Variable:
        if self.levels is not None and len(set(self.levels)) != len(self.levels):
            raise ValueError(f"variable {self.name!r} repeats a level; list each level once")
        if self.type == "binary" and self.levels is not None and len(self.levels) != 2:
            raise ValueError(
                f"binary variable {self.name!r} has {len(self.levels)} levels; give exactly two "
                "(the first is scored 0, the second 1)"
            )
        return self

    def score_levels(self) -> dict[str, int]:
        """The number each level stands for in estimation: ordinal 1..k, binary 0/1."""
        if self.levels is None:
            return {}
        start = 0 if self.type == "binary" else 1
        return {level: start + i for i, level in enumerate(self.levels)}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with ``schema_version``."""
        data = self.model_dump(mode="json")
        data["schema_version"] = SCHEMA_VERSION
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Variable:
        """Rebuild a variable written by :meth:`to_dict`."""
        return model_from_record(cls, data, f"variable record {data!r}")
