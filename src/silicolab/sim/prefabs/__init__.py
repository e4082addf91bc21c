"""Prefabs: the named entities, game masters and initializers simulation files use.

Importing this package registers the built-in prefabs; see
:mod:`silicolab.sim.prefabs.base` for the contract and :func:`register` for your own.
"""

from silicolab.sim.prefabs import auction as _auction  # noqa: F401  (registers)
from silicolab.sim.prefabs import bargaining as _bargaining  # noqa: F401  (registers)
from silicolab.sim.prefabs import entities as _entities  # noqa: F401  (registers)
from silicolab.sim.prefabs import game_masters as _game_masters  # noqa: F401  (registers)
from silicolab.sim.prefabs import games as _games  # noqa: F401  (registers)
from silicolab.sim.prefabs import initializers as _initializers  # noqa: F401  (registers)
from silicolab.sim.prefabs import interview as _interview  # noqa: F401  (registers)
from silicolab.sim.prefabs import market as _market  # noqa: F401  (registers)
from silicolab.sim.prefabs import phone as _phone  # noqa: F401  (registers)
from silicolab.sim.prefabs import social as _social  # noqa: F401  (registers)
from silicolab.sim.prefabs.base import (
    PREFABS,
    BuildContext,
    Params,
    Prefab,
    find_prefab,
    prefabs_of,
    register,
)

__all__ = ["PREFABS", "BuildContext", "Params", "Prefab", "find_prefab", "prefabs_of", "register"]
