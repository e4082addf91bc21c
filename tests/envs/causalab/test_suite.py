"""The bundled CausaLab suites: loading, malformed files, equations, Golden replay (§12.2)."""

from __future__ import annotations

import json
import random
import re
from importlib import resources

import pytest

from silicolab.core.errors import InputError
from silicolab.envs.causalab import TARGET, CrystalLab, load_suite, load_suite_file, suite_names

MAIN = ["3nodes", "4nodes", "5nodes", "6nodes", "7nodes"]


def test_all_released_suites_load_with_50_graphs_each() -> None:
    names = suite_names()
    assert len(names) == 22
    assert set(MAIN) <= set(names)
    for name in names:
        configs = load_suite(name)
        assert len(configs) == 50, name
        for config in configs:
            assert config.nodes[0] == TARGET
            assert TARGET not in config.controllable
            assert config.graph.parents(TARGET), config.graph_id


def test_unknown_suite_lists_the_bundled_ones() -> None:
    with pytest.raises(InputError, match="4nodes_golden"):
        load_suite("4node")


def test_budgets_weights_and_variant_blocks_match_the_spec() -> None:
    for k, name in zip(range(3, 8), MAIN, strict=True):
        for config in load_suite(name):
            assert config.budget == 4 * (k - 1)
            assert config.family == "linear"
            assert set(config.weights.values()) <= {1, 2, 3}
            assert 15 <= config.base_freq <= 25 and float(config.base_freq).is_integer()
            assert not config.graph.children(TARGET)
    assert all(c.budget == 0 for c in load_suite("4nodes_golden") + load_suite("6nodes_golden"))
    assert sum(bool(c.golden_chain) for c in load_suite("6nodes_golden")) == 36
    n1, n2, n3 = (load_suite(f"4nodes_hidden_n{i}") for i in (1, 2, 3))
    for a, b, c in zip(n1, n2, n3, strict=True):
        assert a.hidden is not None and b.hidden is not None and c.hidden is not None
        assert b.hidden.affected_nodes[:1] == a.hidden.affected_nodes
        assert c.hidden.affected_nodes[:2] == b.hidden.affected_nodes
        assert a.hidden.value_space == (-5.0, 0.0, 5.0)
    wide = load_suite("4nodes_hidden_vrange_pm50")[0].hidden
    assert wide is not None and wide.value_space == (-50.0, 0.0, 50.0)
    assert any(c.graph.children(TARGET) for c in load_suite("6nodes_freqparent"))
    quad = load_suite("4nodes_quad_hard")[0]
    assert quad.family == "quadratic" and quad.presets is not None
    assert quad.quad_weights[("density", TARGET)] == 0.016


def test_structure_helpers_on_4nodes_0() -> None:
    config = load_suite("4nodes")[0]
    assert config.freq_weights() == {"density": 1, "moisture": 1}
    assert config.roots_of_target() == {"density", "moisture"}
    assert config.recursion_order == ("density", "moisture", TARGET, "quantumSize")
    assert config.display_names["quantumSize"] == "Quantum Size"


def _reference_evaluate(config, bases):  # independent: eval the published strings
    values: dict[str, float] = {}

    def visit(node: str) -> None:
        if node in values:
            return
        spec = config.raw["nodes"][node]
        if "computation" not in spec:
            values[node] = round(bases[node], 2)
            return
        names = set(re.findall(r"[A-Za-z_]\w*", spec["computation"]))
        for name in names & set(config.nodes):
            visit(name)
        scope = dict(config.raw["params"]) | values
        if node != TARGET:
            scope[f"base_{node}"] = bases[node]
        values[node] = round(eval(spec["computation"].replace("^", "**"), {}, scope), 2)

    for node in config.nodes:
        visit(node)
    return values


def test_evaluate_agrees_with_the_published_equation_strings_for_every_graph() -> None:
    gen = random.Random(7)
    for name in suite_names():
        for config in load_suite(name):
            bases = {n: gen.randint(0, 100) for n in config.controllable}
            got = config.evaluate(bases)
            want = _reference_evaluate(config, bases)
            assert got == pytest.approx(want, abs=1e-9), config.graph_id
            assert list(got) == list(config.recursion_order)


def test_hidden_shift_is_added_after_the_equation_and_propagates() -> None:
    config = load_suite("4nodes_hidden_n2")[0]  # H hits moisture, density
    bases = {"density": 39, "moisture": 86, "quantumSize": 70}
    values = config.evaluate(bases, hidden_shift=5.0)
    assert values == {"density": 44, "moisture": 91, TARGET: 160.0, "quantumSize": 114}


@pytest.mark.parametrize("name", ["4nodes_golden", "6nodes_golden"])
def test_replaying_every_golden_chain_reproduces_its_records(name: str) -> None:
    chains = 0
    for config in load_suite(name):
        entries = config.raw["bootstrap_past_data"]
        first = entries[0]["props"]
        bases = {}
        for node in config.controllable:  # intercept = value minus the parent terms
            terms = sum(w * first[p] for (p, c), w in config.weights.items() if c == node)
            bases[node] = round(first[node] - terms, 2)
        lab = CrystalLab(config, bases={"manipulator": bases, "reactor": bases})
        assert lab.observe()[TARGET] == pytest.approx(entries[0]["freq"], abs=0.01)
        lab.budget = len(config.golden_chain)
        chains += bool(config.golden_chain)
        for step in config.golden_chain:
            panel = lab.intervene(step.prop, step.value)
            assert panel[TARGET] == pytest.approx(step.freq, abs=0.01), config.graph_id
            for prop, value in step.props.items():
                assert panel[prop] == pytest.approx(value, abs=0.01), (config.graph_id, prop)
    assert chains == {"4nodes_golden": 50, "6nodes_golden": 36}[name]


def _good_line() -> str:
    data = resources.files("silicolab.envs.causalab") / "data" / "3nodes.jsonl"
    return data.read_text(encoding="utf-8").splitlines()[0]


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        (lambda d: "{not json", "not valid JSON"),
        (lambda d: json.dumps({k: v for k, v in d.items() if k != "params"}), "'params'"),
        (
            lambda d: json.dumps(d | {"edges": [*d["edges"], {"from": "x", "to": TARGET}]}),
            "unknown node 'x'",
        ),
        (lambda d: json.dumps(d | {"budget": -1}), "budget"),
        (lambda d: json.dumps(d | {"edges": d["edges"][:1]}), "computations name the edges"),
    ],
)
def test_a_malformed_line_is_reported_with_file_and_line(tmp_path, mutate, problem) -> None:
    good = _good_line()
    path = tmp_path / "broken.jsonl"
    path.write_text(good + "\n" + mutate(json.loads(good)) + "\n" + good + "\n")
    with pytest.raises(InputError) as info:
        load_suite_file(str(path))
    message = str(info.value)
    assert "broken.jsonl" in message and "line 2" in message and problem in message


def test_an_unreadable_term_is_named(tmp_path) -> None:
    data = json.loads(_good_line())
    node = next(n for n, s in data["nodes"].items() if "computation" in s)
    data["nodes"][node]["computation"] += " + sqrt(x)"
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps(data) + "\n")
    with pytest.raises(InputError, match=r"odd.jsonl, line 1: .*sqrt\(x\)"):
        load_suite_file(str(path))
