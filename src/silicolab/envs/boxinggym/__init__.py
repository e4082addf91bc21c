"""BoxingGym: ten experimental-design environments for scientist agents (Gandhi et al. 2024).

Each environment is built by id through :func:`silicolab.envs.make`, e.g.
``make("boxinggym/dugongs", goal="direct", prior=True, fidelity="fixed", seed=1)``; the ids are
registered lazily (``"module:function"`` paths) by :mod:`silicolab.envs`, so importing
:mod:`silicolab.envs` loads no numpy-heavy module. The shared interface lives in
:mod:`~silicolab.envs.boxinggym.base`, the EIG/regret machinery in
:mod:`~silicolab.envs.boxinggym.eig`. See ``docs/boxinggym.md``.
"""

from __future__ import annotations

from silicolab.envs.registry import register

#: environment name -> module that defines ``make_<name>``.
ENVIRONMENTS: dict[str, str] = {
    "location_finding": "location_finding",
    "hyperbolic_temporal_discount": "hyperbolic",
    "death_process": "death_process",
    "irt": "irt",
    "dugongs": "dugongs",
    "peregrines": "peregrines",
    "survival": "survival",
    "lotka_volterra": "lotka_volterra",
    "emotion": "emotion",
    "moral_machines": "moral_machines",
}

#: the registered ids, in the spec's order.
ENV_IDS: tuple[str, ...] = tuple(f"boxinggym/{name}" for name in ENVIRONMENTS)


def factory_path(name: str) -> str:
    """The lazy ``"module:function"`` path of environment ``name``."""
    return f"silicolab.envs.boxinggym.{ENVIRONMENTS[name]}:make_{name}"


for _name in ENVIRONMENTS:
    register(f"boxinggym/{_name}", factory_path(_name))
