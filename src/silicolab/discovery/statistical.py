"""Statistical causal discovery through causal-learn, behind one signature:
``method(data, *, knowledge=None, **params) -> GraphResult``.

Every wrapper checks the table (numeric, no missing values), rejects parameter names the
backend would not understand (causal-learn silently swallows unknown keywords, which is how
SCP's ``independence_test_method=`` went unnoticed), translates :class:`Knowledge` into the
backend's encoding, runs the backend quietly and converts its output to silicolab's
convention with the converters of :mod:`silicolab.scm.conventions`.

Preprocessing follows SCP/MAC (spec §2.2): PC, FCI, GES, Exact Search and CD-NOD see data
standardized with ddof = 0 (scikit-learn's ``StandardScaler``); the LiNGAMs see raw data.
causal-learn is imported inside each function so importing this module stays cheap.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import time
from collections.abc import Collection, Iterator, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from silicolab.core.errors import InputError
from silicolab.discovery.datasets import check_data
from silicolab.discovery.knowledge import Knowledge, apply_knowledge_filter
from silicolab.discovery.result import GraphResult
from silicolab.scm.conventions import (
    from_causallearn_graph,
    from_exact_search_matrix,
    from_lingam_matrix,
    from_scp_matrix,
)
from silicolab.scm.graph import CausalGraph
from silicolab.scm.partial_graph import PartialGraph

CI_TESTS = ("fisherz", "chisq", "gsq", "kci", "fastkci", "rcit")
#: Keywords causal-learn hands on to its conditional-independence tests.
CI_TEST_PARAMS = frozenset(
    {"cache_path", "kernelX", "kernelY", "kernelZ", "null_ss", "approx", "use_gp", "est_width"}
    | {"polyd", "kwidthx", "kwidthy", "kwidthz", "K", "J", "num_f", "num_f2", "rcit"}
)
PC_PARAMS = frozenset({"uc_rule", "uc_priority", "max_k", "verbose"})
FCI_PARAMS = frozenset({"depth", "max_path_length", "verbose"})
_CONSTRAINT = "causallearn.search.ConstraintBased."  # where PC and FCI live
GES_PARAMS = frozenset({"maxP", "parameters"})
EXACT_PARAMS = frozenset(
    {"use_path_extension", "use_k_cycle_heuristic", "k", "verbose", "max_parents"}
)
DIRECT_LINGAM_PARAMS = frozenset({"apply_prior_knowledge_softly"})
ICA_LINGAM_PARAMS = frozenset({"max_iter"})
CDNOD_PARAMS = frozenset({"stable", "uc_rule", "uc_priority", "verbose"})


# -- shared steps ---------------------------------------------------------------------------


def _prepare(
    method: str,
    data: pd.DataFrame,
    knowledge: Knowledge | None,
    params: Mapping[str, Any],
    allowed: Collection[str],
) -> tuple[list[str], np.ndarray]:
    """The column names and the numeric array of ``data``, after checking the data, the
    knowledge (a :class:`Knowledge` over those columns) and the extra ``params``."""
    check_data(data, source=f"{method}: the data")
    names = [str(c) for c in data.columns]
    if knowledge is not None:
        if not isinstance(knowledge, Knowledge):
            raise InputError(
                f"{method}: knowledge must be a silicolab Knowledge object, got "
                f"{type(knowledge).__name__}; build one with Knowledge(required=..., forbidden=...)"
            )
        knowledge.validate(names)
    _check_params(method, params, allowed)
    return names, data.to_numpy(dtype=float)


def _check_params(method: str, params: Mapping[str, Any], allowed: Collection[str]) -> None:
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise InputError(
            f"{method} does not accept parameter(s) {unknown}; besides its named arguments it "
            f"accepts {sorted(allowed) or 'no others'}. Check the spelling"
        )


def _check_choice(method: str, name: str, value: Any, choices: Collection[str]) -> None:
    if value not in choices:
        raise InputError(f"{method}: {name}={value!r} is not supported; use one of {list(choices)}")


def _check_ci(method: str, indep_test: str, alpha: float) -> None:
    """The conditional-independence test's name and level, for the constraint-based methods."""
    _check_choice(method, "indep_test", indep_test, CI_TESTS)
    if not 0 < float(alpha) < 1:
        raise InputError(f"{method}: alpha must be between 0 and 1 (exclusive); got {alpha}")


