"""CausaLab per-episode metric primitives (spec §6.2-6.9); macro averaging is the bench's job.

Built on :mod:`silicolab.scm.metrics` where the definitions agree:

* P/R/F1 counts use :func:`silicolab.scm.metrics.scores`, whose empty-set conventions are
  exactly §6's (precision of an empty prediction is 1 iff the truth is empty; recall of an
  empty truth is 1 iff the prediction is empty).
* All-edge and target-parent scores use ``edge_scores`` / ``parent_scores`` after the
  frequency aliases have been normalised (§5.1; other names stay case-sensitive).
* Root scores use ``ancestor_roots`` (parentless ancestors of the target, §6.6).
* IMEC uses :func:`silicolab.scm.imec_size` (Hauser & Bühlmann, empty target included).

Where the spec differs, the spec's rule is implemented here:

* **Directed SHD** (§6.4) matches exact edges first, then pairs reversals among the
  *remaining* edges. ``shd_parts`` agrees on DAG predictions but counts a predicted
  antiparallel pair {a→b, b→a} against truth {a→b} as 0, where the spec gives 1 extra.
* **Weight P/R/F1** (§6.5): ``coefficient_scores`` counts every non-intercept key as a
  prediction; the spec's #pred is max(#matched parents, #keys starting ``c_``/``coeff_``),
  and matching looks up ``c_<p>``, ``coeff_<p>_freq``, ``coeff_<p>_frequency``, ``<p>``
  (exact, then case-insensitive). ``weight_prf`` is upstream's published metric in every
  family; ``weight_terms_prf`` is our second, separately named quadratic metric.

The public entry point is :mod:`silicolab.envs.causalab.metrics`, which re-exports these
together with the trajectory metrics and the per-episode summary.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from silicolab.envs.causalab.dsl import Hypothesis
from silicolab.envs.causalab.dsl._equation import normalize_name
from silicolab.envs.causalab.suite import TARGET
from silicolab.scm import CausalGraph, imec_size
from silicolab.scm.metrics import Scores, ancestor_roots, edge_scores, parent_scores, scores

__all__ = [
    "CONSISTENCY_TOL",
    "CONSISTENCY_TOL_STRICT",
    "WEIGHT_TOL",
    "Scores",
    "consistency",
    "directed_shd",
    "edge_prf",
    "edge_set",
    "imec_of",
    "normalize_name",
    "root_prf",
    "root_prf_names",
    "target_parent_prf",
    "weight_prf",
    "weight_terms_prf",
]

WEIGHT_TOL = 1e-6  # §6.5 re-eval tolerance (the visualiser's per-step accuracy uses 0.01)
CONSISTENCY_TOL = 5.0  # §6.9: |pred - freq| <= 5 Hz, the task's own tolerance
CONSISTENCY_TOL_STRICT = 0.01  # §6.9's stricter option for the noise-free linear family

EdgesLike = Hypothesis | CausalGraph | Iterable[Any]


def edge_set(edges: EdgesLike) -> set[tuple[str, str]]:
    """Normalised directed edges from a Hypothesis, a CausalGraph, ``(a, b)`` pairs or
    ``{"from", "to"}`` dicts. Malformed items (from raw LLM logs) are skipped."""
    if isinstance(edges, Hypothesis | CausalGraph):
        edges = edges.edges
    out: set[tuple[str, str]] = set()
    for edge in edges or ():
        if isinstance(edge, Mapping):
            a, b = edge.get("from"), edge.get("to")
        elif isinstance(edge, list | tuple) and len(edge) == 2:
            a, b = edge
        else:
            continue
        if isinstance(a, str) and isinstance(b, str):
            out.add((normalize_name(a), normalize_name(b)))
    return out


def edge_prf(pred_edges: EdgesLike, true_edges: EdgesLike) -> Scores:
    """All-edge precision / recall / F1 on directed edges (§6.2)."""
    return edge_scores(sorted(edge_set(true_edges)), sorted(edge_set(pred_edges)))


def target_parent_prf(pred_edges: EdgesLike, true_edges: EdgesLike, target: str = TARGET) -> Scores:
    """The same scores restricted to edges into the target (§6.3)."""
    return parent_scores(sorted(edge_set(true_edges)), sorted(edge_set(pred_edges)), target)


def directed_shd(pred_edges: EdgesLike, true_edges: EdgesLike) -> dict[str, int]:
    """Directed SHD (§6.4): ``{"shd", "missing", "extra", "reversed"}``.

    Exact matches are removed first; a remaining true edge (a, b) whose reverse is among
    the remaining predicted edges is one reversal (counted once); the other remaining true
    edges are missing, the other remaining predicted edges extra.
    """
    pred, true = edge_set(pred_edges), edge_set(true_edges)
    rest_true, rest_pred = true - pred, pred - true
    reversed_ = {(a, b) for a, b in rest_true if (b, a) in rest_pred}
    used = {(b, a) for a, b in reversed_}
    missing = len(rest_true) - len(reversed_)
    extra = len(rest_pred - used)
    return {
        "shd": missing + extra + len(reversed_),
        "missing": missing,
        "extra": extra,
        "reversed": len(reversed_),
    }


def _numeric(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _linear_names(parent: str) -> list[str]:
    """The names a parent's linear weight may go by, in upstream's lookup order (§6.5)."""
    return [f"c_{parent}", f"coeff_{parent}_freq", f"coeff_{parent}_frequency", parent]


def _lookup(coefficients: Mapping[str, Any], names: list[str]) -> tuple[str | None, float | None]:
    """(key, value) of the first of ``names`` that holds a number, as upstream reads it.

    Each name is tried exactly, then case-insensitively (the last key of a case-folded
    collision wins); a key whose value is not numeric is passed over and the next name is
    tried, so ``{"c_density": None, "coeff_density_freq": 1}`` reads 1.
    """
    folded = {str(k).lower(): k for k in coefficients}
    for name in names:
        key = name if name in coefficients else folded.get(name.lower())
        if key is None:
            continue
        value = _numeric(coefficients[key])
        if value is not None:
            return str(key), value
    return None, None


def _prefixed_keys(coefficients: Mapping[str, Any]) -> int:
    return sum(str(k).startswith(("c_", "coeff_")) for k in coefficients)


def _weight_scores(
    coefficients: Mapping[str, Any], items: list[tuple[list[str], float]], tol: float
) -> Scores:
    """P/R/F1 of ``items`` (candidate names, true value): #pred = max(#distinct matched keys,
    #keys starting ``c_``/``coeff_``), correct iff within ``tol`` (absolute)."""
    if not isinstance(coefficients, Mapping):
        coefficients = {}
    matched: set[str] = set()
    correct = 0
    for names, weight in items:
        key, value = _lookup(coefficients, names)
        if key is None or value is None:
            continue
        matched.add(key)
        correct += math.isclose(value, float(weight), rel_tol=0.0, abs_tol=tol)
    return scores(correct, max(len(matched), _prefixed_keys(coefficients)), len(items))


