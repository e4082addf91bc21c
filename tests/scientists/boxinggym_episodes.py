"""One BoxingGym episode on a fresh environment: the helper both scientist test modules use."""

from __future__ import annotations

from typing import Any

from silicolab.scientists.boxinggym import BoxingRecord, make_env, play_episode


def episode(
    env: str,
    scientist: Any,
    *,
    goal: str = "direct",
    prior: bool = True,
    fidelity: str = "fixed",
    seed: int | None = 1,
    **options: Any,
) -> BoxingRecord:
    """One episode on a fresh environment (its options apart from the episode's)."""
    made = make_env(env, goal=goal, prior=prior, fidelity=fidelity, seed=seed)
    return play_episode(made, scientist, **options)
