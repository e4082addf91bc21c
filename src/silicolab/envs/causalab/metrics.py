"""CausaLab metrics (spec §6): the public module.

The primitives (edge, target-parent, SHD, weight, root, IMEC and consistency scores) are
in :mod:`silicolab.envs.causalab.metrics_core`, the trajectory metrics and the flat
per-episode summary in :mod:`silicolab.envs.causalab.metrics_episode`; both are
re-exported here. Every metric is per episode; averaging over episodes (macro) is the
bench's job. See ``metrics_core`` for where :mod:`silicolab.scm.metrics` is reused and
where the spec's definition differs from it.
"""

from __future__ import annotations

from silicolab.envs.causalab.metrics_core import (
    CONSISTENCY_TOL,
    CONSISTENCY_TOL_STRICT,
    WEIGHT_TOL,
    Scores,
    consistency,
    directed_shd,
    edge_prf,
    edge_set,
    imec_of,
    normalize_name,
    root_prf,
    root_prf_names,
    target_parent_prf,
    weight_prf,
)
from silicolab.envs.causalab.metrics_episode import (
    QUAD_WEIGHT_TOL,
    TRAJECTORY_WEIGHT_TOL,
    final_hypothesis,
    formula_error,
    score_episode,
    trajectory_metrics,
)

__all__ = [
    "CONSISTENCY_TOL",
    "CONSISTENCY_TOL_STRICT",
    "QUAD_WEIGHT_TOL",
    "TRAJECTORY_WEIGHT_TOL",
    "WEIGHT_TOL",
    "Scores",
    "consistency",
    "directed_shd",
    "edge_prf",
    "edge_set",
    "final_hypothesis",
    "formula_error",
    "imec_of",
    "normalize_name",
    "root_prf",
    "root_prf_names",
    "score_episode",
    "target_parent_prf",
    "trajectory_metrics",
    "weight_prf",
]
