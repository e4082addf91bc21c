"""Reply schemas of the prediction prompts, and how the prompts show the data (see
:mod:`silicolab.studies.predict`)."""

from __future__ import annotations

import math
from functools import cache
from typing import Literal

import pandas as pd
from pydantic import BaseModel, Field, field_validator

from silicolab.studies.hypothesis import Hypothesis
from silicolab.studies.scientist import Reply


class PredictionReply(Reply):
    """One predicted outcome value."""

    prediction: float = Field(description="your predicted value, one number")

    @field_validator("prediction")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("the prediction must be a finite number")
        return value


def path_label(cause: str, effect: str) -> str:
    """How a path is named in prompts and replies: ``"cause -> effect"``."""
    return f"{cause} -> {effect}"


@cache
def beta_schema(paths: tuple[str, ...]) -> type[Reply]:
    """A prediction for each of ``paths``, each exactly once."""
    PathName = Literal[paths]  # type: ignore[valid-type]

    class PathGuess(BaseModel):
        path: PathName = Field(description="the path, as listed")  # type: ignore[valid-type]
        estimate: float = Field(description="the predicted coefficient")
        significant: bool = Field(description="whether it will be statistically significant")

    class BetaReply(Reply):
        paths: list[PathGuess] = Field(description="one prediction per path")

        @field_validator("paths")
        @classmethod
        def _each_once(cls, guesses: list[PathGuess]) -> list[PathGuess]:
            named = [g.path for g in guesses]
            if sorted(named) != sorted(paths):
                raise ValueError(f"give exactly one prediction for each path: {list(paths)}")
            if not all(math.isfinite(g.estimate) for g in guesses):
                raise ValueError("every estimate must be a finite number")
            return guesses

    return BetaReply


def treatment_texts(hypothesis: Hypothesis, row: pd.Series) -> dict[str, str]:
    """The treatment values of a data row as the agents saw them (``"$20"``, not 20.0)."""
    out = {}
    for v in hypothesis.treatments:
        value = row[v.name]
        by_number = {v.numeric(text): text for text in v.values}
        out[v.name] = by_number.get(value, str(value))
    return out


def scoring_notes(hypothesis: Hypothesis) -> list[str]:
    """How non-numeric variables are scored as numbers in the data."""
    notes = []
    for v in hypothesis.variables:
        order = v.levels or v.values
        if v.type == "binary" and order:
            notes.append(f"{v.name} is scored 0 for '{order[0]}' and 1 for '{order[1]}'.")
        elif v.type == "ordinal" and order:
            scores = ", ".join(f"{i} = '{x}'" for i, x in enumerate(order, start=1))
            notes.append(f"{v.name} is scored {scores}.")
        elif v.type == "nominal" and order:
            notes.append(f"{v.name} is coded by indicators against '{order[0]}'.")
    return notes


def outcome_scale(hypothesis: Hypothesis) -> str:
    """What kind of number the outcome prediction should be."""
    o = hypothesis.outcome
    order = o.levels
    if o.type == "binary" and order:
        return f"a number from 0 ('{order[0]}') to 1 ('{order[1]}'), e.g. a probability"
    if o.type == "ordinal" and order:
        return f"a number from 1 ('{order[0]}') to {len(order)} ('{order[-1]}')"
    return f"one number{f' in {o.units}' if o.units else ''}"


__all__ = [
    "PredictionReply",
    "beta_schema",
    "outcome_scale",
    "path_label",
    "scoring_notes",
    "treatment_texts",
]