def weight_prf(
    coefficients: Mapping[str, Any], true_weights: Mapping[str, float], tol: float = WEIGHT_TOL
) -> Scores:
    """Frequency-weight precision / recall / F1, the published metric (§6.5), for every family.

    Computed as upstream's re-evaluation scorer computes it [C ``causalab_reeval/metrics.py``
    at 42ba47f], which the test vectors in ``tests/envs/causalab/data`` check:
    ``true_weights`` maps each true parent p of the target to its **linear** coefficient (in
    the quadratic family too: upstream's regex finds ``coeff1_<p>_freq``). The predicted
    weight of p is read from the first of ``c_<p>``, ``coeff_<p>_freq``,
    ``coeff_<p>_frequency``, ``<p>`` holding a number (see :func:`_lookup`); it is correct iff
    ``|pred - true| <= tol``. #pred = max(#parents matched, #keys starting ``c_`` or
    ``coeff_``); ``base`` is ignored, so spurious ``c_X`` keys lower precision.

    A quadratic hypothesis in the DSL's naming (``c_<p>_1``, ``c_<p>_2``) therefore scores
    0 here, as upstream scores it; :func:`weight_terms_prf` scores both of its terms.
    """
    items = [(_linear_names(p), w) for p, w in true_weights.items()]
    return _weight_scores(coefficients, items, tol)


