"""Structural causal models: graphs, SCMs, sampling, interventions, estimation, metrics.

Import cost is kept small: the names below are imported on first use
(:mod:`silicolab.core.lazy`), so a simulator that needs only graphs and SCMs loads neither
pandas nor the estimation code; statsmodels, scipy.stats and causal-learn are imported only
by the functions that use them. Adjacency convention: ``A[i, j] = 1`` means ``i -> j``; the
converters in :mod:`silicolab.scm.conventions` translate foreign encodings.
"""

from typing import TYPE_CHECKING

from silicolab.core.lazy import lazy_exports

if TYPE_CHECKING:
    from silicolab.scm.conventions import (
        from_causallearn_graph,
        from_exact_search_matrix,
        from_lingam_matrix,
        from_scp_matrix,
        to_causallearn_matrix,
        to_exact_search_matrix,
        to_lingam_matrix,
        to_scp_matrix,
    )
    from silicolab.scm.equivalence import cpdag, imec_size, markov_equivalent_dags, mec_size
    from silicolab.scm.estimability import NotEstimable, check_estimable
    from silicolab.scm.estimation import EquationFit, ModelComparison, PathEstimates, estimate_paths
    from silicolab.scm.graph import CausalGraph
    from silicolab.scm.mechanisms import (
        CallableMechanism,
        ConstantMechanism,
        LinearMechanism,
        Mechanism,
        Noise,
        QuadraticMechanism,
    )
    from silicolab.scm.metrics import (
        SHD,
        Scores,
        ancestor_roots,
        coefficient_scores,
        edge_scores,
        hamming,
        nhd,
        parent_scores,
        root_scores,
        shd,
        shd_cpdag,
        shd_parts,
        truncate,
    )
    from silicolab.scm.model import SCM
    from silicolab.scm.partial_graph import Mark, PartialGraph
    from silicolab.scm.random_scm import RandomSCMSpec, random_dag, random_scm
    from silicolab.scm.variables import Variable, VariableType

__all__ = [
    "SCM",
    "SHD",
    "CallableMechanism",
    "CausalGraph",
    "ConstantMechanism",
    "EquationFit",
    "LinearMechanism",
    "Mark",
    "Mechanism",
    "ModelComparison",
    "Noise",
    "NotEstimable",
    "PartialGraph",
    "PathEstimates",
    "QuadraticMechanism",
    "RandomSCMSpec",
    "Scores",
    "Variable",
    "VariableType",
    "ancestor_roots",
    "check_estimable",
    "coefficient_scores",
    "cpdag",
    "edge_scores",
    "estimate_paths",
    "from_causallearn_graph",
    "from_exact_search_matrix",
    "from_lingam_matrix",
    "from_scp_matrix",
    "hamming",
    "imec_size",
    "markov_equivalent_dags",
    "mec_size",
    "nhd",
    "parent_scores",
    "random_dag",
    "random_scm",
    "root_scores",
    "shd",
    "shd_cpdag",
    "shd_parts",
    "to_causallearn_matrix",
    "to_exact_search_matrix",
    "to_lingam_matrix",
    "to_scp_matrix",
    "truncate",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__, __all__)
