"""The examples' simulation files (``silicolab/sim/worlds/<name>.yaml``) and what their
outcomes are turned back into: the grounded history the examples' summaries report."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from silicolab.sim.outcome import SimulationOutcome
from silicolab.sim.simulation import Simulation

WORLDS = Path(__file__).resolve().parent.parent / "worlds"


@cache
def world(name: str) -> Simulation:
    """The simulation file ``worlds/<name>.yaml`` (read once; a Simulation is frozen)."""
    return Simulation.load(WORLDS / f"{name}.yaml")


def varied(name: str, change: dict[str, Any]) -> Simulation:
    """The world ``name`` with top-level fields replaced by ``change`` (checked again)."""
    return Simulation.model_validate({**world(name).model_dump(), **change})


def grounded_history(outcome: SimulationOutcome) -> list[list[Any]]:
    """``[step, name, old, new, cause]`` per change of a scalar grounded variable (the
    shape of :meth:`silicolab.sim.grounded.GroundedState.state_dict`'s history), read
    back from the outcome's timeline: a change during step ``s`` is at ``after_step``
    ``s + 1`` and its old value is the variable's previous row."""
    current: dict[str, Any] = {}
    history: list[list[Any]] = []
    for row in outcome.timeline:
        name, value = row["variable"], row["value"]
        if row["after_step"] == 0 and row["cause"] == "start" and name not in current:
            current[name] = value
            continue
        history.append([row["after_step"] - 1, name, current[name], value, row["cause"]])
        current[name] = value
    return history
