"""Checkpoint and resume of an episode mid-way.

A checkpoint is one JSON file written atomically (:func:`silicolab.core.files.atomic_write_json`:
a temporary file in the same folder, fsync, rename), so a run killed while writing leaves
the previous checkpoint intact and never a torn file. It holds::

    {"schema_version": 1, "engine": "sequential", "seed": 0, "step": 4,
     "gm": {...}, "entities": {"Alice": {...}, ...}, "log": [...]}

``step`` is the number of completed steps, i.e. the next step to run. The engines in
:mod:`silicolab.sim.engines` write it (``checkpoint=path, checkpoint_every=n``) and read it
back (``resume=True``) into freshly built game master and entities: configuration
(resolvers, tools, models, components) is code and is rebuilt by the caller; only state is
saved. Every entity must offer ``state_dict()`` / ``load_state()`` (both built-in agents do).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from silicolab.core.errors import InputError
from silicolab.core.files import atomic_write_json, read_json_file
from silicolab.core.records import SCHEMA_VERSION
from silicolab.sim.game_master import Attempt, Clock
from silicolab.sim.log import EpisodeLog

if TYPE_CHECKING:
    from silicolab.sim.entity import Entity
    from silicolab.sim.game_master import GameMaster


def rng_state(rng: Any) -> dict[str, Any]:
    """JSON-ready state of a ``random.Random`` or a numpy ``Generator``."""
    bit_generator = getattr(rng, "bit_generator", None)
    if bit_generator is not None:
        return {"kind": "numpy", "state": bit_generator.state}
    version, internal, gauss = rng.getstate()
    return {"kind": "random", "state": [version, list(internal), gauss]}


def set_rng_state(rng: Any, data: Mapping[str, Any]) -> None:
    """Restore :func:`rng_state` output into ``rng`` (of the same kind)."""
    if data["kind"] == "numpy":
        if getattr(rng, "bit_generator", None) is None:
            raise InputError("checkpoint holds a numpy RNG state but gm.rng is not numpy")
        rng.bit_generator.state = data["state"]
        return
    version, internal, gauss = data["state"]
    rng.setstate((version, tuple(internal), gauss))


def gm_state_dict(gm: GameMaster) -> dict[str, Any]:
    """JSON-ready state of a game master: grounded state (with history), events,
    rejections, clock, LLM-call count, termination, pending observations and RNG state."""
    return {
        "entity_names": list(gm.entity_names),
        "state": gm.state.state_dict(),
        "events": list(gm.events),
        "rejections": [[a.actor, a.action, a.step, msg] for a, msg in gm.rejections],
        "clock": gm.clock.state_dict(),
        "llm_calls": gm.llm_calls,
        "done": gm.done,
        "pending": {n: list(q) for n, q in gm._queues.items()},
        "rng": rng_state(gm.rng),
        "memo": gm.memo,
        "notes": list(gm.notes),
    }


def load_gm_state(gm: GameMaster, data: Mapping[str, Any]) -> None:
    """Restore :func:`gm_state_dict` output into a game master built with the same config."""
    gm.entity_names = [str(n) for n in data["entity_names"]]
    gm.state.load_state(data["state"])
    gm.events = [str(e) for e in data["events"]]
    gm.rejections = [(Attempt(a, act, int(s)), str(m)) for a, act, s, m in data["rejections"]]
    gm.clock = Clock.from_state(data["clock"])
    gm.llm_calls = int(data["llm_calls"])
    gm.done = bool(data["done"])
    gm._queues = {str(n): [str(t) for t in q] for n, q in data["pending"].items()}
    set_rng_state(gm.rng, data["rng"])
    gm.memo = dict(data.get("memo") or {})
    gm.notes = [str(n) for n in data.get("notes") or ()]


def entity_states(entities: Sequence[Entity]) -> dict[str, Any]:
    """Every entity's ``state_dict()``, keyed by name."""
    out: dict[str, Any] = {}
    for entity in entities:
        save = getattr(entity, "state_dict", None)
        if save is None:
            raise InputError(f"{entity!r} has no state_dict(); it cannot be checkpointed")
        out[entity.name] = save()
    return out


def load_entity_states(entities: Sequence[Entity], data: Mapping[str, Any]) -> None:
    """Restore :func:`entity_states` output into entities with the same names."""
    names = [e.name for e in entities]
    if sorted(names) != sorted(data):
        raise InputError(f"checkpoint is for entities {sorted(data)}, not {sorted(names)}")
    for entity in entities:
        load = getattr(entity, "load_state", None)
        if load is None:
            raise InputError(f"{entity!r} has no load_state(); it cannot be resumed")
        load(data[entity.name])


def save_checkpoint(
    path: str | Path,
    *,
    step: int,
    engine: str,
    seed: int,
    gm: GameMaster,
    entities: Sequence[Entity],
    log: EpisodeLog,
) -> Path:
    """Write the whole episode state atomically; ``step`` = number of completed steps."""
    return atomic_write_json(
        path,
        {
            "schema_version": SCHEMA_VERSION,
            "engine": engine,
            "seed": seed,
            "step": step,
            "gm": gm_state_dict(gm),
            "entities": entity_states(entities),
            "log": log.to_list(),
        },
        indent=None,
    )


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Read a checkpoint file and check its schema version; a damaged one is an
    :class:`InputError` naming it."""
    fix = "delete it to start the episode again, or restore it from a backup"
    data = read_json_file(path, what="checkpoint", fix=fix)
    if not isinstance(data, dict):
        raise InputError(f"checkpoint {path} is damaged (not a JSON object): {fix}")
    if data.get("schema_version") != SCHEMA_VERSION:
        raise InputError(
            f"checkpoint {path} has schema_version {data.get('schema_version')!r}; "
            f"this version of silicolab reads {SCHEMA_VERSION}"
        )
    return data


def restore(
    path: str | Path,
    gm: GameMaster,
    entities: Sequence[Entity],
    *,
    engine: str,
    seed: int,
) -> tuple[int, EpisodeLog]:
    """Load a checkpoint into fresh ``gm``/``entities``; return (next step, log so far)."""
    data = load_checkpoint(path)
    if data["engine"] != engine or int(data["seed"]) != seed:
        raise InputError(
            f"checkpoint {path} was written by engine={data['engine']!r}, seed={data['seed']}; "
            f"cannot resume it with engine={engine!r}, seed={seed}"
        )
    load_entity_states(entities, data["entities"])
    load_gm_state(gm, data["gm"])
    gm.seed = seed
    return int(data["step"]), EpisodeLog.from_list(data["log"])
