"""SCM: sampling, evaluation, the three intervention kinds, JSON round-trip."""

from __future__ import annotations

import json

import numpy as np
import pytest

from silicolab.core.errors import InputError
from silicolab.scm import (
    SCM,
    CallableMechanism,
    LinearMechanism,
    Noise,
    QuadraticMechanism,
    Variable,
)


@pytest.fixture
def mediation() -> SCM:
    # x ~ N(1, 2^2); m = 1 + 2x + N(0, 1); y = -1 + 0.5 m + 3x + N(0, 0.5^2)
    return SCM(
        {
            "x": LinearMechanism(intercept=1.0),
            "m": LinearMechanism({"x": 2.0}, intercept=1.0),
            "y": LinearMechanism({"m": 0.5, "x": 3.0}, intercept=-1.0),
        },
        {"x": Noise.normal(0, 2), "m": Noise.normal(0, 1), "y": Noise.normal(0, 0.5)},
    )


@pytest.fixture
def crystal() -> SCM:
    """CausaLab graph 4nodes_0: freq = 25 + density + moisture; qS = base + density;
    every property's base is a per-instance integer in [0, 100]."""
    base = Noise.integers(0, 100)
    return SCM(
        {
            "resonanceFreq": LinearMechanism({"density": 1, "moisture": 1}, intercept=25),
            "quantumSize": LinearMechanism({"density": 1}),
            "density": LinearMechanism(),
            "moisture": LinearMechanism(),
        },
        {
            "resonanceFreq": Noise.constant(0),
            "quantumSize": base,
            "density": base,
            "moisture": base,
        },
        round_to=2,
    )


def test_sample_moments_match_closed_form(mediation: SCM) -> None:
    data = mediation.sample(200_000, seed=3)
    assert list(data.columns) == ["x", "m", "y"]
    # E[m] = 1 + 2*1 = 3; Var[m] = 4*4 + 1 = 17
    # y = -1 + 0.5 m + 3 x + e = -0.5 + 4x + 0.5 e_m + e_y: E = 3.5, Var = 64 + 0.25 + 0.25
    assert data.m.mean() == pytest.approx(3.0, abs=0.05)
    assert data.m.var() == pytest.approx(17.0, rel=0.02)
    assert data.y.mean() == pytest.approx(3.5, abs=0.1)
    assert data.y.var() == pytest.approx(64.5, rel=0.02)


def test_sampling_is_reproducible_and_seed_dependent(mediation: SCM) -> None:
    a = mediation.sample(100, seed=11)
    assert a.equals(mediation.sample(100, seed=11))
    assert not a.equals(mediation.sample(100, seed=12))


def test_node_noise_does_not_depend_on_other_nodes(mediation: SCM) -> None:
    # Adding an unrelated node must not change the draws of existing nodes.
    bigger = SCM(
        {
            "z": LinearMechanism(),
            "x": mediation.mechanism("x"),
            "m": mediation.mechanism("m"),
            "y": mediation.mechanism("y"),
        },
        {n: mediation.noise(n) for n in mediation.nodes},
    )
    assert np.allclose(bigger.sample(50, seed=5)[["x", "m", "y"]], mediation.sample(50, seed=5))


def test_evaluate_with_bases_is_deterministic(mediation: SCM) -> None:
    values = mediation.evaluate({"x": 0.0, "m": 0.5, "y": 0.25})
    # x = 1; m = 1 + 2 + 0.5 = 3.5; y = -1 + 1.75 + 3 + 0.25 = 4.0
    assert values == {"x": 1.0, "m": 3.5, "y": pytest.approx(4.0)}
    assert list(values) == ["x", "m", "y"]


def test_hard_do(mediation: SCM) -> None:
    done = mediation.do({"m": 10.0})
    assert done.graph.parents("m") == ()
    values = done.evaluate({"x": 0.0, "y": 0.0})
    assert values["m"] == 10.0
    assert values["y"] == pytest.approx(-1 + 5 + 3 * 1)
    data = done.sample(100_000, seed=1)
    assert (data.m == 10.0).all()
    # y = -1 + 5 + 3x + e, x ~ N(1, 4): mean 7, var 36.25
    assert data.y.mean() == pytest.approx(7.0, abs=0.05)
    assert data.y.var() == pytest.approx(36.25, rel=0.02)
    assert mediation.graph.parents("m") == ("x",)  # the original is untouched


def test_additive_shift_keeps_parents(mediation: SCM) -> None:
    shifted = mediation.shift({"m": 2.0})
    assert shifted.graph == mediation.graph
    bases = {"x": 0.5, "m": 0.0, "y": 0.0}
    before, after = mediation.evaluate(bases), shifted.evaluate(bases)
    assert after["m"] - before["m"] == pytest.approx(2.0)
    assert after["y"] - before["y"] == pytest.approx(0.5 * 2.0)
    assert after["x"] == before["x"]


def test_set_now_reproduces_causalab_sample_trajectory(crystal: SCM) -> None:
    # Spec §12 test 3: manipulator density 39, moisture 86, qS intercept 70.
    bases = {"density": 39, "moisture": 86, "quantumSize": 70}
    start = crystal.evaluate(bases)
    assert start["quantumSize"] == 109 and start["resonanceFreq"] == 150
    bases = crystal.set_now(bases, "moisture", 50)
    assert crystal.evaluate(bases)["resonanceFreq"] == 114
    bases = crystal.set_now(bases, "density", 80)
    values = crystal.evaluate(bases)
    assert values["quantumSize"] == 150 and values["resonanceFreq"] == 155
    bases = crystal.set_now(bases, "quantumSize", 100)
    values = crystal.evaluate(bases)
    assert values["quantumSize"] == 100 and values["resonanceFreq"] == 155
    assert bases["quantumSize"] == 20  # the solved intercept: 100 - density


