"""CausaLab metrics (spec §6): the public module.

The primitives (edge, target-parent, SHD, weight, root, IMEC and consistency scores) are
in :mod:`silicolab.envs.causalab.metrics_core`, the trajectory metrics and the flat
per-episode summary in :mod:`silicolab.envs.causalab.metrics_episode`; both are
re-exported here from their own ``__all__``, so a public name is declared once. Every
metric is per episode; averaging over episodes (macro) is the bench's job. See
``metrics_core`` for where :mod:`silicolab.scm.metrics` is reused and where the spec's
definition differs from it.
"""

from __future__ import annotations

from silicolab.envs.causalab import metrics_core, metrics_episode
from silicolab.envs.causalab.metrics_core import *  # noqa: F403
from silicolab.envs.causalab.metrics_episode import *  # noqa: F403

__all__: list[str] = []
__all__ += metrics_core.__all__
__all__ += metrics_episode.__all__
