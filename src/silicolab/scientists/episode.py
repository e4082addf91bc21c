"""One episode of any scientist on any environment: :func:`run_episode` -> :class:`EpisodeRecord`.

>>> from silicolab.envs import make
>>> from silicolab.scientists import make_scientist, run_episode
>>> lab = make("causalab", suite="3nodes", index=0, seed=1)
>>> record = run_episode(lab, make_scientist(lab, "reference"))
>>> record.env, record.scientist, record.scores["success"], record.health.failed_steps
('causalab', 'reference', 1.0, 0)

The record's common fields are the same for every family; what only one family has (the
CausaLab metrics, the BoxingGym checkpoints and regret, ...) is in ``detail``, the
family record's ``to_dict()``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from silicolab.core.sync import sync_twin
from silicolab.envs.base import SCHEMA_VERSION
from silicolab.runs.health import UnitHealth
from silicolab.scientists.base import family_of

_REPR_SCORES = 3  # scores shown in an EpisodeRecord's repr


@dataclass(kw_only=True, repr=False)
class EpisodeRecord:
    """One episode: which environment, scientist, model and seed; how many steps it took;
    its headline ``scores``; its :class:`~silicolab.runs.UnitHealth` counters; the LLM
    ``usage``; and the family's own record in ``detail``."""

    env: str
    family: str
    scientist: str
    model: str
    seed: int | None
    fidelity: str
    steps: int
    scores: dict[str, float]
    health: UnitHealth
    usage: dict[str, Any] = field(default_factory=dict)
    runtime_s: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)
    schema_version: str = SCHEMA_VERSION

    def __repr__(self) -> str:
        """A few lines' worth: who played what, how long, the first scores (``detail``, the
        whole family record, is left out)."""
        scores = list(self.scores.items())
        shown = ", ".join(f"{k!r}: {v:.4g}" for k, v in scores[:_REPR_SCORES])
        more = f", … {len(scores) - _REPR_SCORES} more" if len(scores) > _REPR_SCORES else ""
        return (
            f"EpisodeRecord(env={self.env!r}, scientist={self.scientist!r}, seed={self.seed!r}, "
            f"steps={self.steps}, scores={{{shown}{more}}}, "
            f"failed_steps={self.health.failed_steps})"
        )

    def header(self) -> dict[str, Any]:
        """Every field but ``detail``, JSON-ready."""
        data = {k: v for k, v in self.__dict__.items() if k != "detail"}
        data["health"] = self.health.to_dict()
        return data

    def to_dict(self) -> dict[str, Any]:
        return {**self.header(), "detail": self.detail}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EpisodeRecord:
        values = dict(data)
        values["health"] = UnitHealth.from_dict(values["health"])
        return cls(**values)

    def to_event(self) -> dict[str, Any]:
        """The event a bench appends: the family record as ``record`` (as before), the
        common fields as ``episode``."""
        return {"record": self.detail, "episode": self.header()}

    @classmethod
    def from_event(cls, data: Mapping[str, Any]) -> EpisodeRecord:
        return cls.from_dict({**data["episode"], "detail": data["record"]})

    def family_record(self) -> Any:
        """The family's typed record rebuilt from ``detail``."""
        family = family_of(self.family)
        return family.record_type.from_dict(self.detail)


async def arun_episode(
    env: Any, scientist: Any, *, seed: int | None = None, unit: str = "", **options: Any
) -> EpisodeRecord:
    """Play one episode of ``scientist`` on ``env`` (built by :func:`silicolab.envs.make`)
    with its family's player; ``seed`` resets ``env`` to that seed first when it differs,
    ``options`` go to the player (e.g. BoxingGym's ``steps``), ``unit`` names the health
    counters (default ``"<env>/<scientist>/seed=<seed>"``)."""
    family = family_of(env)
    if seed is not None and seed != env.seed:
        env.reset(seed)
    record = await family.play(env, scientist, **options)
    summary = record.summary()
    name = unit or f"{env.spec.id}/{scientist.agent}/seed={env.seed}"
    health = UnitHealth(unit=name, **summary["health"])
    return EpisodeRecord(
        env=env.spec.id,
        family=family.name,
        scientist=str(scientist.agent),
        model=str(scientist.model_label),
        seed=env.seed,
        fidelity=str(env.fidelity),
        steps=int(summary["steps"]),
        scores={k: float(v) for k, v in summary["scores"].items()},
        health=health,
        usage=dict(summary.get("usage") or {}),
        runtime_s=float(summary.get("runtime_s", 0.0)),
        detail=record.to_dict(),
    )


run_episode = sync_twin(arun_episode)


__all__ = ["EpisodeRecord", "arun_episode", "run_episode"]
