"""Emotions from outcomes (BoxingGym §11): how a player feels after a wheel-of-fortune spin.

The public names of the family, re-exported from the private modules that hold them:
``_env`` (the environment and its goal), ``_model`` (the latent rating model),
``_participant`` (the participant's sentence) and ``_posterior`` (importance sampling).
The registry creates the environment from this package's ``make_emotion``.
"""

from __future__ import annotations

from silicolab.envs.boxinggym.emotion import _env
from silicolab.envs.boxinggym.emotion._env import *  # noqa: F403

__all__: list[str] = list(_env.__all__)
