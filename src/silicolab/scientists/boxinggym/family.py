"""BoxingGym's scientists and episode player as one :class:`~silicolab.scientists.Family`."""

from __future__ import annotations

from typing import Any

from silicolab.scientists.base import Family
from silicolab.scientists.boxinggym.protocol import aplay_episode
from silicolab.scientists.boxinggym.record import BoxingRecord


def _reference(*, model: Any = None, seed: int | None = 0, **options: Any) -> Any:
    from silicolab.scientists.boxinggym.reference import BayesianScientist

    return BayesianScientist(seed=seed, **options)


def _random(*, model: Any = None, seed: int | None = 0, **options: Any) -> Any:
    from silicolab.scientists.boxinggym.random_designer import RandomDesigner

    return RandomDesigner(seed=seed, **options)


def _llm(*, model: Any, seed: int | None = 0, **options: Any) -> Any:
    from silicolab.scientists.boxinggym.llm import LLMScientist

    return LLMScientist(model, **options)


def _apprentice(*, model: Any, seed: int | None = 0, **options: Any) -> Any:
    from silicolab.scientists.boxinggym.apprentice import ApprenticeScientist, require_ppl

    require_ppl()
    return ApprenticeScientist(model, **options)


def _statistician(*, model: Any = None, seed: int | None = 0, **options: Any) -> Any:
    from silicolab.scientists.boxinggym.apprentice import require_ppl
    from silicolab.scientists.boxinggym.apprentice.reference_statistician import (
        ReferenceStatistician,
    )

    require_ppl("statistician")
    return ReferenceStatistician(seed=seed, **options)


FAMILY = Family(
    name="boxinggym",
    scientists={
        "reference": _reference,
        "random": _random,
        "llm": _llm,
        "apprentice": _apprentice,
        "statistician": _statistician,
    },
    aliases={"boed": "reference"},
    needs_model=frozenset({"llm", "apprentice"}),
    play=aplay_episode,
    record_type=BoxingRecord,
)
