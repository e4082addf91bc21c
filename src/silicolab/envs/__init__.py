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
:func:`check_env` checks an environment against that contract (a :class:`ContractError`
names the first rule it breaks).
"""

from silicolab.envs.base import *  # noqa: F403 - the protocol, exactly base's __all__
from silicolab.envs.base import __all__ as _protocol
from silicolab.envs.checks import check_env
from silicolab.envs.errors import ContractError
from silicolab.envs.registry import make, register, registered, remake, resolve, spec, specs

# The protocol's names are base's; the registry adds how environments are made and found,
# the checker how a new one is tested against the contract.
__all__ = [
    *_protocol,
    "ContractError",
    "check_env",
    "make",
    "register",
    "registered",
    "remake",
    "resolve",
    "spec",
    "specs",
]
