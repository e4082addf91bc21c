"""Our default CausaLab metrics against upstream's scorer, on stored test vectors.

``data/upstream_metric_vectors.json`` holds hypotheses (fuzzed ones for the two quadratic
suites and the first 15 graphs of each linear main suite, plus the reference agent's final
hypotheses on every quadratic episode) and the scores upstream's re-evaluation scorer
(DylanZSZ/CausaLab-Benchmark at 42ba47f, ``causalab_reeval/metrics.py``, source-only
mode) gave them, computed outside the project by ``data/make_upstream_metric_vectors.py``.
Every default metric must equal upstream's on every vector; in particular the published
weight F1 of a quadratic hypothesis is upstream's (the linear coefficient of each parent),
and our both-terms score lives in the separate ``weight_terms_*`` keys.
"""

from __future__ import annotations

import json
import statistics
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from silicolab.envs import make
from silicolab.envs.causalab.dsl import Hypothesis
from silicolab.envs.causalab.metrics import (
    directed_shd,
    edge_prf,
    root_prf,
    structure_scores,
    target_parent_prf,
    weight_prf,
)
from silicolab.envs.causalab.suite import GraphConfig, load_suite
from silicolab.scientists.causalab import make_scientist, play_episode

VECTORS = Path(__file__).parent / "data" / "upstream_metric_vectors.json"
QUAD = ["4nodes_quad", "4nodes_quad_hard"]


@cache
def _vectors() -> list[dict[str, Any]]:
    return json.loads(VECTORS.read_text())["vectors"]


@cache
def _config(suite: str, index: int) -> GraphConfig:
    return load_suite(suite)[index]


def _ours_raw(prediction: dict[str, Any], config: GraphConfig) -> dict[str, list[float]]:
    """Our primitives on the raw (unvalidated) prediction, as upstream reads it."""
    edges = prediction.get("edges") or []
    true = list(config.edges)
    shd = directed_shd(edges, true)
    out = {
        "all_edge": edge_prf(edges, true),
        "target_parent": target_parent_prf(edges, true),
        "weight": weight_prf(prediction.get("coefficients") or {}, config.freq_weights()),
        "root": root_prf(edges, true),
    }
    scores = {k: [s.precision, s.recall, s.f1] for k, s in out.items()}
    scores["shd"] = [shd["shd"], shd["missing"], shd["extra"], shd["reversed"]]
    return scores


def _ours_recorded(prediction: dict[str, Any], config: GraphConfig) -> dict[str, list[float]]:
    """The flat keys an episode record holds, from the hypothesis as the lab reads it."""
    flat = structure_scores(Hypothesis.from_dict(prediction), config)
    scores = {
        k: [flat[f"{k}_precision"], flat[f"{k}_recall"], flat[f"{k}_f1"]]
        for k in ("all_edge", "target_parent", "weight", "root")
    }
    scores["shd"] = [flat["shd"], flat["shd_missing"], flat["shd_extra"], flat["shd_reversed"]]
    return scores


def _mismatches(score) -> list[tuple[str, int, str, list[float], list[float]]]:
    bad = []
    for v in _vectors():
        ours = score(v["prediction"], _config(v["suite"], v["index"]))
        for metric, expected in v["upstream"].items():
            if ours[metric] != pytest.approx(expected, abs=1e-12):
                bad.append((v["suite"], v["index"], metric, ours[metric], expected))
    return bad


def test_vectors_cover_the_quadratic_and_linear_suites() -> None:
    suites = {v["suite"] for v in _vectors()}
    assert {*QUAD, "3nodes", "4nodes", "5nodes", "6nodes", "7nodes"} <= suites
    quad_fuzz = [v for v in _vectors() if v["suite"] in QUAD and v["source"] == "fuzz"]
    assert len(quad_fuzz) >= 200
    # the vectors discriminate: upstream gives both right and wrong weights
    weight_f1 = {v["upstream"]["weight"][2] for v in quad_fuzz}
    assert 0.0 in weight_f1 and 1.0 in weight_f1 and len(weight_f1) > 3


@pytest.mark.parametrize("score", [_ours_raw, _ours_recorded], ids=["primitives", "record"])
def test_default_metrics_equal_upstream_on_every_vector(score) -> None:
    bad = _mismatches(score)
    assert not bad, f"{len(bad)} mismatches, first: {bad[:5]}"


def test_exact_quadratic_mechanism_scores_zero_published_and_one_in_terms() -> None:
    """Upstream reads the linear coefficient ``c_<p>``; the DSL's quadratic naming has none."""
    config = _config("4nodes_quad", 0)
    quad = {p: u for (p, c), u in config.quad_weights.items() if c == "resonanceFreq"}
    coefficients = {"base": config.base_freq}
    for parent, weight in config.freq_weights().items():
        coefficients[f"c_{parent}_1"] = quad[parent]
        coefficients[f"c_{parent}_2"] = weight
    h = Hypothesis(tuple(config.edges), "", coefficients)
    flat = structure_scores(h, config)
    assert flat["weight_f1"] == 0.0 and flat["weight_terms_f1"] == 1.0
    linear_names = {f"c_{p}": w for p, w in config.freq_weights().items()}
    assert (
        structure_scores(Hypothesis(tuple(config.edges), "", linear_names), config)["weight_f1"]
        == 1.0
    )


@pytest.mark.parametrize("suite", QUAD)
def test_reference_agent_weight_f1_equals_upstream_on_the_same_episodes(suite: str) -> None:
    stored = {
        v["index"]: v
        for v in _vectors()
        if v["suite"] == suite and v["source"] == "reference_agent"
    }
    assert len(stored) == 50
    ours = []
    for index, vector in sorted(stored.items()):
        record = play_episode(
            make("causalab", suite=suite, index=index, seed=0),
            make_scientist("reference"),
            index=index,
        )
        final = record.final_hypothesis
        assert {k: final[k] for k in ("edges", "coefficients")} == vector["prediction"], (
            "the reference agent's episodes changed: regenerate the vectors "
            "(data/make_upstream_metric_vectors.py)"
        )
        ours.append(record.metrics["weight_f1"])
        assert record.metrics["weight_terms_f1"] == 1.0  # ours still credits the fit
    upstream = [v["upstream"]["weight"][2] for _, v in sorted(stored.items())]
    assert ours == upstream
    assert statistics.mean(ours) == statistics.mean(upstream) == 0.0
