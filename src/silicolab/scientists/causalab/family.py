"""CausaLab's scientists and episode player as one :class:`~silicolab.scientists.Family`."""

from __future__ import annotations

from typing import Any

from silicolab.scientists.base import Family
from silicolab.scientists.causalab.episode import CausaLabRecord, aplay_episode


def _reference(*, model: Any = None, seed: int | None = 0, **options: Any) -> Any:
    from silicolab.scientists.causalab.reference import InterventionalScientist

    return InterventionalScientist(**options)


def _random(*, model: Any = None, seed: int | None = 0, **options: Any) -> Any:
    from silicolab.scientists.causalab.random_agent import RandomScientist

    return RandomScientist(seed=seed, **options)


def _llm(*, model: Any, seed: int | None = 0, verify: str = "none", **options: Any) -> Any:
    from silicolab.scientists.causalab.react import ReactScientist

    return ReactScientist(model, verify=verify, seed=seed, **options)  # type: ignore[arg-type]


FAMILY = Family(
    name="causalab",
    scientists={"reference": _reference, "random": _random, "llm": _llm},
    aliases={"react": "llm"},
    play=aplay_episode,
    record_type=CausaLabRecord,
)