def _constraint_search(
    method: str,
    data: pd.DataFrame,
    knowledge: Knowledge | None,
    params: Mapping[str, Any],
    allowed: frozenset[str],
    *,
    search: tuple[str, str],
    alpha: float,
    indep_test: tuple[str, str],
    standardize: bool,
    **options: Any,
) -> tuple[list[str], Any]:
    """The column names and what causal-learn's ``search`` (module, function) returns for
    PC and FCI: the inputs checked by :func:`_prepare`, ``indep_test`` (the search's
    keyword for it, the test's name), the array standardized on request, the knowledge as
    ``BackgroundKnowledge``, the search's prints swallowed; ``options`` go to the search.
    causal-learn is imported only once the input is good."""
    names, x = _prepare(method, data, knowledge, params, allowed | CI_TEST_PARAMS)
    _check_ci(method, indep_test[1], alpha)
    bk = knowledge.to_causallearn(names) if knowledge else None
    x = standardize_columns(x) if standardize else x
    run = getattr(importlib.import_module(search[0]), search[1])
    with _quiet():
        out = run(
            x,
            alpha=alpha,
            background_knowledge=bk,
            show_progress=False,
            node_names=names,
            **{indep_test[0]: indep_test[1]},
            **options,
            **params,
        )
    return names, out


def standardize_columns(x: np.ndarray) -> np.ndarray:
    """Zero mean, unit variance per column with ddof = 0, exactly as SCP's
    ``StandardScaler().fit_transform`` (bit-for-bit: Exact Search's tie-breaks notice)."""
    from sklearn.preprocessing import StandardScaler

    return StandardScaler().fit_transform(x)


@contextlib.contextmanager
def _quiet(*, stderr: bool = False) -> Iterator[None]:
    """Swallow causal-learn's prints (FCI lists every edge it orients; CD-NOD draws progress
    bars on stderr whatever ``show_progress`` says): they would flood a terminal or an LLM's
    context."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
        if stderr:
            stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
        yield


def _post_filter(
    graph: CausalGraph | PartialGraph, knowledge: Knowledge | None, why: str
) -> tuple[CausalGraph | PartialGraph, list[str]]:
    """``graph`` with ``knowledge`` applied afterwards (for a backend that takes none) and
    the notes saying so (``why``) and what it changed; unchanged without knowledge."""
    if not knowledge:
        return graph, []
    graph, filter_notes = apply_knowledge_filter(graph, knowledge)
    return graph, [why, *filter_notes]


# -- constraint-based ----------------------------------------------------------------------


def pc(
    data: pd.DataFrame,
    *,
    knowledge: Knowledge | None = None,
    alpha: float = 0.05,
    indep_test: str = "fisherz",
    stable: bool = True,
    standardize: bool = True,
    **params: Any,
) -> GraphResult:
    """PC (Spirtes et al.): a CPDAG from conditional-independence tests. Knowledge is
    native (causal-learn ``BackgroundKnowledge``). Extra ``params``: ``uc_rule``,
    ``uc_priority``, ``max_k``, ``verbose`` and the CI test's own options."""
    start = time.perf_counter()
    names, cg = _constraint_search(
        "pc", data, knowledge, params, PC_PARAMS, search=(_CONSTRAINT + "PC", "pc"),
        alpha=alpha, indep_test=("indep_test", indep_test), standardize=standardize, stable=stable,
    )  # fmt: skip
    effective = dict(alpha=alpha, indep_test=indep_test, stable=stable, standardize=standardize)
    return GraphResult.since(
        start, "pc", from_causallearn_graph(cg.G, names), raw=cg, params=effective | params
    )


def fci(
    data: pd.DataFrame,
    *,
    knowledge: Knowledge | None = None,
    alpha: float = 0.05,
    indep_test: str = "fisherz",
    standardize: bool = True,
    **params: Any,
) -> GraphResult:
    """FCI: a PAG (circle marks allowed) that tolerates latent confounders. Knowledge is
    native. Extra ``params``: ``depth``, ``max_path_length``, ``verbose``, CI options."""
    start = time.perf_counter()
    names, (g, edges) = _constraint_search(
        "fci", data, knowledge, params, FCI_PARAMS, search=(_CONSTRAINT + "FCI", "fci"),
        alpha=alpha, indep_test=("independence_test_method", indep_test), standardize=standardize,
    )  # fmt: skip
    effective = dict(alpha=alpha, indep_test=indep_test, standardize=standardize)
    graph = from_causallearn_graph(g, names)
    return GraphResult.since(start, "fci", graph, raw=(g, edges), params=effective | params)


