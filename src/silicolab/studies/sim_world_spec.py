"""A study whose conditions run in a simulation: which world, where each treatment goes,
how each measured variable is read (the ``simulation`` section of a hypothesis).

.. code-block:: yaml

    simulation:
      world: public_goods          # a built-in world ('silicolab sim list') or a .yaml file
      treatments:                  # cause -> the field of the simulation it sets
        multiplier: {path: game_master.params.multiplier}
        framing: {path: premise, values: {"community": "...", "market": "..."}}
      measurements:                # measured variable -> the grounded variable it reads
        final_money: {variable: money, aggregate: mean}
        alice_votes: {variable: votes, key: Alice}

A ``path`` is dotted: mapping keys, list positions, or — in lists of named items such as
``entities`` or ``scenes`` — an item's ``name`` (``entities.Bob.params.plan``). By default
a treatment puts its value's number there (``"$50"`` -> ``50.0``; the text for a nominal
cause); ``values`` maps each treatment value to what goes there instead. A measured
variable without survey ``questions`` must have a measurement; one with questions is
asked after the episode, of the simulation's entities by name or of the game master as
``coordinator``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Aggregate = Literal["value", "mean", "sum", "min", "max", "share_true"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TreatmentTarget(_Strict):
    """Where a cause's value goes: ``path`` in the simulation, optionally through
    ``values`` (treatment value text -> what is set)."""

    path: str = Field(..., min_length=1)
    values: dict[str, Any] = Field(default_factory=dict)


class Measurement(_Strict):
    """How a measured variable is read from the final grounded state: ``variable``, then
    ``key`` of a mapping (e.g. a candidate), then ``aggregate`` over a mapping's values
    (``mean``, ``sum``, ``min``, ``max``; ``share_true`` the share of true values)."""

    variable: str = Field(..., min_length=1)
    key: str | None = None
    aggregate: Aggregate = "value"


class SimulationWorld(_Strict):
    """The ``simulation`` section of a hypothesis (see the module docstring)."""

    world: str = Field(..., min_length=1)
    treatments: dict[str, TreatmentTarget] = Field(default_factory=dict)
    measurements: dict[str, Measurement] = Field(default_factory=dict)


__all__ = ["Aggregate", "Measurement", "SimulationWorld", "TreatmentTarget"]
