"""Predator–prey (BoxingGym §10): deterministic Lotka–Volterra populations at chosen times.

The public names of the family, re-exported from the private modules that hold them:
``_env`` (the environment and its goal), ``_model`` (dynamics, priors, the Taylor-series
integrator), ``_posterior`` (ABC-SMC to exactness) and ``_eig`` (the outcome entropy).
The registry creates the environment from this package's ``make_lotka_volterra``.
"""

from __future__ import annotations

from silicolab.envs.boxinggym.lotka_volterra import _env
from silicolab.envs.boxinggym.lotka_volterra._env import *  # noqa: F403

__all__: list[str] = list(_env.__all__)
