"""Combining several answers about one variable into one value, deterministically.

The paper lets a variable be measured by several questions (to several agents) and
combined by one of six rules. The arithmetic is done here, never by a language model;
NA answers are left out, and a variable whose every answer is NA is NA.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal, get_args

from silicolab.core.errors import InputError

#: The six rules that combine several answers about one variable (the one vocabulary).
Aggregation = Literal["min", "max", "mean", "mode", "median", "sum"]
AGGREGATIONS: tuple[Aggregation, ...] = get_args(Aggregation)


def aggregate(values: Sequence[Any], rule: str, type_: str = "continuous") -> Any:
    """``values`` (``None`` = NA) combined by ``rule``; ``None`` when all are NA.

    Nominal values (text) accept only ``mode``; ties in ``mode`` go to the value seen
    first, so the result does not depend on set ordering."""
    if rule not in AGGREGATIONS:
        raise InputError(f"unknown aggregation {rule!r}; use one of {', '.join(AGGREGATIONS)}")
    present = [v for v in values if v is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    if type_ == "nominal" or any(isinstance(v, str) for v in present):
        if rule != "mode":
            raise InputError(f"nominal answers can only be combined by 'mode', not {rule!r}")
        return Counter(present).most_common(1)[0][0]
    numbers = [float(v) for v in present]
    if rule == "mode":
        counts = Counter(numbers)
        top = max(counts.values())
        return next(v for v in numbers if counts[v] == top)
    return {
        "min": min,
        "max": max,
        "sum": sum,
        "mean": statistics.fmean,
        "median": statistics.median,
    }[rule](numbers)


__all__ = ["AGGREGATIONS", "Aggregation", "aggregate"]