def weight_terms_prf(
    coefficients: Mapping[str, Any],
    true_weights: Mapping[str, float],
    quad_weights: Mapping[str, float],
    tol: float,
) -> Scores:
    """Our quadratic weight P/R/F1 (not upstream's): every term of the target's equation.

    Each parent contributes its linear weight w, read from ``c_<p>_2`` (the DSL's linear
    term) or ``coeff1_<p>_freq`` before the linear names of :func:`weight_prf`, and, if it
    has one, its squared-term weight u from ``c_<p>_1`` or ``coeff2_<p>_freq``; #true =
    #terms. The caller passes a tolerance suited to non-integer weights (0.01 [R]), since
    an exact fit is rarely recovered to 1e-6. Why it exists: upstream's rule cannot credit
    a quadratic hypothesis written in the DSL's own naming.
    """
    items: list[tuple[list[str], float]] = []
    for parent, weight in true_weights.items():
        items.append(([f"c_{parent}_2", f"coeff1_{parent}_freq", *_linear_names(parent)], weight))
        if parent in quad_weights:
            items.append(([f"c_{parent}_1", f"coeff2_{parent}_freq"], quad_weights[parent]))
    return _weight_scores(coefficients, items, tol)


def root_prf(pred_edges: EdgesLike, true_edges: EdgesLike, target: str = TARGET) -> Scores:
    """Root-node P/R/F1, source-only mode (§6.6): the parentless ancestors of the target in
    the predicted edges against those of the true graph. Roots not reaching the target do
    not count."""
    truth = ancestor_roots(sorted(edge_set(true_edges)), target)
    pred = ancestor_roots(sorted(edge_set(pred_edges)), target)
    return scores(len(truth & pred), len(pred), len(truth))


def root_prf_names(
    pred_roots: Iterable[str], true_edges: EdgesLike, target: str = TARGET
) -> Scores:
    """Root-node P/R/F1 for an explicit list of root names (§6.7 API re-eval mode)."""
    truth = ancestor_roots(sorted(edge_set(true_edges)), target)
    pred = {normalize_name(str(r)) for r in pred_roots}
    return scores(len(truth & pred), len(pred), len(truth))


def imec_of(true_graph: CausalGraph, targets: Iterable[str]) -> int:
    """Size of the interventional MEC of ``true_graph`` (§6.8).

    The target family is {∅} ∪ {{X} : X intervened at least once}; repeated targets are
    collapsed. With every controllable node intervened the size is 1; with none it is the
    observational MEC size.
    """
    unique = list(dict.fromkeys(normalize_name(str(t)) for t in targets))
    return imec_size(true_graph, unique)


def _record_pair(record: Mapping[str, Any]) -> tuple[Mapping[str, Any], float | None]:
    """(props, freq) of a past_data entry (``{"props", "freq"}``) or a flat lab record."""
    props = record.get("props")
    if isinstance(props, Mapping):
        return props, _numeric(record.get("freq"))
    flat = {normalize_name(str(k)): v for k, v in record.items()}
    return flat, _numeric(flat.get(TARGET))


def consistency(
    h: Hypothesis | None, records: Iterable[Mapping[str, Any]], tol: float = CONSISTENCY_TOL
) -> dict[str, Any]:
    """Hypothesis–data consistency (§6.9 [R]): ``{"all", "fraction", "n_records",
    "n_consistent"}``.

    Each record is a past_data entry (``{"props": {...}, "freq": f}``) or a flat record
    including the target. A record is consistent iff the hypothesis' equation, evaluated
    with its coefficients on the record's props, is within ``tol`` (inclusive) of the
    recorded frequency; a null coefficient, missing property or missing hypothesis counts as
    inconsistent. Records without a numeric frequency are skipped.

    Tolerance choice: 5 Hz by default, the task's own success tolerance, so "consistent"
    means "this equation would have passed on that record"; it also absorbs the ±5 hidden
    disturbances of the hidden suites, where an exact match is impossible.
    :data:`CONSISTENCY_TOL_STRICT` (0.01) is the spec's stricter linear option and
    :func:`score_episode` reports both. With no usable records ``all`` is True and
    ``fraction`` 1.0 (vacuously consistent).
    """
    n = hits = 0
    for record in records:
        props, freq = _record_pair(record)
        if freq is None:
            continue
        n += 1
        pred = h.predict(props) if h is not None else None
        hits += pred is not None and abs(pred - freq) <= tol
    return {
        "all": hits == n,
        "fraction": hits / n if n else 1.0,
        "n_records": n,
        "n_consistent": hits,
    }
