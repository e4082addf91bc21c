"""Graph layout and edge comparison: deterministic, causes drawn before their effects."""

from __future__ import annotations

import os
import subprocess
import sys

from silicolab.report.html.graphs import compare_edges, edge_scores, layered_layout, stars
from silicolab.report.html.study import path_labels

NODES = ["c", "a", "d", "b", "e"]
TRUTH = [("a", "b"), ("b", "c"), ("a", "d"), ("d", "c"), ("e", "c")]


def test_causes_sit_left_of_their_effects_and_layers_keep_the_given_order() -> None:
    pos = layered_layout(NODES, TRUTH)
    assert set(pos) == set(NODES)
    for u, v in TRUTH:
        assert pos[u][0] < pos[v][0]
    assert pos["a"][0] == pos["e"][0] == -1.0 and pos["c"][0] == 1.0
    assert pos["a"][1] > pos["e"][1]  # "a" before "e" in NODES: drawn above it
    cyclic = layered_layout(["x", "y", "z"], [("x", "y"), ("y", "x"), ("y", "z")])
    assert cyclic["x"][0] == cyclic["y"][0] < cyclic["z"][0]


def test_layout_is_the_same_in_every_process() -> None:
    code = (
        "from silicolab.report.html.graphs import layered_layout;"
        f"print(sorted(layered_layout({NODES!r}, {TRUTH!r}).items()))"
    )
    outs = set()
    for seed in ("1", "2", "3", "4"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        outs.add(run.stdout)
    assert len(outs) == 1


def test_every_edge_is_classified_once() -> None:
    directed = [("a", "b"), ("c", "b"), ("e", "a")]
    classes = compare_edges(TRUTH, directed, undirected=[("d", "a"), ("b", "e")])
    assert classes == {
        "correct": [("a", "b")],
        "reversed": [("c", "b")],
        "extra": [("e", "a"), ("b", "e")],
        "missing": [("d", "c"), ("e", "c")],
        "undirected": [("d", "a")],
    }
    scores = edge_scores(classes)
    assert scores["shd"] == 6  # reversed 1 + extra 2 + missing 2 + undirected 1
    assert scores["precision"] == 1 / 5 and scores["recall"] == 1 / 5


def test_path_labels_carry_estimate_se_and_stars() -> None:
    params = [
        {"lhs": "y", "op": "~", "rhs": "x", "est": 0.5, "se": 0.1, "p": 0.0001},
        {"lhs": "y", "op": "~", "rhs": "w", "est": -0.02, "se": 0.05, "p": 0.7},
        {"lhs": "y", "op": "~", "rhs": "x:w", "est": 1.0, "se": 0.1, "p": 0.0},
        {"lhs": "y", "op": "~1", "rhs": "", "est": 3.0, "se": 0.1, "p": 0.0},
    ]
    assert path_labels(params) == {("x", "y"): "0.5 (0.1)***", ("w", "y"): "-0.02 (0.05)"}
    assert [stars(p) for p in (0.0005, 0.005, 0.02, 0.2, None)] == ["***", "**", "*", "", ""]
