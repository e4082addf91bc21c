"""Scientist agents that design experiments on hidden models and recover them.

One protocol for all families (:class:`Scientist`: ``agent`` and ``model_label``, plus the
hooks of its family's episode player), one registry (each environment's spec names its
:class:`Family`), the same names everywhere (``reference``, ``random``, ``llm``), and one
runner: :func:`run_episode` -> :class:`EpisodeRecord`. :func:`check_family` checks a
family against that contract. CausaLab's scientists live in
:mod:`silicolab.scientists.causalab`, BoxingGym's in :mod:`silicolab.scientists.boxinggym`.
"""

from silicolab.scientists.base import SCIENTISTS, Family, Scientist, family_of, make_scientist
from silicolab.scientists.checks import check_family
from silicolab.scientists.episode import EpisodeRecord, arun_episode, run_episode

__all__ = [
    "SCIENTISTS",
    "EpisodeRecord",
    "Family",
    "Scientist",
    "arun_episode",
    "check_family",
    "family_of",
    "make_scientist",
    "run_episode",
]
