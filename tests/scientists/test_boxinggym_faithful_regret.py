"""Faithful EI regret re-simulates from an environment with new hidden parameters."""

from __future__ import annotations

import functools

from silicolab.envs import make, remake
from silicolab.envs.boxinggym.eig import ei_regret
from silicolab.scientists.boxinggym import compute_regret
from silicolab.scientists.boxinggym.protocol import regret_env_seed


def test_faithful_regret_uses_new_hidden_parameters() -> None:
    env = make("boxinggym/death_process", seed=3, fidelity="faithful")
    for design in ("0.3", "0.9", "1.5"):
        env.run(design)
    fresh_seed = regret_env_seed(env.seed)
    assert fresh_seed != env.seed
    assert remake(env, seed=fresh_seed).theta["theta"][0] != env.theta["theta"][0]
    got = compute_regret(env, data=list(env.data), n_random=5)

    def regret_from(factory):
        designs = [d for d, _ in env.data]
        return ei_regret(factory, designs, None, n_random=5, seed=env.seed, estimator="faithful")

    new = regret_from(functools.partial(remake, env, seed=fresh_seed))
    same = regret_from(functools.partial(remake, env))  # before: the episode's own theta
    assert got["eigs_regret"] == new["eigs_regret"]
    assert got["eigs_regret"] != same["eigs_regret"]
