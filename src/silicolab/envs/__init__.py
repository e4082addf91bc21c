"""Interactive environments for scientist agents, created by id through a registry.

>>> from silicolab.envs import make
>>> lab = make("causalab", suite="4nodes", index=0, seed=1)
>>> lab.phase
'manipulator'
>>> lab.spec.family, make("boxinggym/dugongs", seed=1).spec.goal("direct").label
('causalab', 'Length')

Ids: ``"causalab"`` (the CausaLab crystal lab, :class:`silicolab.envs.causalab.CrystalLab`)
and BoxingGym's ten ``"boxinggym/<name>"`` environments; see :func:`registered`. Every
environment implements :class:`Env` and raises :class:`InvalidAction` (with the text an
agent sees) for actions it refuses; such actions never consume the intervention budget.
"""

from silicolab.envs.base import (
    FIDELITIES,
    SCHEMA_VERSION,
    Env,
    EnvSpec,
    Fidelity,
    GoalSpec,
    check_fidelity,
)
from silicolab.envs.errors import InvalidAction
from silicolab.envs.registry import make, register, registered, remake, resolve, spec, specs

__all__ = [
    "FIDELITIES",
    "SCHEMA_VERSION",
    "Env",
    "EnvSpec",
    "Fidelity",
    "GoalSpec",
    "InvalidAction",
    "check_fidelity",
    "make",
    "register",
    "registered",
    "remake",
    "resolve",
    "spec",
    "specs",
]
