"""Reply schemas of the prediction prompts (see :mod:`silicolab.studies.predict`)."""

from __future__ import annotations

import math
from functools import cache
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from silicolab.studies.scientist_steps import Reply


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


__all__ = ["PredictionReply", "beta_schema", "path_label"]
