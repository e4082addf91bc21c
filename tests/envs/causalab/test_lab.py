"""The crystal lab's episode protocol: spec §4 and golden tests 1, 3, 7, 8 of §12."""

from __future__ import annotations

import json

import pytest

from silicolab.core.errors import InputError
from silicolab.envs import InvalidAction, make, register, registered
from silicolab.envs.causalab import TARGET, CrystalLab, load_suite

SAMPLE_BASES = {
    "manipulator": {"density": 39, "moisture": 86, "quantumSize": 70},
    "reactor": {"moisture": 34, "density": 97, "quantumSize": 17},
}


def sample_lab(fidelity: str = "faithful", suite: str = "4nodes", **kw) -> CrystalLab:
    return CrystalLab(load_suite(suite)[0], fidelity=fidelity, bases=SAMPLE_BASES, **kw)


def test_golden_1_random42_prior_records_of_4nodes_0() -> None:
    lab = make("causalab", suite="4nodes", index=0, fidelity="faithful")
    assert lab.prior_records == [
        {"density": 14, "moisture": 3, "resonanceFreq": 42.0, "quantumSize": 95},
        {"density": 35, "moisture": 31, "resonanceFreq": 91.0, "quantumSize": 129},
    ]
    text = lab.task_text()
    assert (
        "- Observation 1: {'density': 14, 'moisture': 3, 'resonanceFreq': 42.0, 'quantumSize': 95}"
        in text
    )
    assert "- Observation 2: {'density': 35, 'moisture': 31, 'resonanceFreq': 91.0, " in text
    # the published records do not depend on the episode seed, in either fidelity
    assert make("causalab", seed=5).prior_records == lab.prior_records
    assert make("causalab", seed=5, seeded_priors=True).prior_records != lab.prior_records


def test_golden_3_sample_trajectory_of_4nodes_0() -> None:
    lab = sample_lab()
    assert lab.observe() == {"density": 39, "moisture": 86, TARGET: 150.0, "quantumSize": 109}
    assert lab.intervene("moisture", 50)[TARGET] == 114
    panel = lab.intervene("density", 80)
    assert (panel["quantumSize"], panel[TARGET]) == (150, 155)
    panel = lab.intervene("quantumSize", 100)
    assert (panel["quantumSize"], panel[TARGET]) == (100, 155)
    assert lab.budget_used == 3 and lab.budget_left == 9
    shown = lab.open_reactor()
    assert shown == {"temperatureC": 25.0, "moisture": 34, "density": 97, "quantumSize": 114}
    assert lab.target_frequency == 156
    result = lab.submit(99.26)
    assert not result.correct and result.submissions == 1 and result.remaining == 2
    assert not lab.done and lab.interventions == [
        ("moisture", 50),
        ("density", 80),
        ("quantumSize", 100),
    ]


def test_coded_rule_keeps_the_solved_intercept_and_paper_rule_shifts() -> None:
    coded = sample_lab()
    coded.intervene("quantumSize", 1)  # intercept 1 - 39 = -38
    assert coded.intervene("density", 12)["quantumSize"] == -26
    paper = sample_lab(intervention_rule="paper")
    assert paper.intervene("quantumSize", 1)["quantumSize"] == 40  # 1 + 1 * density
    assert paper.intervene("moisture", 10)["moisture"] == 10  # roots agree


def test_golden_7_third_correct_submission_rejected_only_in_faithful_mode() -> None:
    for fidelity, wins in (("faithful", False), ("fixed", True)):
        lab = sample_lab(fidelity)
        lab.open_reactor()
        lab.submit(100)
        lab.submit(200)
        result = lab.submit(157.5)
        assert result.within_tolerance
        assert result.correct is wins and lab.success is wins
        assert lab.done and lab.phase == "done"
        with pytest.raises(InvalidAction):
            lab.submit(156)


