"""Random DAG/SCM generation against the CausaLab suite statistics (causalab.md §3.5-3.6)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from silicolab.core.errors import InputError
from silicolab.scm import (
    LinearMechanism,
    QuadraticMechanism,
    RandomSCMSpec,
    mec_size,
    random_dag,
    random_scm,
)

# Published per-suite mean edge counts (50 graphs each) and the generator's range.
CAUSALAB_EDGES = {
    3: (2.56, 2, 3),
    4: (4.54, 3, 6),
    5: (7.26, 4, 10),
    6: (8.82, 5, 12),
    7: (10.26, 6, 14),
}


@pytest.mark.parametrize("k", sorted(CAUSALAB_EDGES))
def test_causalab_edge_counts_and_target(k: int) -> None:
    published, low, high = CAUSALAB_EDGES[k]
    spec = RandomSCMSpec.causalab(k)
    counts = []
    for seed in range(300):
        graph = random_dag(spec, seed=seed)
        assert len(graph) == k
        assert graph.parents("y"), "the target always has a parent"
        assert graph.children("y") == ()
        counts.append(len(graph.edges))
    assert low <= min(counts) and max(counts) <= high
    assert set(counts) == set(range(low, high + 1))
    assert np.mean(counts) == pytest.approx((low + high) / 2, abs=0.35)
    assert np.mean(counts) == pytest.approx(published, abs=0.8)


def test_three_node_mec_mean_matches_hand_computation() -> None:
    # E = 3 (prob 1/2): complete graph, MEC 6. E = 2: the target's parent edge (a -> y)
    # plus one of the three valid ordered pairs a -> b (fork, MEC 3), b -> a (chain, 3)
    # or b -> y (collider, 1). Expected mean 0.5 * 6 + 0.5 * 7 / 3 = 4.17 (released 4.36).
    spec = RandomSCMSpec.causalab(3)
    sizes = [mec_size(random_dag(spec, seed=s)) for s in range(2000)]
    assert np.mean(sizes) == pytest.approx(25 / 6, abs=0.2)
    assert set(sizes) == {1, 3, 6}


def test_causalab_parameters() -> None:
    for seed in range(30):
        scm = random_scm(RandomSCMSpec.causalab(5), seed=seed)
        target = scm.mechanism("y")
        assert isinstance(target, LinearMechanism)
        assert target.intercept == int(target.intercept) and 15 <= target.intercept <= 25
        assert set(scm.coefficients().values()) <= {1.0, 2.0, 3.0}
        assert scm.noise("y").kind == "constant"
        assert all(scm.noise(n).kind == "integers" for n in scm.nodes if n != "y")
        assert scm.round_to == 2
        values = scm.evaluate({n: 50 for n in scm.nodes if n != "y"})
        assert values["y"] >= 15


def test_frequency_can_be_parent() -> None:
    spec = RandomSCMSpec.causalab(6, target_can_be_parent=True)
    graphs = [random_dag(spec, seed=s) for s in range(200)]
    assert all(g.parents("y") for g in graphs)
    assert any(g.children("y") for g in graphs)


def test_quadratic_hard_vertices_in_range() -> None:
    scm = random_scm(RandomSCMSpec.causalab(4, family="quadratic_hard"), seed=4)
    for name in scm.nodes:
        mechanism = scm.mechanism(name)
        assert isinstance(mechanism, QuadraticMechanism)
        for parent in mechanism.parents:
            u, w = mechanism.quadratic[parent], mechanism.linear[parent]
            assert u in (0.008, 0.012, 0.016)
            assert 35.2 <= -w / (2 * u) <= 64.9


def test_edge_density_mode() -> None:
    counts = [len(random_dag(8, seed=s, edge_density=0.3).edges) for s in range(300)]
    assert np.mean(counts) == pytest.approx(0.3 * 28, rel=0.08)


def test_reproducible_and_seed_dependent() -> None:
    spec = RandomSCMSpec.causalab(6)
    assert random_scm(spec, seed=9) == random_scm(spec, seed=9)
    assert any(random_dag(spec, seed=9) != random_dag(spec, seed=s) for s in range(10, 15))


def test_weight_range_with_signs() -> None:
    spec = RandomSCMSpec(n_nodes=7, n_edges=15, weight_range=(0.5, 2.0), negative_weights=True)
    weights = np.array(list(random_scm(spec, seed=2).coefficients().values()))
    assert len(weights) == 15
    assert (np.abs(weights) >= 0.5).all() and (np.abs(weights) <= 2.0).all()
    assert (weights < 0).any() and (weights > 0).any()


def test_spec_json_round_trip() -> None:
    spec = RandomSCMSpec.causalab(4, family="quadratic_easy", names=("a", "b", "c"))
    back = RandomSCMSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    assert back == spec
    assert random_scm(back, seed=1) == random_scm(spec, seed=1)


def test_bad_specs() -> None:
    with pytest.raises(InputError, match="impossible"):
        random_dag(4, n_edges=7)
    with pytest.raises(InputError, match="not both"):
        random_dag(4, n_edges=3, edge_density=0.5)
    with pytest.raises(InputError, match="at least 2"):
        random_dag(1)
    with pytest.raises(InputError, match="unknown CausaLab family"):
        RandomSCMSpec.causalab(4, family="cubic")  # type: ignore[arg-type]


def test_importing_scm_stays_light() -> None:
    code = (
        "import sys, silicolab.scm; "
        "print([m for m in ('statsmodels', 'causallearn', 'scipy.stats') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
