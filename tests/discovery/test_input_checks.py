"""Inputs refused before any work: dependent columns named, parameter types checked."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from silicolab.core.errors import InputError
from silicolab.discovery import registry
from silicolab.discovery.datasets import check_data, linearly_dependent_columns
from silicolab.discovery.health import discovery_health


def test_dependent_columns_are_named() -> None:
    rng = np.random.default_rng(0)
    a, b, c = rng.normal(size=(3, 100))
    names = ["a", "b", "c", "d"]
    assert linearly_dependent_columns(np.c_[a, b, c, -2 * a], names) == ["a", "d"]
    assert linearly_dependent_columns(np.c_[a, b, c, a + b], names) == ["a", "b", "d"]
    assert linearly_dependent_columns(np.c_[a, b, c, rng.normal(size=100)], names) == []
    with pytest.raises(InputError, match=r"\['a', 'b'\]"):
        check_data(pd.DataFrame({"a": a, "b": a, "c": c}))


@pytest.mark.parametrize(
    ("method", "params", "fragment"),
    [
        ("pc", {"alpha": "abc"}, "alpha must be a number"),
        ("pc", {"max_k": "abc"}, "max_k must be an integer"),
        ("pc", {"stable": 1}, "stable must be true or false"),
        ("ges", {"maxP": "x"}, "maxP must be an integer"),
        ("mac_single_agent", {"nonsense": 1}, "does not accept"),
    ],
)
def test_parameter_types_are_checked(method: str, params: dict, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        registry.check_params(method, params)
    registry.check_params("pc", {"alpha": 0.01, "max_k": 2, "stable": False})


def test_discovery_health_counts_the_judges_failures_per_question() -> None:
    debate = {
        "source": "x",
        "questions": [{"number": 1, "effect": "y"}, {"number": 2, "effect": "z"}],
        "rounds": [
            {"round": 1, "open": [1, 2], "judge": {}},
            {"round": 2, "open": [2], "judge_error": {"message": "bad", "raw": "???"}},
        ],
        "final": {"forced": [2], "error": "bad", "raw": "!!!"},
        "verdicts": {"y": "yes", "z": "undecided"},
    }
    health = discovery_health({"debates": [debate]})
    assert health is not None
    units = {u.unit: u for u in health.units}
    assert (units["x->y"].steps, units["x->y"].failed_steps) == (1, 0)
    assert (units["x->z"].steps, units["x->z"].failed_steps) == (3, 2)
    assert not health.degraded
    assert discovery_health({"graph": "statistical"}) is None