def test_success_needs_strictly_less_than_5_hz() -> None:
    lab = sample_lab("fixed")
    lab.open_reactor()
    assert not lab.submit(161).correct
    assert lab.submit(160.99).correct and lab.success and lab.end_reason == "reactor activated"


def test_opening_the_reactor_locks_the_manipulator_for_good() -> None:
    lab = sample_lab()
    lab.open_reactor()
    with pytest.raises(InvalidAction, match="locked"):
        lab.intervene("moisture", 1)
    assert lab.budget_used == 0 and lab.phase == "reactor"
    with pytest.raises(InvalidAction, match="Open the Crystal Reactor"):
        sample_lab().submit(156)


def test_refused_actions_cost_no_budget() -> None:
    lab = sample_lab(budget=1)
    before = lab.observe()
    for prop, value in ((TARGET, 5), ("radiation", 5), ("moisture", "lots"), ("moisture", None)):
        with pytest.raises(InvalidAction):
            lab.intervene(prop, value)
    assert lab.budget_used == 0 and lab.observe() == before and lab.interventions == []
    lab.intervene("moisture", 1)
    with pytest.raises(InvalidAction, match="adjustments are used"):
        lab.intervene("moisture", 2)
    assert lab.budget_used == 1
    golden = make("causalab", suite="4nodes_golden")
    with pytest.raises(InvalidAction, match="budget 0"):
        golden.intervene("density", 3)


def test_faithful_clamps_and_shows_distractors_fixed_does_not() -> None:
    faithful, fixed = sample_lab("faithful"), sample_lab("fixed")
    for lab in (faithful, fixed):
        lab.open_reactor()
    assert faithful.submit(20000).frequency == 10000
    assert faithful.submit(-3).frequency == 0
    assert fixed.submit(20000).frequency == 20000
    assert "temperatureC" in faithful.reactor_properties()
    assert fixed.reactor_properties() == {"moisture": 34, "density": 97, "quantumSize": 114}


def test_golden_8_hidden_disturbance_shifts_values_but_not_records_or_target() -> None:
    plain = sample_lab("fixed")
    lab = sample_lab("fixed", suite="4nodes_hidden_n2", hidden_draws=[5.0, -5.0, 0.0])
    assert lab.prior_records == plain.prior_records
    assert lab.target_frequency == plain.target_frequency == 156
    assert lab.observe() == plain.observe()  # H starts at 0
    # H = +5 on moisture and density after the first intervention
    assert lab.intervene("moisture", 50) == {
        "density": 44,
        "moisture": 55.0,
        TARGET: 124.0,
        "quantumSize": 114,
    }
    # H = -5; density's base is 80 (solved on noise-free values), shown 75
    assert lab.intervene("density", 80) == {
        "density": 75.0,
        "moisture": 45.0,
        TARGET: 145.0,
        "quantumSize": 145.0,
    }
    assert lab.intervene("quantumSize", 100)["quantumSize"] == 100  # H = 0, intercept 20
    assert lab.hidden_values == [5.0, -5.0, 0.0]
    assert lab.reactor_properties() == plain.reactor_properties()


def test_seeded_hidden_draws_are_reproducible_and_from_the_value_space() -> None:
    def draws(seed: int) -> list[float]:
        lab = make("causalab", suite="4nodes_hidden_vrange_pm50", seed=seed)
        for i in range(12):
            lab.intervene(lab.config.controllable[i % 3], i)
        return lab.hidden_values

    assert draws(3) == draws(3)
    assert set(draws(3)) <= {-50.0, 0.0, 50.0} and len(set(draws(3))) > 1
    assert draws(3) != draws(4)


