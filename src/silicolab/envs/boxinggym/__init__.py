"""BoxingGym: ten experimental-design environments for scientist agents (Gandhi et al. 2024).

Each environment is built by id through :func:`silicolab.envs.make`, e.g.
``make("boxinggym/dugongs", goal="direct", prior=True, fidelity="fixed", seed=1)``; the ids,
their goals and titles are registered (lazily) in :mod:`silicolab.envs.registry`, so
importing :mod:`silicolab.envs` loads no numpy-heavy module. The shared interface lives in
:mod:`~silicolab.envs.boxinggym.base`, the EIG/regret machinery in
:mod:`~silicolab.envs.boxinggym.eig`. See ``docs/boxinggym.md``.
"""

from __future__ import annotations

from silicolab.envs.registry import specs

#: the registered ids, in the spec's order.
ENV_IDS: tuple[str, ...] = tuple(s.id for s in specs("boxinggym"))