def test_set_now_intercept_persists_for_later_parent_changes(crystal: SCM) -> None:
    # Spec §4.2 Golden example: qS set to 1 while density = 77 -> intercept -76; then
    # density set to 12 -> qS = -64.
    bases = {"density": 77, "moisture": 10, "quantumSize": 5}
    bases = crystal.set_now(bases, "quantumSize", 1)
    assert bases["quantumSize"] == -76
    bases = crystal.set_now(bases, "density", 12)
    assert crystal.evaluate(bases)["quantumSize"] == -64


def test_prior_records_of_causalab_graph(crystal: SCM) -> None:
    # Spec §4.1: Random(42) bases (qS 81, density 14, moisture 3) give freq 42, qS 95.
    values = crystal.evaluate({"quantumSize": 81, "density": 14, "moisture": 3})
    assert values["resonanceFreq"] == 42 and values["quantumSize"] == 95


def test_set_now_errors(crystal: SCM) -> None:
    with pytest.raises(InputError, match="no base value for 'moisture'"):
        crystal.set_now({"density": 1, "quantumSize": 1}, "density", 3)
    with pytest.raises(InputError, match="must be a number"):
        crystal.set_now({"density": 1, "quantumSize": 1, "moisture": 1}, "density", "hot")
    with pytest.raises(InputError, match="unknown variable"):
        crystal.set_now({"density": 1, "quantumSize": 1, "moisture": 1}, "mass", 3)


def test_rounding_happens_before_children() -> None:
    scm = SCM(
        {"a": LinearMechanism(), "b": LinearMechanism({"a": 1000.0})},
        {"a": Noise.constant(0.0), "b": Noise.constant(0.0)},
        round_to=2,
    )
    # a = 0.004 rounds to 0.0, so b sees 0 rather than 4.
    assert scm.evaluate({"a": 0.004})["b"] == 0.0


def test_quadratic_and_callable_mechanisms() -> None:
    scm = SCM(
        {
            "p": LinearMechanism(),
            "q": LinearMechanism(),
            "r": QuadraticMechanism({"p": -1.0}, {"p": 0.5}, intercept=2.0),
            "s": CallableMechanism(lambda v: v["p"] * v["q"], parents=("p", "q"), intercept=1.0),
        },
        {n: Noise.constant(0.0) for n in "pqrs"},
    )
    values = scm.evaluate({"p": 4.0, "q": -2.0})
    assert values["r"] == 2.0 + 0.5 * 16 - 4.0
    assert values["s"] == 1.0 - 8.0
    data = scm.sample(1000, seed=0, bases={"p": np.arange(1000.0), "q": 2.0})
    assert np.allclose(data.s, 1 + 2 * np.arange(1000.0))


def test_noise_kinds() -> None:
    scm = SCM(
        {"i": LinearMechanism(), "u": LinearMechanism(), "c": LinearMechanism()},
        {"i": Noise.integers(0, 3), "u": Noise.uniform(-1, 1), "c": Noise.constant(7)},
    )
    data = scm.sample(5000, seed=2)
    assert set(data.i.unique()) == {0.0, 1.0, 2.0, 3.0}
    assert data.u.between(-1, 1).all() and abs(data.u.mean()) < 0.05
    assert (data.c == 7).all()
    with pytest.raises(InputError, match="low <= high"):
        Noise.uniform(2, 1)
    with pytest.raises(InputError, match="standard deviation"):
        Noise.normal(0, -1)


def test_json_round_trip(crystal: SCM, mediation: SCM) -> None:
    for scm in (crystal, mediation, mediation.do({"m": 1.0}).shift({"y": 2.0})):
        data = json.loads(json.dumps(scm.to_dict()))
        assert data["schema_version"] == 1
        back = SCM.from_dict(data)
        assert back == scm
        assert back.sample(20, seed=4).equals(scm.sample(20, seed=4))


def test_json_keeps_variables() -> None:
    scm = SCM(
        {"y": LinearMechanism({"x": 1.0})},
        variables=[Variable(name="x", type="count", units="people"), Variable(name="y")],
    )
    back = SCM.from_dict(json.loads(json.dumps(scm.to_dict())))
    assert back.graph.variable("x").units == "people"


def test_callable_mechanism_is_not_serializable() -> None:
    scm = SCM({"a": LinearMechanism(), "b": CallableMechanism(np.sin, parents=("a",))})
    with pytest.raises(InputError, match="cannot be serialized"):
        scm.to_dict()


def test_construction_errors() -> None:
    with pytest.raises(InputError, match="unknown variable 'x'"):
        SCM({"y": LinearMechanism({"x": 1.0}, intercept=0)}, variables=[Variable(name="y")])
    with pytest.raises(InputError, match="cycle"):
        SCM({"a": LinearMechanism({"b": 1.0}), "b": LinearMechanism({"a": 1.0})})
    with pytest.raises(InputError, match="noise is given for unknown"):
        SCM({"a": LinearMechanism()}, {"b": Noise.normal()})
    with pytest.raises(InputError, match="must be a number"):
        LinearMechanism({"a": "big"})
    with pytest.raises(InputError, match="non-negative integer"):
        SCM({"a": LinearMechanism()}).sample(-1)
    with pytest.raises(InputError, match="one number or 3 numbers"):
        SCM({"a": LinearMechanism()}).sample(3, bases={"a": [1.0, 2.0]})


def test_coefficients(mediation: SCM) -> None:
    assert mediation.coefficients() == {("x", "m"): 2.0, ("m", "y"): 0.5, ("x", "y"): 3.0}
