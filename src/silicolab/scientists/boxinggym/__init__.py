"""BoxingGym scientists and the episode protocol.

>>> from silicolab.scientists.boxinggym import BayesianScientist, run_boxinggym_episode
>>> record = run_boxinggym_episode("death_process", BayesianScientist(seed=1), seed=1)
>>> record.scores[-1].n_experiments, len(record.regret)
(10, 10)

Scientists: :class:`LLMScientist` (a language model through the text interface, spec §13),
:class:`BayesianScientist` (greedy-EIG designs, Bayes answers; no LLM) and
:class:`RandomDesigner` (random designs, Bayes answers). :class:`LLMNovice` answers from an
explanation alone. ``make_scientist("llm" | "boed" | "random", model=..., seed=...)`` builds
one by name; :func:`run_boxinggym_episode` plays one episode and returns a
:class:`BoxingRecord`.
"""

from __future__ import annotations

from typing import Any

from silicolab.core.errors import InputError
from silicolab.scientists.boxinggym.llm import Answer, LLMNovice, LLMScientist, Proposal
from silicolab.scientists.boxinggym.protocol import (
    CHECKPOINTS,
    COMM_LIMIT,
    MAX_TRIES,
    BoxingScientist,
    Novice,
    arun_boxinggym_episode,
    compute_regret,
    make_env,
    run_boxinggym_episode,
)
from silicolab.scientists.boxinggym.random_designer import RandomDesigner
from silicolab.scientists.boxinggym.record import (
    SCHEMA_VERSION,
    BoxingRecord,
    CheckpointScore,
    DesignAttempt,
    Outcome,
)
from silicolab.scientists.boxinggym.reference import BayesianScientist

#: Agent names accepted by :func:`make_scientist` and the benchmark.
AGENTS: tuple[str, ...] = ("boed", "random", "llm")


def make_scientist(
    agent: str, *, model: Any = None, seed: int | None = 0, **options: Any
) -> BoxingScientist:
    """The scientist called ``agent``: ``"boed"`` (:class:`BayesianScientist`),
    ``"random"`` (:class:`RandomDesigner`) or ``"llm"`` (:class:`LLMScientist`, which needs
    ``model``, a spec or a loaded model). ``options`` go to the class."""
    if agent == "boed":
        return BayesianScientist(seed=seed, **options)
    if agent == "random":
        return RandomDesigner(seed=seed, **options)
    if agent == "llm":
        if model is None:
            raise InputError("the llm scientist needs model= (e.g. 'openai:gpt-4o')")
        return LLMScientist(model, **options)
    raise InputError(f"unknown BoxingGym agent {agent!r}; choose from {list(AGENTS)}")


__all__ = [
    "AGENTS",
    "CHECKPOINTS",
    "COMM_LIMIT",
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
    "arun_boxinggym_episode",
    "compute_regret",
    "make_env",
    "make_scientist",
    "run_boxinggym_episode",
]
