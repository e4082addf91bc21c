"""CausaLab scientists and the episode player.

>>> from silicolab.envs import make
>>> from silicolab.scientists.causalab import InterventionalScientist, play_episode
>>> record = play_episode(make("causalab", suite="3nodes", index=0, seed=1),
...                       InterventionalScientist())
>>> record.success
True

``make_scientist("reference" | "random" | "llm", model=..., verify=...)`` builds one by
name (``"react"`` is the old name of ``"llm"``); every scientist implements
:class:`CausaLabScientist` (``async arun(lab, trace)``). :func:`silicolab.scientists.
run_episode` plays any family's episode and returns the common record.
"""

from __future__ import annotations

from typing import Any

from silicolab.envs.base import SCHEMA_VERSION
from silicolab.scientists.causalab.episode import (
    CausaLabRecord,
    CausaLabScientist,
    EpisodeTrace,
    StepRecord,
    aplay_episode,
    play_episode,
)
from silicolab.scientists.causalab.family import FAMILY
from silicolab.scientists.causalab.random_agent import RandomScientist
from silicolab.scientists.causalab.react import VERIFY_MODES, ReactScientist
from silicolab.scientists.causalab.reference import InterventionalScientist

#: Scientist names accepted by :func:`make_scientist` and the benchmark.
AGENTS: tuple[str, ...] = tuple(FAMILY.scientists)


def make_scientist(
    agent: str, *, model: Any = None, verify: str = "none", seed: int | None = 0, **options: Any
) -> CausaLabScientist:
    """The scientist called ``agent``; ``model`` (a spec or a loaded model) is required
    for ``"llm"``, ``verify`` applies to it only, ``seed`` to the random baseline."""
    if FAMILY.canonical(agent) == "llm":
        options["verify"] = verify
    return FAMILY.make(agent, model=model, seed=seed, **options)


__all__ = [
    "AGENTS",
    "FAMILY",
    "SCHEMA_VERSION",
    "VERIFY_MODES",
    "CausaLabRecord",
    "CausaLabScientist",
    "EpisodeTrace",
    "InterventionalScientist",
    "RandomScientist",
    "ReactScientist",
    "StepRecord",
    "aplay_episode",
    "make_scientist",
    "play_episode",
]
