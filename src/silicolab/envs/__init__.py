"""Interactive environments for scientist agents, created by id through a registry.

>>> from silicolab.envs import make
>>> lab = make("causalab", suite="4nodes", index=0, seed=1)
>>> lab.phase
'manipulator'

Ids: ``"causalab"`` (the CausaLab crystal lab, :class:`silicolab.envs.causalab.CrystalLab`).
Environments raise :class:`InvalidAction` (with the text an agent sees) for actions they
refuse; such actions never consume the intervention budget.
"""

# BoxingGym's ten ids, registered as lazy "module:function" paths (imports no numpy code).
import silicolab.envs.boxinggym  # noqa: F401
from silicolab.envs.errors import InvalidAction
from silicolab.envs.registry import make, register, registered

__all__ = ["InvalidAction", "make", "register", "registered"]
