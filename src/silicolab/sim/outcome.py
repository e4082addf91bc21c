"""What a finished simulation leaves: its log and events, and tidy tables of the outcome.

``timeline`` has one row per grounded value over time (``after_step`` 0 is the start; a
change made during step ``s`` shows at ``after_step`` ``s + 1``), with dictionary values
split into one row per key, so an election's votes plot straight from the table.
``per_entity`` has one row per entity with every grounded value keyed by that entity
(money, score, a survey's answers as ``variable.question``), including variables named
``variable:entity`` (a market's ``money:Ann`` is Ann's ``money``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from silicolab.sim.entity import Entity
from silicolab.sim.game_master import GameMaster
from silicolab.sim.grounded import encode_value
from silicolab.sim.log import EpisodeLog


@dataclass(frozen=True)
class SimulationOutcome:
    """One played simulation (see the module docstring for the tables)."""

    name: str
    seed: int
    log: EpisodeLog
    events: list[str]
    final_state: dict[str, Any]
    timeline: list[dict[str, Any]]
    per_entity: list[dict[str, Any]]
    steps: int
    gm_llm_calls: int
    survey: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: every field, the log as a list of steps."""
        return {
            "simulation": self.name,
            "seed": self.seed,
            "steps": self.steps,
            "gm_llm_calls": self.gm_llm_calls,
            "events": list(self.events),
            "final_state": self.final_state,
            "timeline": self.timeline,
            "per_entity": self.per_entity,
            "survey": self.survey,
            "rejected": self.rejected,
            "log": self.log.to_list(),
        }


def _rows(after: int, name: str, value: Any, cause: str) -> list[dict[str, Any]]:
    if isinstance(value, Mapping):
        return [
            {
                "after_step": after,
                "variable": name,
                "key": str(k),
                "value": encode_value(v),
                "cause": cause,
            }
            for k, v in value.items()
        ]
    return [
        {
            "after_step": after,
            "variable": name,
            "key": "",
            "value": encode_value(value),
            "cause": cause,
        }
    ]


def timeline(gm: GameMaster) -> list[dict[str, Any]]:
    """The grounded values over time (see the module docstring)."""
    start: dict[str, Any] = {n: v.value for n, v in gm.state.variables.items()}
    for change in reversed(gm.state.history):
        start[change.name] = change.old
    rows = [r for n, v in start.items() for r in _rows(0, n, v, "start")]
    for change in gm.state.history:
        old = change.old if isinstance(change.old, Mapping) else {}
        if isinstance(change.new, Mapping):
            changed = {k: v for k, v in change.new.items() if k not in old or old[k] != v}
            rows += _rows(change.step + 1, change.name, changed, change.cause)
        else:
            rows += _rows(change.step + 1, change.name, change.new, change.cause)
    return rows


def per_entity(gm: GameMaster, names: Sequence[str]) -> list[dict[str, Any]]:
    """One row per entity with the grounded values keyed by it."""
    rows = []
    for name in names:
        row: dict[str, Any] = {"entity": name}
        for var, v in gm.state.variables.items():
            base, _, owner = var.rpartition(":")
            if base and owner == name:
                row[base] = encode_value(v.value)
            elif isinstance(v.value, Mapping) and name in v.value:
                value = v.value[name]
                if isinstance(value, Mapping):
                    row |= {f"{var}.{k}": encode_value(x) for k, x in value.items()}
                else:
                    row[var] = encode_value(value)
        rows.append(row)
    return rows


def outcome_of(
    name: str, seed: int, gm: GameMaster, entities: Sequence[Entity], log: EpisodeLog
) -> SimulationOutcome:
    """The outcome of the episode ``gm`` just played."""
    return SimulationOutcome(
        name=name,
        seed=seed,
        log=log,
        events=list(gm.events),
        final_state={n: encode_value(v) for n, v in gm.state.snapshot().items()},
        timeline=timeline(gm),
        per_entity=per_entity(gm, [e.name for e in entities]),
        steps=gm.clock.steps,
        gm_llm_calls=gm.llm_calls,
        survey=list(gm.memo.get("survey", [])),
        rejected=[
            {"actor": a.actor, "action": a.action, "step": a.step, "reason": msg}
            for a, msg in gm.rejections
        ],
    )
