"""Run one condition of a study in a simulation (a hypothesis' ``simulation`` section).

The condition's treatment values are written into a copy of the world
(:func:`treated_simulation`), the episode is played with the study's subject model for
the people and its coordinator model for the game master (or, for rule-based subjects,
the world's own offline script), the measured variables are read from the final
grounded state (:func:`measured_values`) and, for those with survey questions, asked of
the entities afterwards (the game master answers as ``coordinator``). The result is an
ordinary :class:`~silicolab.studies.conduct.ConditionRun`, so data, fit, predictions and
reports are the pipeline's own.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from silicolab.core.errors import InputError, LLMError, ParseFailure
from silicolab.core.seeding import child_seed
from silicolab.runs.health import UnitHealth, cut
from silicolab.sim.health import episode_health
from silicolab.sim.simulation import Simulation
from silicolab.sim.survey import aask_survey
from silicolab.studies.conduct import ConditionRun, survey_questions, survey_values
from silicolab.studies.design import Condition
from silicolab.studies.hypothesis import COORDINATOR, Hypothesis
from silicolab.studies.sim_world_spec import Measurement, SimulationWorld


@functools.lru_cache(maxsize=16)
def _world_yaml(world: str) -> str:
    from silicolab.sim.worlds import load_world

    return load_world(world).to_yaml()


def base_simulation(spec: SimulationWorld) -> Simulation:
    """The study's world, untreated (a built-in world's name or a ``.yaml`` file)."""
    return Simulation.from_yaml(_world_yaml(spec.world), spec.world)


def _step(node: Any, part: str, path: str) -> tuple[Any, Any]:
    """(container, key) of ``part`` inside ``node``: a mapping key, a list position, or
    the position of the list item whose ``name`` is ``part``."""
    if isinstance(node, dict):
        return node, part
    if isinstance(node, list):
        if part.isdigit() and int(part) < len(node):
            return node, int(part)
        for i, item in enumerate(node):
            if isinstance(item, dict) and item.get("name") == part:
                return node, i
    raise InputError(f"simulation path {path!r}: nothing named {part!r} there")


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set ``value`` at the dotted ``path`` of ``data`` (see the spec module)."""
    parts = path.split(".")
    node: Any = data
    for part in parts[:-1]:
        container, key = _step(node, part, path)
        if isinstance(container, dict) and key not in container:
            container[key] = {}
        node = container[key]
    container, key = _step(node, parts[-1], path)
    container[key] = value


def treated_simulation(hypothesis: Hypothesis, condition: Condition) -> Simulation:
    """The world with ``condition``'s treatment values written into it."""
    spec = hypothesis.simulation
    if spec is None:
        raise InputError(f"study {hypothesis.name!r} has no simulation section")
    data = base_simulation(spec).model_dump(mode="json")
    for v in hypothesis.treatments:
        target = spec.treatments[v.name]
        text = condition.treatments[v.name]
        value = target.values[text] if text in target.values else v.numeric(text)
        set_path(data, target.path, value)
    try:
        return Simulation.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(map(str, first["loc"]))
        raise InputError(
            f"condition {condition.id}: the treated simulation is not valid ({first['msg']} "
            f"at {where}); check the simulation's treatment paths and values"
        ) from None


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def measure(state: Mapping[str, Any], how: Measurement) -> Any:
    """One measured variable's value from a final grounded ``state`` (``None`` = NA)."""
    if how.variable not in state:
        raise InputError(
            f"measurement reads grounded variable {how.variable!r}, which the simulation "
            f"does not have (it has: {', '.join(state)})"
        )
    value = state[how.variable]
    if how.key is not None:
        value = value.get(how.key) if isinstance(value, Mapping) else None
    if how.aggregate == "value":
        return _number(value) if not isinstance(value, str) else value
    items = list(value.values()) if isinstance(value, Mapping) else [value]
    if how.aggregate == "share_true":
        return sum(bool(x) for x in items) / len(items) if items else None
    numbers = [n for n in map(_number, items) if n is not None]
    if not numbers:
        return None
    reduce = {"mean": lambda xs: sum(xs) / len(xs), "sum": sum, "min": min, "max": max}
    return reduce[how.aggregate](numbers)


def measured_values(hypothesis: Hypothesis, state: Mapping[str, Any]) -> dict[str, Any]:
    """Every simulation-measured variable's value."""
    spec = hypothesis.simulation
    measures = spec.measurements if spec is not None else {}
    return {name: measure(state, how) for name, how in measures.items()}


def _merged_health(unit: str, health: Any) -> UnitHealth:
    """One unit's health from an episode's per-entity health."""
    out = UnitHealth(unit=unit)
    for u in health.units:
        out.steps += u.steps
        out.parse_failures += u.parse_failures
        out.invalid_actions += u.invalid_actions
        out.sample_reply = out.sample_reply or u.sample_reply
    return out


async def arun_simulation_condition(
    hypothesis: Hypothesis,
    condition: Condition,
    *,
    model: Any = None,
    gm_model: Any = None,
    seed: int = 0,
    sample_key: str | None = None,
) -> ConditionRun:
    """Run ``condition`` in the study's simulation (see the module docstring); a model
    that fails for good ends the condition with ``error`` set and its events kept."""
    unit = condition.unit_id
    key = sample_key or unit
    sim = treated_simulation(hypothesis, condition)
    asked = [
        q for q in survey_questions(hypothesis) if q.variable not in measured_names(hypothesis)
    ]
    statements: list[dict[str, Any]] = []
    answers: list[Any] = []
    values: dict[str, Any] = {}
    health, error = UnitHealth(unit=unit), None
    try:
        played = await sim.aplay(
            model=model, gm_model=gm_model, seed=child_seed(seed, "simulation", key) or 0,
            sample_key=key,
        )  # fmt: skip
        outcome = played.outcome
        statements = [{"speaker": played.gm.name, "text": e} for e in outcome.events]
        values = measured_values(hypothesis, outcome.final_state)
        if asked:
            entities = {e.name: e for e in played.entities} | {COORDINATOR: played.gm}
            context = "\n".join([sim.premise, "What happened:", *outcome.events])
            answers = await aask_survey(entities, asked, context=context)
            values |= {
                k: v for k, v in survey_values(hypothesis, answers).items() if k not in values
            }
        health = _merged_health(
            unit, episode_health(outcome.log.to_list(), [a.to_dict() for a in answers])
        )
    except (LLMError, ParseFailure) as exc:
        log = getattr(exc, "episode_log", None)
        statements = [
            {"speaker": s.who, "text": s.event} for s in (log.steps if log else []) if s.event
        ]
        kind = "parse_failures" if isinstance(exc, ParseFailure) else "model_errors"
        health.note_failure(kind, getattr(exc, "raw", None) or str(exc))
        error = f"{type(exc).__name__}: {cut(str(exc), 300)}"
    health.unusable = error is not None or all(v is None for v in values.values())
    return ConditionRun(
        condition=condition,
        statements=statements,
        stop_reason="error" if error else "end",
        survey=[a.to_dict() for a in answers],
        values=values,
        calls=health.steps,
        health=health,
        error=error,
    )


def measured_names(hypothesis: Hypothesis) -> set[str]:
    """The measured variables the simulation reads (the rest are asked)."""
    spec = hypothesis.simulation
    return set(spec.measurements) if spec is not None else set()


__all__ = [
    "arun_simulation_condition",
    "base_simulation",
    "measure",
    "measured_values",
    "set_path",
    "treated_simulation",
]
