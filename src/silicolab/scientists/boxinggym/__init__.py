"""BoxingGym scientists and the episode protocol.

>>> from silicolab.scientists.boxinggym import BayesianScientist, make_env, play_episode
>>> record = play_episode(make_env("death_process", seed=1), BayesianScientist(seed=1))
>>> record.scores[-1].n_experiments, len(record.regret)
(10, 10)

Scientists: :class:`LLMScientist` (a language model through the text interface, spec §13),
:class:`BayesianScientist` (greedy-EIG designs, Bayes answers; no LLM) and
:class:`RandomDesigner` (random designs, Bayes answers). :class:`LLMNovice` answers from an
explanation alone. ``make_scientist("reference" | "random" | "llm", model=..., seed=...)``
builds one by name (``"boed"`` is the old name of ``"reference"``; ``"apprentice"``, Box's
Apprentice, and ``"statistician"``, its no-LLM reference, need PyMC: see
:mod:`silicolab.scientists.boxinggym.apprentice`); :func:`play_episode`
plays one episode on an environment and returns a :class:`BoxingRecord`;
:func:`silicolab.scientists.run_episode` returns the common record around it.
"""

from __future__ import annotations

from typing import Any

from silicolab.envs.base import SCHEMA_VERSION
from silicolab.scientists.boxinggym.family import FAMILY
from silicolab.scientists.boxinggym.llm import Answer, LLMNovice, LLMScientist, Proposal
from silicolab.scientists.boxinggym.protocol import (
    CHECKPOINTS,
    COMM_LIMIT,
    MAX_TRIES,
    BoxingScientist,
    Novice,
    aplay_episode,
    compute_regret,
    make_env,
    play_episode,
)
from silicolab.scientists.boxinggym.random_designer import RandomDesigner
from silicolab.scientists.boxinggym.record import (
    BoxingRecord,
    CheckpointScore,
    DesignAttempt,
    Outcome,
)
from silicolab.scientists.boxinggym.reference import BayesianScientist

#: Scientist names accepted by :func:`make_scientist` and the benchmark.
AGENTS: tuple[str, ...] = tuple(FAMILY.scientists)


def make_scientist(
    agent: str, *, model: Any = None, seed: int | None = 0, **options: Any
) -> BoxingScientist:
    """The scientist called ``agent``: ``"reference"`` (:class:`BayesianScientist`),
    ``"random"`` (:class:`RandomDesigner`) or ``"llm"`` (:class:`LLMScientist`, which needs
    ``model``, a spec or a loaded model). ``options`` go to the class."""
    return FAMILY.make(agent, model=model, seed=seed, **options)


__all__ = [
    "AGENTS",
    "CHECKPOINTS",
    "COMM_LIMIT",
    "FAMILY",
    "MAX_TRIES",
    "SCHEMA_VERSION",
    "Answer",
    "BayesianScientist",
    "BoxingRecord",
    "BoxingScientist",
    "CheckpointScore",
    "DesignAttempt",
    "LLMNovice",
    "LLMScientist",
    "Novice",
    "Outcome",
    "Proposal",
    "RandomDesigner",
    "aplay_episode",
    "compute_regret",
    "make_env",
    "make_scientist",
    "play_episode",
]
