"""Replicating a study across subject models, wordings and seeds, and judging each path.

The statistical core (no model calls): :mod:`.meta` turns each variant's fit into
:class:`VariantEstimate` rows and pools every path across variants with statsmodels'
meta-analysis (fixed and DerSimonian-Laird random effects, tau^2, I^2, Q, a prediction
interval); :mod:`.decomposition` attributes the spread of a path's estimates to the model,
the wording and the seed (OLS + type-2 ANOVA); :mod:`.verdict` names each path "robust",
"model-dependent", "wording-dependent", "seed-dependent", "not supported" or
"heterogeneous", with its rule in words. See ``docs/studies.md``, "Replication".
"""

from __future__ import annotations

from silicolab.studies.replication.decomposition import (
    FACTORS,
    Decomposition,
    variance_decomposition,
)
from silicolab.studies.replication.meta import (
    ALPHA,
    METHOD_RE,
    SIGNIFICANCE,
    Excluded,
    PathMeta,
    Pooled,
    VariantEstimate,
    meta_analyze,
    rows_from_fit,
)
from silicolab.studies.replication.verdict import (
    DOMINANT_SHARE,
    MIN_VARIANTS,
    ROBUST_I2_MAX,
    RULES,
    VERDICTS,
    Verdict,
    verdict,
)

__all__ = [
    "ALPHA",
    "DOMINANT_SHARE",
    "FACTORS",
    "METHOD_RE",
    "MIN_VARIANTS",
    "ROBUST_I2_MAX",
    "RULES",
    "SIGNIFICANCE",
    "VERDICTS",
    "Decomposition",
    "Excluded",
    "PathMeta",
    "Pooled",
    "VariantEstimate",
    "Verdict",
    "meta_analyze",
    "rows_from_fit",
    "variance_decomposition",
    "verdict",
]
