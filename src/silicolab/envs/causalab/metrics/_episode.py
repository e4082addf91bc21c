"""Per-step trajectory metrics (spec §6.10) and the flat per-episode summary (§6.1-6.9)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from silicolab.envs.causalab.dsl import Hypothesis
from silicolab.envs.causalab.metrics._core import (
    CONSISTENCY_TOL,
    CONSISTENCY_TOL_STRICT,
    EdgesLike,
    Scores,
    consistency,
    directed_shd,
    edge_prf,
    edge_set,
    imec_of,
    normalize_name,
    root_prf,
    target_parent_prf,
    weight_prf,
    weight_terms_prf,
)
from silicolab.envs.causalab.suite import TARGET

if TYPE_CHECKING:
    from silicolab.envs.causalab.suite import GraphConfig

__all__ = [
    "QUAD_WEIGHT_TOL",
    "TRAJECTORY_WEIGHT_TOL",
    "final_hypothesis",
    "formula_error",
    "score_episode",
    "structure_scores",
    "trajectory_metrics",
    "weight_scores",
]

TRAJECTORY_WEIGHT_TOL = 0.01  # the visualiser's per-step weight accuracy tolerance (§6.5)
QUAD_WEIGHT_TOL = 0.01  # [R] weight_terms' tolerance: quadratic weights are non-integers
FORMULA_TOL = 5.0  # §6.6 companion metric: hit iff |error| <= 5 Hz (inclusive)

HypothesisLike = Hypothesis | Mapping[str, Any] | None


def _as_hypothesis(h: HypothesisLike) -> Hypothesis | None:
    if h is None or isinstance(h, Hypothesis):
        return h
    return Hypothesis.from_dict(h)


def final_hypothesis(hypotheses: Iterable[HypothesisLike]) -> Hypothesis:
    """The last non-empty hypothesis of a trajectory (§5.3), or ``Hypothesis.EMPTY``."""
    final = Hypothesis.EMPTY
    for item in hypotheses:
        h = _as_hypothesis(item)
        if h is not None and not h.is_empty():
            final = h
    return final


def trajectory_metrics(
    hypotheses: Sequence[HypothesisLike],
    true_edges: EdgesLike,
    true_weights: Mapping[str, float],
    *,
    tol: float = TRAJECTORY_WEIGHT_TOL,
    quad_weights: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """Per-step metrics of a hypothesis trajectory, as the visualiser shows them (§6.10).

    ``hypotheses`` holds one entry per agent step: a :class:`Hypothesis`, a raw hypothesis
    dict (read leniently) or None for a step that failed validation, which carries the
    previous hypothesis forward (the controller keeps the previous state). Each step gets
    all-edge and frequency-edge precision/recall, the number of correct edges, the weight
    accuracy (#correct / #true at tolerance ``tol``, 0.01 as in the visualiser; with
    ``quad_weights``, over both terms as :func:`weight_terms_prf` reads them) and whether
    the hypothesis changed. The result also holds the ``start`` and ``end`` steps, the
    ``best_step`` (most correct edges; earliest on ties) and the ``changed_steps``.
    """
    true = edge_set(true_edges)
    steps: list[dict[str, Any]] = []
    current = Hypothesis.EMPTY
    for t, item in enumerate(hypotheses):
        h = _as_hypothesis(item)
        previous, current = current, (h if h is not None else current)
        edges = edge_prf(current, true)
        freq = target_parent_prf(current, true)
        weights = (
            weight_prf(current.coefficients, true_weights, tol)
            if quad_weights is None
            else weight_terms_prf(current.coefficients, true_weights, quad_weights, tol)
        )
        steps.append(
            {
                "step": t,
                "parse_failure": h is None,
                "all_edge_precision": edges.precision,
                "all_edge_recall": edges.recall,
                "freq_edge_precision": freq.precision,
                "freq_edge_recall": freq.recall,
                "n_correct_edges": edges.n_correct,
                "weight_accuracy": weights.n_correct / weights.n_true if weights.n_true else 1.0,
                "changed": t > 0 and current != previous,
            }
        )
    best = max(steps, key=lambda s: (s["n_correct_edges"], -s["step"])) if steps else None
    return {
        "steps": steps,
        "start": steps[0] if steps else None,
        "end": steps[-1] if steps else None,
        "best_step": best["step"] if best else None,
        "changed_steps": [s["step"] for s in steps if s["changed"]],
    }


def formula_error(
    h: Hypothesis | None, reactor_props: Mapping[str, float], target_frequency: float
) -> dict[str, Any]:
    """§6.6 companion: the equation evaluated on the reactor's properties against f*.

    ``formula_abs_error`` is None when the equation cannot be evaluated; ``formula_hit``
    is True iff the error is <= 5 Hz (inclusive, as the re-eval scorer does).
    """
    pred = h.predict(reactor_props) if h is not None else None
    error = abs(pred - float(target_frequency)) if pred is not None else None
    return {
        "formula_abs_error": error,
        "formula_hit": error is not None and error <= FORMULA_TOL,
    }


def _target_of(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        value = item.get("target_prop", item.get("prop"))
        return str(value) if value is not None else None
    if isinstance(item, Sequence) and item:
        return str(item[0])
    return None


def weight_scores(h: Hypothesis, config: GraphConfig) -> dict[str, Scores]:
    """The two weight metrics of ``h``: ``weight`` (upstream's, §6.5, every family) and
    ``weight_terms`` (ours: both terms of each parent at 0.01 in the quadratic family; in
    the linear family the same number as ``weight``)."""
    published = weight_prf(h.coefficients, config.freq_weights())
    if config.family != "quadratic":
        return {"weight": published, "weight_terms": published}
    quad = {p: u for (p, c), u in config.quad_weights.items() if c == TARGET}
    terms = weight_terms_prf(h.coefficients, config.freq_weights(), quad, QUAD_WEIGHT_TOL)
    return {"weight": published, "weight_terms": terms}


def structure_scores(h: Hypothesis, config: GraphConfig) -> dict[str, Any]:
    """Edge, target-parent, weight (both metrics) and root precision/recall/F1 and the SHD
    of ``h`` against ``config``, as the flat keys :func:`score_episode` records."""
    true_edges = list(config.edges)
    out: dict[str, Any] = {
        "final_hypothesis_empty": h.is_empty(),
        "n_pred_edges": len(edge_set(h)),
        "n_true_edges": len(edge_set(true_edges)),
    }
    for prefix, s in (
        ("all_edge", edge_prf(h, true_edges)),
        ("target_parent", target_parent_prf(h, true_edges)),
        *weight_scores(h, config).items(),
        ("root", root_prf(h, true_edges)),
    ):
        out[f"{prefix}_precision"] = s.precision
        out[f"{prefix}_recall"] = s.recall
        out[f"{prefix}_f1"] = s.f1
    shd = directed_shd(h, true_edges)
    out["shd"] = shd["shd"]
    out["shd_missing"] = shd["missing"]
    out["shd_extra"] = shd["extra"]
    out["shd_reversed"] = shd["reversed"]
    return out


def score_episode(
    final: HypothesisLike,
    config: GraphConfig,
    *,
    success: bool,
    interventions: Iterable[Any],
    commit_hypothesis: HypothesisLike,
    records: Iterable[Mapping[str, Any]],
    reactor_props: Mapping[str, float] | None = None,
    target_frequency: float | None = None,
) -> dict[str, Any]:
    """Every metric of one episode as one flat, JSON-ready dict.

    ``final`` is the final hypothesis (§5.3; None counts as empty); ``interventions`` are
    the interventions the lab applied (``(prop, value)`` pairs as in
    ``CrystalLab.interventions``, or ``{"target_prop": ...}`` dicts); ``commit_hypothesis``
    is the last hypothesis before the first reactor interaction and ``records`` the data it
    is checked against (past_data entries or flat lab records) for §6.9.

    Keys: ``success``; ``all_edge_*`` and ``target_parent_*`` precision/recall/f1;
    ``shd`` with ``shd_missing/extra/reversed``; ``weight_*`` (upstream's published metric:
    the linear coefficient of each parent at 1e-6, in every family) and ``weight_terms_*``
    (ours: both terms at 0.01 in the quadratic family, equal to ``weight_*`` in the linear
    one); ``root_*`` (source-only mode);
    ``imec_final`` (targets = the applied interventions plus any Golden chain targets,
    which are interventions in the agent's data) and ``mec_observational``;
    ``consistency_all`` / ``consistency_fraction`` (5 Hz) and their ``_strict`` (0.01)
    variants with ``consistency_n_records``; ``budget_used`` (number of interventions the
    agent spent, §6.9 "budget used"), ``budget`` and ``n_interventions`` (all applied
    interventions, Golden chain included). With ``reactor_props`` and
    ``target_frequency`` also ``formula_abs_error`` and ``formula_hit`` (§6.6).
    """
    h = _as_hypothesis(final) or Hypothesis.EMPTY
    commit = _as_hypothesis(commit_hypothesis)
    out: dict[str, Any] = {
        "graph_id": config.graph_id,
        "suite": config.suite,
        "success": bool(success),
        **structure_scores(h, config),
    }

    applied = [t for t in (_target_of(i) for i in interventions) if t is not None]
    chain = [step.prop for step in config.golden_chain if step.prop is not None]
    graph = config.graph
    targets = [normalize_name(t) for t in [*chain, *applied]]
    out["imec_final"] = imec_of(graph, [t for t in targets if t in graph])
    out["mec_observational"] = imec_of(graph, [])

    data = list(records)
    loose = consistency(commit, data, CONSISTENCY_TOL)
    strict = consistency(commit, data, CONSISTENCY_TOL_STRICT)
    out["consistency_all"] = loose["all"]
    out["consistency_fraction"] = loose["fraction"]
    out["consistency_all_strict"] = strict["all"]
    out["consistency_fraction_strict"] = strict["fraction"]
    out["consistency_n_records"] = loose["n_records"]

    out["budget"] = config.budget
    out["budget_used"] = len(applied)
    out["n_interventions"] = len(targets)
    if reactor_props is not None and target_frequency is not None:
        out.update(formula_error(h, reactor_props, target_frequency))
    return out
