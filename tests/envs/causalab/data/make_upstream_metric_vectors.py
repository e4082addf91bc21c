"""Regenerate ``upstream_metric_vectors.json``: our hypotheses scored by upstream's scorer.

Run it outside the project's test suite, with the project's interpreter and a checkout of
upstream (DylanZSZ/CausaLab-Benchmark at 42ba47f, which has ``causalab_reeval/`` and
``causal_graph_configs/``)::

    PYTHONPATH=src python tests/envs/causalab/data/make_upstream_metric_vectors.py \\
        /tmp/CausaLab-Benchmark tests/envs/causalab/data/upstream_metric_vectors.json

It imports upstream's ``causalab_reeval.metrics`` from that checkout (nothing of it is
copied here) and scores, in source-only mode: fuzzed hypotheses (2 per graph of the two
quadratic suites, 1 per graph for the first 15 graphs of each linear main suite; seeded)
and the reference agent's final hypothesis on every quadratic episode (seed 0). Each
vector keeps the prediction and upstream's all-edge, target-parent, weight and root
(precision, recall, F1) and SHD (total, missing, extra, reversed).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

QUAD = {"4nodes_quad": 2, "4nodes_quad_hard": 2}
LINEAR = {"3nodes": 1, "4nodes": 1, "5nodes": 1, "6nodes": 1, "7nodes": 1}
LINEAR_GRAPHS = 15
TARGET = "resonanceFreq"
ALIASES = [TARGET, "freq", "frequency", "Resonance Freq", "resonance_frequency"]


def _configs(upstream: Path, suite: str) -> list[dict[str, Any]]:
    lines = (upstream / "causal_graph_configs" / f"{suite}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _fuzz_edges(rng: random.Random, config: dict[str, Any]) -> list[Any]:
    """True edges kept, reversed or dropped, random extras, target aliases, mixed forms."""
    nodes = list(config["nodes"])
    chosen = []
    for edge in config["edges"]:
        draw = rng.random()
        if draw < 0.6:
            chosen.append((edge["from"], edge["to"]))
        elif draw < 0.75:
            chosen.append((edge["to"], edge["from"]))
    chosen += [tuple(rng.sample(nodes, 2)) for _ in range(rng.choice([0, 0, 1, 2]))]
    out: list[Any] = []
    for a, b in chosen:
        a = rng.choice(ALIASES) if a == TARGET and rng.random() < 0.3 else a
        b = rng.choice(ALIASES) if b == TARGET and rng.random() < 0.3 else b
        out.append(rng.choice([{"from": a, "to": b}, {"from": a, "to": b}, [a, b]]))
    if rng.random() < 0.1:
        out.append({"from": nodes[0]})  # malformed: skipped by both
    return out


def _fuzz_value(rng: random.Random, true: float) -> Any:
    """The true value, a near or far miss, a numeric string, null, junk or a small integer."""
    draw = rng.random()
    if draw < 0.45:
        return true
    if draw < 0.55:
        return true + rng.choice([1e-7, -1e-7, 5e-7])
    if draw < 0.65:
        return round(true + rng.choice([0.004, -0.008, 0.3]), 6)
    if draw < 0.72:
        return str(true)
    if draw < 0.78:
        return None
    if draw < 0.82:
        return rng.choice(["abc", True, [1]])
    return rng.choice([1, 2, 3, -1, 0])


def _fuzz_coefficients(
    rng: random.Random, config: dict[str, Any], weights: dict[str, float], quad: bool
) -> dict[str, Any]:
    """Coefficients under every naming either scorer reads, plus spurious keys."""
    params = config["params"]
    out: dict[str, Any] = {}
    if rng.random() < 0.8:
        out["base"] = params.get("base_freq", 20)
    for p, w in weights.items():
        u = params.get(f"coeff2_{p}_freq") or 0.0
        if quad and rng.random() < 0.5:  # the DSL's quadratic naming
            out[f"c_{p}_1"], out[f"c_{p}_2"] = _fuzz_value(rng, u), _fuzz_value(rng, w)
            if rng.random() < 0.15:
                out[f"c_{p}"] = _fuzz_value(rng, w)
            continue
        names = [f"c_{p}", f"c_{p}", f"coeff_{p}_freq", f"coeff_{p}_frequency", p]
        names += [f"C_{p.upper()}", f"coeff1_{p}_freq", f"c_{p}_2"]
        out[rng.choice(names)] = _fuzz_value(rng, w)
        if rng.random() < 0.15:
            out[f"coeff_{p}_freq"] = _fuzz_value(rng, w)  # a second spelling
        if rng.random() < 0.1:
            out[f"c_{p}".lower() if rng.random() < 0.5 else f"C_{p}"] = _fuzz_value(rng, w)
        if quad and rng.random() < 0.5:
            out[f"coeff2_{p}_freq"] = _fuzz_value(rng, u)
    others = [n for n in config["nodes"] if n != TARGET]
    for _ in range(rng.choice([0, 0, 0, 1, 2])):
        q = rng.choice(others)
        key = rng.choice([f"c_{q}", f"coeff_{q}_freq", f"k_{q}", f"c_{q}_1"])
        out[key] = rng.choice([1, 2, 0.5, None, "x"])
    return {} if rng.random() < 0.03 else out


def _upstream_scores(m: Any, prediction: dict[str, Any], config: dict[str, Any]) -> dict:
    """Upstream's source-only scores of one prediction (``m`` is its metrics module)."""
    edges = prediction.get("edges") or []
    true = m.true_edges_from_graph_config(config)
    edge = m.compute_edge_metrics(edges, true)
    parent = m.compute_edge_metrics(m.frequency_parent_edges(edges), m.frequency_parent_edges(true))
    shd = m.compute_directed_shd(edges, true)
    weight = m.compute_frequency_weight_metrics(prediction.get("coefficients") or {}, config)
    roots = m.prf(
        m.extract_root_nodes_from_edges(edges), m.extract_true_root_nodes_for_frequency(config)
    )
    return {
        "all_edge": [edge["precision"], edge["recall"], edge["f1"]],
        "target_parent": [parent["precision"], parent["recall"], parent["f1"]],
        "shd": [shd["shd"], shd["missing"], shd["extra"], shd["reversed"]],
        "weight": [weight["weight_precision"], weight["weight_recall"], weight["weight_f1"]],
        "root": [roots["precision"], roots["recall"], roots["f1"]],
    }


