"""Studies whose conditions run in a simulation: treatments set the world's fields,
measurements read its grounded variables, questions go to its entities and game master."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import yaml

import silicolab as sl
from silicolab.core.errors import InputError
from silicolab.sim.simulation import OfflineRule
from silicolab.sim.worlds import load_world
from silicolab.studies.design import Condition
from silicolab.studies.hypothesis import Hypothesis
from silicolab.studies.sim_conduct import arun_simulation_condition, set_path, treated_simulation

GARDEN = Path(__file__).parent / "data" / "garden_fund.yaml"
CAMPAIGN = "game_master.params.scenes.campaign.rounds"


def _garden() -> dict:
    return yaml.safe_load(GARDEN.read_text())


def test_treatments_write_the_worlds_fields() -> None:
    h = Hypothesis.model_validate(_garden())
    sim = treated_simulation(h, Condition("c1", 0, {"multiplier": "2.0", "fine": "2"}))
    assert sim.game_master.params["multiplier"] == 2.0
    assert sim.game_master.params["punishment"] == {"cost": 1, "fine": 2.0}
    assert load_world("public_goods").game_master.params["multiplier"] == 1.6  # untouched
    data = {"entities": [{"name": "Bob", "params": {}}]}
    set_path(data, "entities.Bob.params.plan", "lie")
    assert data == {"entities": [{"name": "Bob", "params": {"plan": "lie"}}]}
    with pytest.raises(InputError, match="nothing named 'Zed'"):
        set_path(data, "entities.Zed.params.plan", "x")


def test_the_simulation_section_is_checked_against_the_scm() -> None:
    unset = _garden()
    del unset["simulation"]["treatments"]["fine"]
    with pytest.raises(ValueError, match=r"causes \['fine'\] are not set in the simulation"):
        Hypothesis.model_validate(unset)
    unmeasured = _garden()
    unmeasured["simulation"]["measurements"] = {}
    with pytest.raises(ValueError, match="survey question or a simulation measurement"):
        Hypothesis.model_validate(unmeasured)
    stray = copy.deepcopy(_garden())
    stray["simulation"]["measurements"]["votes"] = {"variable": "money"}
    with pytest.raises(ValueError, match="'votes' is not a measured variable"):
        Hypothesis.model_validate(stray)


def _mean_money(multiplier: float, fine: float) -> float:
    """The outcome computed apart from the study: the world played directly."""
    sim = load_world("public_goods")
    params = {**sim.game_master.params, "multiplier": multiplier,
              "punishment": {"cost": 1, "fine": fine}}  # fmt: skip
    gm = sim.game_master.model_copy(update={"params": params})
    money = sim.model_copy(update={"game_master": gm}).run(seed=0).final_state["money"]
    return sum(money.values()) / len(money)


def test_a_public_goods_study_measures_each_condition_and_refuses_a_perfect_fit(
    tmp_path: Path,
) -> None:
    result = sl.run_study(GARDEN, subjects="rule", runs_dir=tmp_path)
    rows = result.record["data"]["rows"]
    assert len(rows) == 6
    for row in rows:
        expected = _mean_money(float(row["multiplier"]), float(row["fine"]))
        assert row["mean_money"] == pytest.approx(expected, abs=1e-9)
    # mean money is linear in the multiplier, with slope the mean total contribution per
    # neighbour (the offline contributions do not depend on the treatments): the rows
    # recover it exactly (least squares computed here, apart from the study's fit) ...
    contributed = load_world("public_goods").run(seed=0).final_state["contributed"]
    x = np.array([[1.0, float(r["multiplier"]), float(r["fine"])] for r in rows])
    beta = np.linalg.lstsq(x, np.array([r["mean_money"] for r in rows]), rcond=None)[0]
    assert beta[1] == pytest.approx(sum(contributed.values()) / len(contributed), rel=1e-9)
    # ... and because the offline world is deterministic the study publishes no standard
    # errors or p-values made of rounding noise: it names the perfect fit instead
    assert result.status == "degraded"
    assert [p["kind"] for p in result.record["fit_problems"]] == ["perfect_fit"]


async def test_questions_go_to_the_entities_and_the_game_master(tmp_path: Path) -> None:
    world = load_world("election")
    asked = OfflineRule(match="How many votes did Alice get", reply="Alice got 2 votes.")
    offline = world.offline.model_copy(update={"rules": [*world.offline.rules, asked]})
    path = world.model_copy(update={"offline": offline}).save(tmp_path / "town.yaml")
    data = {
        "name": "election_study",
        "scenario": "A small town elects its mayor while one candidate smears the other.",
        "agents": [{"name": n, "role": "resident"} for n in ("Alice", "Bob", "Carol")],
        "variables": [
            {"name": "alice_votes", "role": "outcome", "type": "continuous",
             "causes": ["rounds"], "questions": [
                 {"addressee": "coordinator", "text": "How many votes did Alice get?"}]},
            {"name": "rounds", "role": "cause", "type": "count", "values": ["1", "2"],
             "scope": "scenario", "attribute": "campaign days"},
        ],
        "simulation": {"world": str(path), "treatments": {"rounds": {"path": CAMPAIGN}}},
    }  # fmt: skip
    h = Hypothesis.model_validate(data)
    run = await arun_simulation_condition(h, Condition("c1", 0, {"rounds": "1"}))
    assert run.error is None, run.error
    # the game master, as "coordinator", answers from the world's offline script
    assert run.values == {"alice_votes": 2.0}
    assert run.survey[0]["addressee"] == "coordinator"
    assert run.statements and run.health.steps > 0