@pytest.mark.parametrize("fidelity", ["fixed", "faithful"])
def test_episodes_are_deterministic_under_a_seed(fidelity: str) -> None:
    def run(seed: int) -> dict:
        lab = make("causalab", suite="5nodes", index=7, fidelity=fidelity, seed=seed)
        return lab.instance_bases | {"f": lab.target_frequency}

    assert run(11) == run(11)
    assert run(11) != run(12)
    lab = make("causalab", suite="5nodes", index=7, fidelity=fidelity, seed=11)
    first = lab.instance_bases
    lab.intervene(lab.config.controllable[0], 3)
    lab.reset()
    assert lab.instance_bases == first and lab.budget_used == 0
    lab.reset(seed=12)
    assert lab.seed == 12 and lab.instance_bases != first
    assert lab.target_frequency == run(12)["f"]


def test_quadratic_presets_fix_the_crystals() -> None:
    lab = make("causalab", suite="4nodes_quad_hard", seed=9)
    config = lab.config
    assert lab.instance_bases["reactor"] == {"quantumSize": 51.0, "density": 35.0, "moisture": 53.0}
    assert lab.prior_records[0] == config.evaluate(config.presets["observations"][0])
    expected = round(
        config.base_freq
        + 0.016 * 35.0**2
        + config.weights[("density", TARGET)] * 35.0
        + 0.008 * 53.0**2
        + config.weights[("moisture", TARGET)] * 53.0,
        2,
    )
    assert lab.target_frequency == pytest.approx(expected, abs=0.011)


def test_golden_records_are_offered_up_front() -> None:
    lab = make("causalab", suite="4nodes_golden")
    assert len(lab.golden_records) == 8 and "intervention" not in lab.golden_records[0]
    assert lab.golden_records[2]["intervention"] == {"target_prop": "density", "target_value": 77.0}
    text = lab.task_text()
    assert "- Golden intervention 3: intervene density to 77.0" in text
    assert "- Golden observation 1: props=" in text


def test_step_cap_ends_the_episode() -> None:
    lab = make("causalab", suite="7nodes")
    assert lab.max_env_steps == 32 + 24
    assert make("causalab", suite="4nodes_hidden_n1").max_env_steps == 29 + 24
    assert make("causalab", suite="4nodes", budget=6).max_env_steps == 29 + 12
    short = make("causalab", max_env_steps=2)
    short.intervene("density", 1)
    short.intervene("density", 2)
    assert short.done and short.end_reason == "step limit reached" and not short.success
    with pytest.raises(InvalidAction, match="episode is over"):
        short.intervene("density", 3)


def test_registry_and_factory_errors() -> None:
    assert "causalab" in registered()
    with pytest.raises(InputError, match="causalab"):
        make("boxing")
    with pytest.raises(InputError, match=r"0\.\.49"):
        make("causalab", index=50)
    with pytest.raises(InputError, match="fidelity"):
        make("causalab", fidelity="exact")
    register("toy-env", lambda **kw: ("toy", kw))
    assert make("toy-env", a=1) == ("toy", {"a": 1})
    with pytest.raises(InputError, match="already registered"):
        register("toy-env", lambda **kw: None)


def test_the_record_is_json_ready() -> None:
    lab = sample_lab()
    lab.intervene("moisture", 50)
    lab.open_reactor()
    lab.submit(156)
    record = json.loads(json.dumps(lab.to_record()))
    assert record["success"] and record["target_frequency"] == 156
    assert [e["event"] for e in record["history"]] == [
        "intervene",
        "open_reactor",
        "submit",
        "done",
    ]


def test_the_docs_example_and_package_doctests_run() -> None:
    import doctest
    import re
    from pathlib import Path

    import silicolab.envs
    import silicolab.envs.causalab

    doc = Path(__file__).resolve().parents[3] / "docs" / "causalab.md"
    block = re.search(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)
    assert block is not None
    scope: dict = {}
    exec(compile(block.group(1), str(doc), "exec"), scope)
    assert scope["lab"].budget_used == 1 and scope["lab"].phase in ("reactor", "done")
    for module in (silicolab.envs, silicolab.envs.causalab):
        assert doctest.testmod(module).failed == 0