def _reference_hypotheses(suite: str) -> list[dict[str, Any]]:
    from silicolab.envs import make
    from silicolab.scientists.causalab import make_scientist, play_episode

    out = []
    for index in range(50):
        lab = make("causalab", suite=suite, index=index, seed=0)
        final = play_episode(lab, make_scientist("reference"), index=index).final_hypothesis
        out.append({k: final[k] for k in ("edges", "coefficients")})
    return out


def main(upstream: Path, out: Path) -> None:
    """Write the vectors for the upstream checkout at ``upstream`` to ``out``."""
    sys.path.insert(0, str(upstream))
    from causalab_reeval import metrics as m

    rng = random.Random(25)
    vectors = []
    for suite, per_graph in {**QUAD, **LINEAR}.items():
        configs = _configs(upstream, suite)
        for index, config in enumerate(configs if suite in QUAD else configs[:LINEAR_GRAPHS]):
            weights = m._find_true_frequency_coefficients(config)
            for _ in range(per_graph):
                edges = _fuzz_edges(rng, config)
                prediction = {
                    "edges": edges,
                    "coefficients": _fuzz_coefficients(rng, config, weights, suite in QUAD),
                }
                vectors.append(_vector(m, suite, index, "fuzz", prediction, config))
    for suite in QUAD:
        configs = _configs(upstream, suite)
        for index, prediction in enumerate(_reference_hypotheses(suite)):
            vectors.append(_vector(m, suite, index, "reference_agent", prediction, configs[index]))
    source = "DylanZSZ/CausaLab-Benchmark@42ba47f causalab_reeval/metrics.py (source-only)"
    out.write_text(json.dumps({"upstream": source, "vectors": vectors}, separators=(",", ":")))
    print(f"{len(vectors)} vectors -> {out}")


def _vector(
    m: Any, suite: str, index: int, source: str, prediction: dict, config: dict
) -> dict[str, Any]:
    """One stored vector: where the prediction comes from, itself, and upstream's scores."""
    scores = _upstream_scores(m, prediction, config)
    return {
        "suite": suite,
        "index": index,
        "source": source,
        "prediction": prediction,
        "upstream": scores,
    }


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
