"""The suite generator against the released suites' statistics (spec §3.5-§3.7, §12.6)."""

from __future__ import annotations

import math
import statistics

import pytest

from silicolab.envs.causalab import (
    TARGET,
    CrystalLab,
    generate_suite,
    load_suite,
    load_suite_file,
    write_suite,
)
from silicolab.scm import imec_size, mec_size

N = 200


def _edge_range(k: int) -> tuple[int, int]:
    return k - 1, min(k * (k - 1) // 2, 2 * k)


@pytest.mark.parametrize("k", [3, 4, 5, 6, 7])
def test_linear_suites_follow_the_released_rules(k: int) -> None:
    configs = generate_suite(k, N, seed=0)
    low, high = _edge_range(k)
    counts = [len(c.edges) for c in configs]
    assert min(counts) == low and max(counts) == high  # the whole range is used
    assert statistics.mean(counts) == pytest.approx((low + high) / 2, abs=0.6)
    for config in configs:
        assert len(config.nodes) == k and config.nodes[0] == TARGET
        assert len(set(config.nodes)) == k
        assert config.edges[0][1] == TARGET  # the first listed edge feeds the target
        assert config.graph.parents(TARGET) and not config.graph.children(TARGET)
        assert set(config.weights.values()) <= {1, 2, 3}
        assert float(config.base_freq).is_integer() and 15 <= config.base_freq <= 25
        assert config.budget == 4 * (k - 1)
    weights = [w for c in configs for w in c.weights.values()]
    assert {1, 2, 3} == set(weights)


def _mean_and_se(values: list[int]) -> tuple[float, float]:
    return statistics.mean(values), statistics.pstdev(values) / math.sqrt(len(values))


@pytest.mark.parametrize("k", [3, 4, 5, 6, 7])
def test_observational_mec_sizes_match_the_released_suites(k: int) -> None:
    released = [mec_size(c.graph) for c in load_suite(f"{k}nodes")]
    generated = [mec_size(c.graph) for c in generate_suite(k, N, seed=1)]
    (mean_r, se_r), (mean_g, se_g) = _mean_and_se(released), _mean_and_se(generated)
    assert abs(mean_r - mean_g) <= 2.5 * math.hypot(se_r, se_g), (mean_r, mean_g)
    assert max(generated) <= math.factorial(k)
    # all-properties-intervened gives a unique graph (§6.8)
    for config in generate_suite(k, 20, seed=2):
        assert imec_size(config.graph, config.controllable) == 1


def test_frequency_parent_suites_let_the_target_have_children() -> None:
    configs = generate_suite(6, 100, seed=0, frequency_can_be_parent=True)
    assert all(c.graph.parents(TARGET) for c in configs)
    assert sum(bool(c.graph.children(TARGET)) for c in configs) > 30
    assert all(c.frequency_can_be_parent for c in configs)


def test_quadratic_suites_have_vertices_in_range_and_presets() -> None:
    for config in generate_suite(4, 30, family="quadratic", seed=3):
        assert config.family == "quadratic" and config.presets is not None
        for edge, u in config.quad_weights.items():
            assert u in (0.008, 0.012, 0.016)
            assert 35.2 - 1e-6 <= -config.weights[edge] / (2 * u) <= 64.9 + 1e-6
        lab = CrystalLab(config)
        assert lab.instance_bases["reactor"] == config.presets["reactor"]


def test_hidden_suites_hit_a_target_parent_first() -> None:
    for config in generate_suite(4, 30, seed=4, hidden=2):
        assert config.hidden is not None and len(config.hidden.affected_nodes) == 2
        assert config.hidden.affected_nodes[0] in config.graph.parents(TARGET)
    hits = generate_suite(4, 5, seed=4, hidden=2, hidden_hits_target=True, hidden_values=(-1, 1))
    assert all(c.hidden.affected_nodes[0] == TARGET for c in hits)
    assert hits[0].hidden.value_space == (-1.0, 1.0)


@pytest.mark.parametrize("k", [4, 6])
def test_golden_chains_replay_and_drive_imec_to_one(k: int) -> None:
    for config in generate_suite(k, 25, seed=5, golden=True):
        assert config.budget == 0 and len(config.golden_observations) == 2
        targets = [step.prop for step in config.golden_chain]
        assert targets[: len(config.controllable)] == sorted(config.controllable)
        assert imec_size(config.graph, targets) == 1
        for obs in config.golden_observations:
            assert all(v >= 15 for v in obs.props.values() if v is not None)
        # replay from entry 0: intercept = value minus the parents' terms
        first = config.golden_observations[0].props
        bases = {
            n: round(
                first[n] - sum(w * first[p] for (p, c), w in config.weights.items() if c == n), 2
            )
            for n in config.controllable
        }
        lab = CrystalLab(config, bases={"manipulator": bases, "reactor": bases})
        lab.budget = len(config.golden_chain)
        for step in config.golden_chain:
            assert 0 <= step.value <= 100 and float(step.value).is_integer()
            panel = lab.intervene(step.prop, step.value)
            assert panel[TARGET] == pytest.approx(step.freq, abs=0.01)
            assert {n: panel[n] for n in step.props} == pytest.approx(step.props, abs=0.01)


def test_generation_is_deterministic_and_round_trips_through_jsonl(tmp_path) -> None:
    a = generate_suite(5, 10, seed=8, hidden=1, golden=True)
    b = generate_suite(5, 10, seed=8, hidden=1, golden=True)
    assert [c.raw for c in a] == [c.raw for c in b]
    assert [c.raw for c in a] != [
        c.raw for c in generate_suite(5, 10, seed=9, hidden=1, golden=True)
    ]
    path = write_suite(a, tmp_path / "mine.jsonl")
    loaded = load_suite_file(str(path))
    assert [c.raw for c in loaded] == [c.raw for c in a]
    assert loaded[3].evaluate({n: 7 for n in loaded[3].controllable}) == a[3].evaluate(
        {n: 7 for n in a[3].controllable}
    )
