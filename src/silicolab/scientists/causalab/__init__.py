"""CausaLab scientists and the episode runner.

>>> from silicolab.envs import make
>>> from silicolab.scientists.causalab import InterventionalScientist, run_episode
>>> record = run_episode(make("causalab", suite="3nodes", index=0, seed=1),
...                      InterventionalScientist())
>>> record.success
True

``make_scientist("reference" | "random" | "react", model=..., verify=...)`` builds one by
name; every scientist implements :class:`CausaLabScientist` (``async arun(lab, trace)``).
"""

from __future__ import annotations

from typing import Any

from silicolab.core.errors import InputError
from silicolab.scientists.causalab.episode import (
    SCHEMA_VERSION,
    CausaLabScientist,
    EpisodeRecord,
    EpisodeTrace,
    StepRecord,
    arun_episode,
    run_episode,
)
from silicolab.scientists.causalab.random_agent import RandomScientist
from silicolab.scientists.causalab.react import VERIFY_MODES, ReactScientist
from silicolab.scientists.causalab.reference import InterventionalScientist

#: Agent names accepted by :func:`make_scientist` and the benchmark.
AGENTS: tuple[str, ...] = ("reference", "random", "react")


def make_scientist(
    agent: str, *, model: Any = None, verify: str = "none", seed: int | None = 0, **options: Any
) -> CausaLabScientist:
    """The scientist called ``agent``; ``model`` (a spec or a loaded model) is required
    for ``"react"``, ``verify`` applies to it only, ``seed`` to the random baseline."""
    if agent == "reference":
        return InterventionalScientist(**options)
    if agent == "random":
        return RandomScientist(seed=seed)
    if agent == "react":
        if model is None:
            raise InputError("the react scientist needs model= (e.g. 'openai:gpt-5-mini')")
        return ReactScientist(model, verify=verify, seed=seed, **options)  # type: ignore[arg-type]
    raise InputError(f"unknown CausaLab agent {agent!r}; choose from {list(AGENTS)}")


__all__ = [
    "AGENTS",
    "SCHEMA_VERSION",
    "VERIFY_MODES",
    "CausaLabScientist",
    "EpisodeRecord",
    "EpisodeTrace",
    "InterventionalScientist",
    "RandomScientist",
    "ReactScientist",
    "StepRecord",
    "arun_episode",
    "make_scientist",
    "run_episode",
]
