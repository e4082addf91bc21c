"""Seeding without global state.

Every stochastic entry point takes ``seed: int | None`` and derives child generators
from :class:`numpy.random.SeedSequence`. Per-unit seeds come from the unit's *identity*
(a string), not from the order in which units happen to run, so parallel and resumed
runs reproduce sequential ones.
"""

from __future__ import annotations

import hashlib

import numpy as np


def stable_hash(text: str) -> int:
    """A 64-bit hash of ``text`` that is the same in every process and Python version
    (unlike the built-in :func:`hash`, which is salted per process)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def seed_sequence(seed: int | None, *identity: str | int) -> np.random.SeedSequence:
    """The seed sequence for a unit named by ``identity`` under a run's ``seed``.

    ``seed_sequence(7, "episode", 3)`` is the same wherever and whenever it is computed.
    With ``seed=None`` fresh OS entropy is used (non-reproducible by request).
    """
    if seed is None:
        return np.random.SeedSequence()
    keys = [stable_hash(str(part)) for part in identity]
    return np.random.SeedSequence([int(seed), *keys])


def rng(seed: int | None, *identity: str | int) -> np.random.Generator:
    """A NumPy generator for the unit named by ``identity`` (see :func:`seed_sequence`)."""
    return np.random.default_rng(seed_sequence(seed, *identity))


def child_seed(seed: int | None, *identity: str | int) -> int | None:
    """A plain integer seed for the unit named by ``identity`` (``None`` stays ``None``),
    for libraries that want an ``int`` rather than a generator."""
    if seed is None:
        return None
    return int(seed_sequence(seed, *identity).generate_state(1, dtype=np.uint32)[0])
