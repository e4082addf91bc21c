"""SCP's LLM-KBCI (statistical causal prompting): LLM answers per ordered pair become a
probability matrix, SCP's thresholds turn it into background knowledge, and the
statistical algorithm reruns with it."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from tests.support.cli import EXE, cli_env, strict_json

from silicolab.bench.discovery import run_discovery_bench
from silicolab.core.errors import InputError
from silicolab.discovery import load, registry
from silicolab.discovery.health import discovery_health
from silicolab.discovery.mac.kbci import knowledge_from_probabilities
from silicolab.discovery.scoring import score
from silicolab.llm import load_model

QUESTION = re.compile(r"^Question: Does (.+?) directly cause (.+?)\?", re.M)
AUTO = load("auto_mpg")
TRUTH = set(AUTO.truth.edges)
NODES = list(AUTO.data.columns)


def _pair(request) -> tuple[str, str]:
    """The (cause, effect) a request asks about, from its first user message (repair turns
    come after it)."""
    first_user = next(m for m in request.messages if m["role"] == "user")
    match = QUESTION.search(first_user["content"])
    assert match, first_user["content"]
    return match.group(1), match.group(2)


def _reply(answer: str) -> str:
    return json.dumps({"thought": "domain knowledge", "answer": answer})


def oracle(prompts: list[str] | None = None) -> Callable:
    """A scripted model that answers every pair from the true Auto MPG graph."""

    def fn(request) -> str:
        if prompts is not None:
            prompts.append(next(m for m in request.messages if m["role"] == "user")["content"])
        return _reply("yes" if _pair(request) in TRUTH else "no")

    return fn


def _standardized() -> np.ndarray:
    x = AUTO.data.to_numpy(dtype=float)
    return (x - x.mean(axis=0)) / x.std(axis=0)


def _causallearn_directed(graph: np.ndarray) -> set[tuple[str, str]]:
    """Directed edges of a causal-learn general graph (a -> b: [b, a] = 1, [a, b] = -1)."""
    n = len(NODES)
    return {
        (NODES[a], NODES[b])
        for a in range(n)
        for b in range(n)
        if graph[b, a] == 1 and graph[a, b] == -1
    }


def test_a_truthful_model_gives_pc_the_true_knowledge_and_the_true_graph():
    prompts: list[str] = []
    model = load_model("scripted", fn=oracle(prompts))
    result = registry.discover(AUTO.data, "pc_llm_kbci", model=model, samples=2)

    forbidden = {(a, b) for a in NODES for b in NODES if a != b and (a, b) not in TRUTH}
    assert set(map(tuple, result.params["knowledge"]["required"])) == TRUTH
    assert set(map(tuple, result.params["knowledge"]["forbidden"])) == forbidden
    # independent computation: causal-learn's PC with that knowledge, built here
    from causallearn.graph.GraphNode import GraphNode
    from causallearn.search.ConstraintBased.PC import pc
    from causallearn.utils.PCUtils.BackgroundKnowledge import BackgroundKnowledge

    bk = BackgroundKnowledge()
    for c, e in TRUTH:
        bk.add_required_by_node(GraphNode(c), GraphNode(e))
    for c, e in forbidden:
        bk.add_forbidden_by_node(GraphNode(c), GraphNode(e))
    expected = pc(
        _standardized(), node_names=NODES, background_knowledge=bk, show_progress=False
    ).G.graph
    assert set(result.graph.edges) == _causallearn_directed(expected) == TRUTH
    plain = registry.discover(AUTO.data, "pc")
    assert score(result, AUTO.truth)["shd"] == 0 < score(plain, AUTO.truth)["shd"] == 8
    # statistical causal prompting: every pair is asked with the plain PC result in view
    assert len(prompts) == 2 * len(NODES) * (len(NODES) - 1)
    assert all("The statistical causal discovery algorithm PC was run" in p for p in prompts)
    assert all("Mpg -> Horsepower" in p for p in prompts)  # a PC edge of step 1 (spec §5)
    asked = next(p for p in prompts if "Does Mpg directly cause Horsepower?" in p)
    assert "it found a direct causal relationship from Mpg to Horsepower" in asked
    assert result.usage["total"]["calls"] == len(prompts)


def test_exact_search_uses_the_llm_super_graph_in_the_correct_orientation():
    model = load_model("scripted", fn=oracle())
    result = registry.discover(AUTO.data, "exact_llm_kbci", model=model, samples=1)
    from causallearn.search.ScoreBased.ExactSearch import bic_exact_search

    allowed = np.array([[int((c, e) in TRUTH) for e in NODES] for c in NODES])
    dag, _ = bic_exact_search(_standardized(), super_graph=allowed)
    independent = {(NODES[c], NODES[e]) for c, e in zip(*np.nonzero(dag), strict=True)}
    assert set(result.graph.edges) == independent == TRUTH
    assert result.params["knowledge"]["required"] == []  # SCP gave ES only the super-graph
    assert score(registry.discover(AUTO.data, "exact"), AUTO.truth)["shd"] > 0


def test_scp_quirk_variant_and_lingam_improve_over_the_plain_algorithm():
    model = load_model("scripted", fn=oracle())
    for method, plain in (
        ("exact_scp_llm_kbci", "exact_scp"),
        ("direct_lingam_llm_kbci", "direct_lingam"),
    ):
        result = registry.discover(AUTO.data, method, model=model, samples=1)
        before = score(registry.discover(AUTO.data, plain), AUTO.truth)["shd"]
        after = score(result, AUTO.truth)["shd"]
        assert after < before, (method, before, after)
        assert result.method == method


def test_the_probability_is_the_share_of_yes_answers_among_valid_ones():
    samples = 4
    counts = {
        (c, e): (i + 2 * j) % (samples + 1)
        for i, c in enumerate(NODES)
        for j, e in enumerate(NODES)
        if c != e
    }
    broken_once, never_valid = ("Mpg", "Weight"), ("Weight", "Mpg")

    def fn(request) -> str:
        pair, k = _pair(request), request.sample_index
        if pair == never_valid or (pair == broken_once and k == 0):
            return "I am not sure."
        return _reply("yes" if k < counts[pair] else "no")

    model = load_model("scripted", fn=fn)
    result = registry.discover(AUTO.data, "pc_llm_kbci", model=model, samples=samples)
    matrix = result.params["probability"]
    for (c, e), count in counts.items():
        got = matrix[NODES.index(c)][NODES.index(e)]
        if (c, e) == never_valid:
            assert got is None
        elif (c, e) == broken_once:  # sample 0 failed: yes among samples 1..3
            assert got == pytest.approx(sum(k < count for k in (1, 2, 3)) / 3)
        else:
            assert got == pytest.approx(count / samples)
    assert all(matrix[i][i] is None for i in range(len(NODES)))
    knowledge = result.params["knowledge"]
    assert all(matrix[NODES.index(c)][NODES.index(e)] == 0 for c, e in knowledge["forbidden"])
    assert all(matrix[NODES.index(c)][NODES.index(e)] == 1 for c, e in knowledge["required"])
    assert result.params["undecided"] == ["Weight -> Mpg"]

    health = discovery_health(result.raw)
    units = {u.unit: u for u in health.units}
    assert health.totals()["steps"] == samples * len(counts)
    assert health.totals()["parse_failures"] == samples + 1
    assert units["Mpg->Weight"].parse_failures == 1
    assert units["Weight->Mpg"].parse_failures == samples
    assert "I am not sure." in units["Weight->Mpg"].sample_reply


def test_scp_thresholds_and_cycles_in_the_required_edges():
    probability = {
        ("A", "B"): 1.0,
        ("B", "C"): 0.97,
        ("C", "A"): 0.96,  # least probable edge of the cycle A -> B -> C -> A
        ("B", "A"): 0.04,
        ("A", "C"): 0.05,  # not below 0.05: open
        ("C", "B"): None,
    }
    knowledge, notes = knowledge_from_probabilities(probability)
    assert knowledge.required == (("A", "B"), ("B", "C"))
    assert knowledge.forbidden == (("B", "A"),)
    assert notes == ["required edge(s) dropped because they would close a cycle: C -> A"]
    only_forbidden, _ = knowledge_from_probabilities(probability, use_required=False)
    assert only_forbidden.required == ()


def test_registered_as_llm_methods_with_checked_parameters():
    llm = registry.available("llm")
    for name in ("pc_llm_kbci", "exact_llm_kbci", "exact_scp_llm_kbci", "direct_lingam_llm_kbci"):
        assert name in llm and registry.kind_of(name) == "llm"
    model = load_model("scripted", fn=oracle())
    with pytest.raises(InputError, match="algorithm"):
        registry.discover(AUTO.data, "pc_llm_kbci", model=model, algorithm="ges")
    with pytest.raises(InputError, match="samples must be a positive integer"):
        registry.discover(AUTO.data, "pc_llm_kbci", model=model, samples=0)


def test_bench_compares_each_variant_with_its_own_published_row():
    model = load_model("scripted:gpt-4", fn=oracle())
    methods = ["pc_llm_kbci", "exact_scp_llm_kbci", "exact_llm_kbci"]
    table = run_discovery_bench(methods, ["auto_mpg"], model=model).set_index("method")
    assert (table.loc["pc_llm_kbci", "published_shd"], table.loc["pc_llm_kbci", "shd"]) == (7, 0)
    assert table.loc["exact_scp_llm_kbci", "published_nhd"] == 0.44
    assert pd.isna(table.loc["exact_llm_kbci", "published_shd"])  # correct ES: our own row
    other = run_discovery_bench(["pc_llm_kbci"], ["auto_mpg"], model=load_model("scripted"))
    assert pd.isna(other.iloc[0].published_shd)  # a GPT-4 row is not another model's


def test_bench_cli_runs_pc_llm_kbci(tmp_path):
    done = subprocess.run(
        [
            *EXE,
            "bench",
            "discovery",
            "--methods",
            "pc_llm_kbci",
            "--model",
            "scripted",
            "--datasets",
            "auto_mpg",
            "--runs-dir",
            str(tmp_path),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=cli_env(),
        cwd=tmp_path,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    payload = strict_json(done.stdout)
    text = json.dumps(payload)
    assert "pc_llm_kbci" in text and "auto_mpg" in text


def test_forbidden_edges_that_would_leave_lingam_no_causal_order_are_dropped():
    cycle = {("Mpg", "Weight"), ("Weight", "Horsepower"), ("Horsepower", "Mpg")}
    # "no path" one way orders the pair the other way: Weight < Mpg, Horsepower < Weight,
    # Mpg < Horsepower is a cycle, and plain DirectLiNGAM fails on it
    from silicolab.discovery import statistical
    from silicolab.discovery.knowledge import Knowledge

    with pytest.raises(ValueError):
        statistical.direct_lingam(AUTO.data, knowledge=Knowledge(forbidden=sorted(cycle)))

    def fn(request) -> str:  # the cycle's pairs: always no; every other pair: 1 of 2 yes
        no = _pair(request) in cycle or request.sample_index == 1
        return _reply("no" if no else "yes")

    model = load_model("scripted", fn=fn)
    result = registry.discover(AUTO.data, "direct_lingam_llm_kbci", model=model, samples=2)
    assert result.params["knowledge"]["forbidden"] == [["Horsepower", "Mpg"], ["Mpg", "Weight"]]
    assert result.params["knowledge"]["required"] == []
    assert (
        "forbidden edge(s) dropped because DirectLiNGAM's causal order would be cyclic: "
        "Weight -> Horsepower"
    ) in result.notes