def cdnod(
    data: pd.DataFrame,
    *,
    knowledge: Knowledge | None = None,
    context: str | np.ndarray | None = None,
    alpha: float = 0.05,
    indep_test: str = "fisherz",
    standardize: bool = True,
    **params: Any,
) -> GraphResult:
    """CD-NOD: PC on the data plus a context variable that indexes distribution shifts.

    ``context`` is a column name (that column becomes the context and leaves the graph), an
    array with one value per row, or ``None`` for the row index (the spec's default: shifts
    over the recording order). The context node is dropped from the returned graph.
    """
    start = time.perf_counter()
    frame, label = data, "row index"
    if isinstance(context, str):
        if context not in data.columns:
            raise InputError(
                f"cdnod: context column {context!r} is not in the data {list(data.columns)}"
            )
        frame, label = data.drop(columns=[context]), context
    names, x = _prepare("cdnod", frame, knowledge, params, CDNOD_PARAMS | CI_TEST_PARAMS)
    _check_ci("cdnod", indep_test, alpha)
    if context is None:
        c_indx = np.arange(len(x), dtype=float)
    elif isinstance(context, str):
        c_indx = data[context].to_numpy(dtype=float)
    else:
        c_indx, label = np.asarray(context, dtype=float).reshape(-1), "array"
        if len(c_indx) != len(x) or not np.isfinite(c_indx).all():
            raise InputError(
                f"cdnod: the context array needs one finite value per row ({len(x)}); "
                f"got {len(c_indx)} values"
            )
    from causallearn.search.ConstraintBased.CDNOD import cdnod as causallearn_cdnod

    # CD-NOD takes no node names: its nodes are X1..Xn, then the context X{n+1}.
    aliases = [f"X{i + 1}" for i in range(len(names))]
    bk = knowledge.to_causallearn(names, node_names=aliases) if knowledge else None
    x = standardize_columns(x) if standardize else x
    with _quiet(stderr=True):
        cg = causallearn_cdnod(
            x,
            c_indx.reshape(-1, 1),
            alpha=alpha,
            indep_test=indep_test,
            background_knowledge=bk,
            show_progress=False,
            **params,
        )
    n = len(names)
    graph = from_causallearn_graph(np.asarray(cg.G.graph)[:n, :n], names)
    effective = dict(context=label, alpha=alpha, indep_test=indep_test, standardize=standardize)
    notes = [f"context node ({label}) dropped from the graph"]
    return GraphResult.since(start, "cdnod", graph, raw=cg, params=effective | params, notes=notes)


# -- score-based ----------------------------------------------------------------------------


def ges(
    data: pd.DataFrame,
    *,
    knowledge: Knowledge | None = None,
    score_func: str = "local_score_BIC",
    standardize: bool = True,
    **params: Any,
) -> GraphResult:
    """GES: a CPDAG by greedy search over equivalence classes. causal-learn's GES takes no
    knowledge, so knowledge is applied afterwards by :func:`apply_knowledge_filter` (the
    notes say what it changed). Extra ``params``: ``maxP``, ``parameters``."""
    start = time.perf_counter()
    names, x = _prepare("ges", data, knowledge, params, GES_PARAMS)
    from causallearn.search.ScoreBased.GES import ges as causallearn_ges

    x = standardize_columns(x) if standardize else x
    with _quiet():
        record = causallearn_ges(x, score_func=score_func, node_names=names, **params)
    graph = from_causallearn_graph(record["G"], names)
    graph, notes = _post_filter(
        graph, knowledge, "GES has no native knowledge: applied as a post-filter on its CPDAG"
    )
    effective = dict(score_func=score_func, standardize=standardize)
    return GraphResult.since(
        start, "ges", graph, raw=record, params=effective | params, notes=notes
    )


