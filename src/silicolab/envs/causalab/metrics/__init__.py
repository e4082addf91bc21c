"""CausaLab metrics (spec §6): the public names of the package.

The primitives (edge, target-parent, SHD, weight, root, IMEC and consistency scores) are
in :mod:`silicolab.envs.causalab.metrics._core`, the trajectory metrics and the flat
per-episode summary in :mod:`silicolab.envs.causalab.metrics._episode`; both are
re-exported here from their own ``__all__``, so a public name is declared once. Every
metric is per episode; averaging over episodes (macro) is the bench's job. See
``_core`` for where :mod:`silicolab.scm.metrics` is reused and where the spec's
definition differs from it.
"""

from __future__ import annotations

from silicolab.envs.causalab.metrics import _core, _episode
from silicolab.envs.causalab.metrics._core import *  # noqa: F403
from silicolab.envs.causalab.metrics._episode import *  # noqa: F403

__all__: list[str] = []
__all__ += _core.__all__
__all__ += _episode.__all__