def exact(
    data: pd.DataFrame,
    *,
    knowledge: Knowledge | None = None,
    search_method: str = "astar",
    standardize: bool = True,
    scp_orientation_quirk: bool = False,
    **params: Any,
) -> GraphResult:
    """Exact Search (BIC-optimal DAG by A* or dynamic programming).

    ``bic_exact_search`` returns ``dag[parent, child]``; it is read that way by default.
    ``scp_orientation_quirk=True`` reads it as row = effect, as SCP and MAC did, which
    reverses every edge — only for reproducing their published numbers. Under the quirk
    the knowledge matrices are transposed as well (as SCP passed its row = effect matrices),
    so the *reported* graph still honours the knowledge. Extra ``params``:
    ``use_path_extension``, ``use_k_cycle_heuristic``, ``k``, ``verbose``, ``max_parents``.
    """
    start = time.perf_counter()
    names, x = _prepare("exact", data, knowledge, params, EXACT_PARAMS)
    _check_choice("exact", "search_method", search_method, ("astar", "dp"))
    from causallearn.search.ScoreBased.ExactSearch import bic_exact_search

    notes = []
    if standardize:
        x = standardize_columns(x)
    else:
        x = x - x.mean(axis=0)
        notes.append("data centred (Exact Search's BIC regression has no intercept)")
    super_graph, include = knowledge.to_exact_search(names) if knowledge else (None, None)
    if scp_orientation_quirk:
        super_graph = None if super_graph is None else super_graph.T
        include = None if include is None else include.T
    with _quiet():
        dag, stats = bic_exact_search(
            x, super_graph=super_graph, search_method=search_method, include_graph=include, **params
        )
    if scp_orientation_quirk:
        graph = from_scp_matrix(dag, names)
        notes.append(
            "scp_orientation_quirk: dag_est read as row = effect like SCP/MAC, so every edge "
            "is reversed relative to the BIC-optimal DAG"
        )
    else:
        graph = from_exact_search_matrix(dag, names)
    effective = dict(
        search_method=search_method,
        standardize=standardize,
        scp_orientation_quirk=scp_orientation_quirk,
    )
    return GraphResult.since(
        start, "exact", graph, raw=(dag, stats), params=effective | params, notes=notes
    )


# -- functional causal models ---------------------------------------------------------------


def exact_scp(
    data: pd.DataFrame, *, knowledge: Knowledge | None = None, **params: Any
) -> GraphResult:
    """Exact Search read the way SCP and MAC read it (every edge reversed): the method behind
    the published "Exact Search" rows, kept only to reproduce them. Use :func:`exact`."""
    result = exact(data, knowledge=knowledge, scp_orientation_quirk=True, **params)
    return replace(result, method="exact_scp")


def direct_lingam(
    data: pd.DataFrame,
    *,
    knowledge: Knowledge | None = None,
    measure: str = "pwling",
    random_state: int | None = None,
    standardize: bool = False,
    **params: Any,
) -> GraphResult:
    """DirectLiNGAM (causal-learn's bundled copy), on raw data by default as SCP ran it.
    Knowledge becomes ``prior_knowledge`` with path semantics (:meth:`Knowledge.to_lingam`).
    Extra ``params``: ``apply_prior_knowledge_softly``."""
    start = time.perf_counter()
    names, x = _prepare("direct_lingam", data, knowledge, params, DIRECT_LINGAM_PARAMS)
    _check_choice("direct_lingam", "measure", measure, ("pwling", "kernel"))
    from causallearn.search.FCMBased.lingam import DirectLiNGAM

    pk = knowledge.to_lingam(names) if knowledge else None
    x = standardize_columns(x) if standardize else x
    model = DirectLiNGAM(random_state=random_state, prior_knowledge=pk, measure=measure, **params)
    model.fit(x)
    graph = from_lingam_matrix(model.adjacency_matrix_, names)
    effective = dict(measure=measure, random_state=random_state, standardize=standardize)
    return GraphResult.since(start, "direct_lingam", graph, raw=model, params=effective | params)


def ica_lingam(
    data: pd.DataFrame,
    *,
    knowledge: Knowledge | None = None,
    random_state: int | None = 0,
    standardize: bool = False,
    **params: Any,
) -> GraphResult:
    """ICA-LiNGAM (FastICA, so ``random_state`` fixes the result). It takes no knowledge,
    so knowledge is applied as a post-filter (:func:`apply_knowledge_filter`). Extra
    ``params``: ``max_iter``."""
    start = time.perf_counter()
    names, x = _prepare("ica_lingam", data, knowledge, params, ICA_LINGAM_PARAMS)
    from causallearn.search.FCMBased.lingam import ICALiNGAM

    x = standardize_columns(x) if standardize else x
    model = ICALiNGAM(random_state=random_state, **params)
    model.fit(x)
    graph: CausalGraph | PartialGraph = from_lingam_matrix(model.adjacency_matrix_, names)
    graph, notes = _post_filter(
        graph, knowledge, "ICA-LiNGAM has no native knowledge: applied as a post-filter"
    )
    effective = dict(random_state=random_state, standardize=standardize)
    return GraphResult.since(
        start, "ica_lingam", graph, raw=model, params=effective | params, notes=notes
    )


__all__ = [
    "apply_knowledge_filter",
    "cdnod",
    "direct_lingam",
    "exact",
    "fci",
    "ges",
    "ica_lingam",
    "pc",
    "standardize_columns",
]
