"""The game_theoretic and public_goods game masters (silicolab.sim.prefabs.games) and
their worlds: exact payoffs and money against hand computations, refused bad input,
offline determinism and checkpoint/resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from silicolab.core.errors import InputError
from silicolab.sim.checkpoint import load_checkpoint
from silicolab.sim.simulation import Simulation

WORLDS = Path(__file__).parents[2] / "src" / "silicolab" / "sim" / "worlds"
CLASSIC = {
    "cooperate,cooperate": [3, 3],
    "cooperate,defect": [0, 5],
    "defect,cooperate": [5, 0],
    "defect,defect": [1, 1],
}


def matrix_game(
    payoffs: dict[str, list[float]],
    moves: dict[str, list[str]],
    participants: list[str] | None = None,
    options: tuple[str, ...] = ("cooperate", "defect"),
) -> dict[str, Any]:
    """A two-person game whose offline players make the given ``moves`` per round."""
    rounds = len(next(iter(moves.values())))
    rules = [
        {"match": f"Round {r + 1} of {rounds}: does {who} ", "reply": plays[r]}
        for who, plays in moves.items()
        for r in range(rounds)
    ]
    scene: dict[str, Any] = {
        "name": "play",
        "kind": "choice",
        "rounds": rounds,
        "call_to_action": "Round {round} of {rounds}: does {name} pick?",
        "options": list(options),
    }
    if participants is not None:
        scene["participants"] = participants
    return {
        "name": "matrix",
        "entities": [{"name": n, "prefab": "minimal"} for n in moves],
        "game_master": {
            "prefab": "game_theoretic",
            "params": {"payoffs": payoffs, "scenes": [scene]},
        },
        "offline": {"rules": rules},
    }


def test_repeated_dilemma_scores_match_a_hand_computation() -> None:
    moves = {
        "Ann": ["cooperate", "cooperate", "defect", "defect", "cooperate"],
        "Bo": ["cooperate", "defect", "cooperate", "defect", "defect"],
    }
    # by hand: CC 3/3, CD 0/5, DC 5/0, DD 1/1, CD 0/5
    outcome = Simulation.model_validate(matrix_game(CLASSIC, moves)).run(seed=3)
    assert outcome.final_state["score"] == {"Ann": 9, "Bo": 14}
    scores = [r for r in outcome.timeline if r["variable"] == "score" and r["key"] == "Bo"]
    # the timeline shows a key only when it changes: Bo's +0 of round 3 leaves no row
    assert [(r["after_step"], r["value"]) for r in scores] == [
        (0, 0),
        (1, 3),
        (2, 8),
        (4, 9),
        (5, 14),
    ]
    # each player is told the other's choice and its own earnings, once per round
    told = [s["output"] for s in outcome.log.to_list() if s["kind"] == "observation"]
    assert (
        told.count(
            "play round 2: you chose cooperate and Bo chose defect; you earned 0 "
            "and your score is now 3."
        )
        == 1
    )
    assert sum("you chose" in t for t in told) == 10


def test_payoffs_follow_participant_order_not_entity_order() -> None:
    battle = {
        "opera,opera": [2, 1],
        "opera,fight": [0, 0],
        "fight,opera": [0, 0],
        "fight,fight": [1, 2],
    }
    moves = {"Ann": ["opera", "fight"], "Bo": ["opera", "fight"]}
    game = matrix_game(battle, moves, participants=["Bo", "Ann"], options=("opera", "fight"))
    outcome = Simulation.model_validate(game).run(seed=0)
    # Bo is the first player: opera,opera pays him 2; fight,fight pays Ann 2
    assert outcome.final_state["score"] == {"Ann": 3, "Bo": 3}
    assert outcome.events[2] == "play round 1: Bo opera, Ann opera; Bo +2, Ann +1."


def test_choices_stay_secret_until_the_round_ends() -> None:
    moves = {"Ann": ["defect"], "Bo": ["cooperate"]}
    log = Simulation.model_validate(matrix_game(CLASSIC, moves)).run(seed=0).log.to_list()
    seen_by_bo = [s["output"] for s in log if s["kind"] == "observation" and s["who"] == "Bo"]
    assert "Ann chose defect." not in seen_by_bo


def test_a_payoff_matrix_missing_a_pair_is_refused_naming_it() -> None:
    payoffs = {k: v for k, v in CLASSIC.items() if k != "defect,cooperate"}
    game = matrix_game(payoffs, {"Ann": ["defect"], "Bo": ["defect"]})
    with pytest.raises(ValueError, match="no entry for 'defect,cooperate'"):
        Simulation.model_validate(game)


def test_a_payoff_for_no_pair_and_a_three_player_scene_are_refused() -> None:
    game = matrix_game(
        {**CLASSIC, "cooperate,betray": [1, 1]}, {"Ann": ["defect"], "Bo": ["defect"]}
    )
    with pytest.raises(ValueError, match=r"payoffs \['cooperate,betray'\] are no pair"):
        Simulation.model_validate(game)
    three = matrix_game(CLASSIC, {"Ann": ["defect"], "Bo": ["defect"], "Cy": ["defect"]})
    with pytest.raises(InputError, match="two-player game but the simulation has 3 entities"):
        Simulation.model_validate(three).run(seed=0)
    three["game_master"]["params"]["scenes"][0]["participants"] = ["Ann", "Bo", "Cy"]
    with pytest.raises(ValueError, match="has 3 participants"):
        Simulation.model_validate(three)


def test_a_yaml_file_with_a_bad_matrix_names_line_and_pair() -> None:
    text = (WORLDS / "prisoners_dilemma.yaml").read_text()
    broken = text.replace("      defect,defect: [1, 1]\n", "")
    with pytest.raises(InputError, match=r"pd\.yaml, line \d+ .*'defect,defect'"):
        Simulation.from_yaml(broken, "pd.yaml")


# -- public goods ------------------------------------------------------------------------
def goods(
    contributions: dict[str, list[str]], punishes: dict[str, str] | None = None, **params: Any
) -> dict[str, Any]:
    """A public-goods game whose offline players give the listed amounts per round."""
    rounds = len(next(iter(contributions.values())))
    rules = [
        {
            "match": f"Round {r + 1} of {rounds}: you have received .* does {who} put",
            "reply": f'{{"value": {amount}}}',
        }
        for who, amounts in contributions.items()
        for r, amount in enumerate(amounts)
    ]
    rules += [{"match": f"Whom does {w} punish", "reply": t} for w, t in (punishes or {}).items()]
    return {
        "name": "goods",
        "entities": [{"name": n, "prefab": "minimal"} for n in contributions],
        "game_master": {"prefab": "public_goods", "params": {"rounds": rounds, **params}},
        "offline": {"rules": rules},
    }


def expected_money(
    given: dict[str, list[float]], endowment: float, multiplier: float
) -> dict[str, float]:
    """The linear public-goods payoff, summed over rounds, computed directly."""
    n, rounds = len(given), len(next(iter(given.values())))
    pots = [sum(g[r] for g in given.values()) for r in range(rounds)]
    return {
        p: sum(endowment - g[r] + pots[r] * multiplier / n for r in range(rounds))
        for p, g in given.items()
    }


def test_public_goods_money_matches_an_independent_computation() -> None:
    given = {"Ann": [10, 7.5, 3], "Bo": [0, 0, 0], "Cy": [4, 10, 10]}
    game = goods({p: [str(a) for a in g] for p, g in given.items()}, endowment=10, multiplier=1.6)
    outcome = Simulation.model_validate(game).run(seed=1)
    want = expected_money(given, 10, 1.6)
    assert outcome.final_state["money"] == pytest.approx(want, abs=1e-9)
    assert outcome.final_state["contributed"] == {"Ann": 20.5, "Bo": 0, "Cy": 24}
    assert outcome.rejected == []
    row = {r["entity"]: r for r in outcome.per_entity}["Bo"]
    assert row["money"] == pytest.approx(want["Bo"]) and row["contributed"] == 0


def test_an_out_of_range_contribution_is_rejected_and_counted() -> None:
    game = goods({"Ann": ["10"], "Bo": ["12"], "Cy": ["-1"]}, endowment=10, multiplier=2)
    outcome = Simulation.model_validate(game).run(seed=0)
    assert [(r["actor"], r["step"]) for r in outcome.rejected] == [("Bo", 0), ("Cy", 0)]
    assert "between 0 and 10" in outcome.rejected[0]["reason"]
    # a rejected amount counts as 0: only Ann's 10 is in the pot, doubled, shared by 3
    share = 10 * 2 / 3
    assert outcome.final_state["money"] == pytest.approx(
        {"Ann": share, "Bo": 10 + share, "Cy": 10 + share}
    )
    kinds = [s["kind"] for s in outcome.log.to_list() if s["who"] == "Bo"]
    assert "rejected" in kinds


def test_punishment_costs_the_punisher_and_fines_the_target_never_below_zero() -> None:
    game = goods(
        {"Ann": ["10", "10"], "Bo": ["0", "0"], "Cy": ["10", "10"]},
        {"Ann": "Bo", "Bo": "Cy", "Cy": "Bo"},
        endowment=10,
        multiplier=1.5,
        punishment={"cost": 2, "fine": 20},
    )
    outcome = Simulation.model_validate(game).run(seed=0)
    # round 1: pot 20 -> 30, 10 each: Ann 10, Bo 20, Cy 10. Costs: Ann 8, Bo 18, Cy 8;
    # fines of 20 (capped at what is left): Bo loses 18 (Ann's fine), then 0 (Cy's);
    # Cy loses 8 (Bo's fine)
    # round 2 (from Ann 8, Bo 0, Cy 0): 10 each again: Ann 18, Bo 20, Cy 10; costs: Ann 16,
    # Bo 18, Cy 8; fines: again 18 from Bo, 8 from Cy, 0 from Bo
    assert outcome.final_state["money"] == {"Ann": 16, "Bo": 0, "Cy": 0}
    assert outcome.final_state["fined"] == {"Ann": 0, "Bo": 36, "Cy": 16}
    assert (
        "Ann fined Bo 18 (cost 2); Bo fined Cy 8 (cost 2); Cy fined Bo 0 (cost 2)"
        in (outcome.events[7])
    )


def test_a_punishment_the_punisher_cannot_pay_is_rejected() -> None:
    game = goods(
        {"Ann": ["10"], "Bo": ["10"]},
        {"Ann": "Bo", "Bo": "nobody"},
        endowment=10,
        multiplier=1,
        punishment={"cost": 11, "fine": 1},
    )
    outcome = Simulation.model_validate(game).run(seed=0)
    assert [r["actor"] for r in outcome.rejected] == ["Ann"]
    assert "cannot pay 11 to punish Bo (has 10)" in outcome.rejected[0]["reason"]
    assert outcome.final_state["money"] == {"Ann": 10, "Bo": 10}


def test_punish_options_are_the_others_and_nobody() -> None:
    game = goods(
        {"Ann": ["1"], "Bo": ["1"], "Cy": ["1"]},
        {"Ann": "nobody", "Bo": "nobody", "Cy": "nobody"},
        endowment=10,
        multiplier=1,
        punishment={"cost": 1, "fine": 1},
    )
    gm, entities = Simulation.model_validate(game).build()
    gm.begin(entities)
    gm._current = 1  # the punishment round
    assert gm.spec_for("Bo").options == ("Ann", "Cy", "nobody")
    assert gm.spec_for("Bo").call_to_action.startswith("Round 1 of 1: you may punish")


# -- the worlds ----------------------------------------------------------------------------
def test_the_prisoners_dilemma_world_pays_tit_for_tat_against_a_defector() -> None:
    outcome = Simulation.load(WORLDS / "prisoners_dilemma.yaml").run(seed=0)
    # Alice C C D C D, Bob C D C D D: 3+0+5+0+1 and 3+5+0+5+1
    assert outcome.per_entity == [
        {"entity": "Alice", "score": 9, "choice": "defect"},
        {"entity": "Bob", "score": 14, "choice": "defect"},
    ]


def test_the_public_goods_world_has_a_free_rider_who_is_fined() -> None:
    outcome = Simulation.load(WORLDS / "public_goods.yaml").run(seed=0)
    given = {"Alice": [10, 10, 10], "Bob": [8, 8, 8], "Carol": [10, 10, 10], "Dan": [0, 0, 5]}
    want = expected_money(given, 10, 1.6)
    for punisher in ("Alice", "Carol"):
        want[punisher] -= 3 * 1
    want["Dan"] -= 3 * 2 * 3
    assert outcome.final_state["money"] == pytest.approx(want, abs=1e-9)
    assert outcome.final_state["fined"]["Dan"] == 18 and outcome.rejected == []


@pytest.mark.parametrize("world", ["prisoners_dilemma", "public_goods"])
def test_worlds_are_deterministic_and_resume_from_a_checkpoint(world: str, tmp_path: Path) -> None:
    sim = Simulation.load(WORLDS / f"{world}.yaml")
    assert sim.name == world and sim.description and sim.premise
    whole = sim.run(seed=7).to_dict()
    assert sim.run(seed=7).to_dict() == whole
    path = tmp_path / "episode.json"
    sim.model_copy(update={"max_steps": 2}).run(seed=7, checkpoint=path)
    assert load_checkpoint(path)["step"] == 2
    resumed = sim.run(seed=7, checkpoint=path, resume=True).to_dict()
    assert resumed == whole
    assert whole["steps"] == (5 if world == "prisoners_dilemma" else 6)


def test_a_declared_money_variable_must_cover_every_player() -> None:
    game = goods({"Ann": ["1"], "Bo": ["1"]}, endowment=10, multiplier=1.2)
    game["game_master"]["params"]["variables"] = [{"name": "money", "value": {"Ann": 5}}]
    with pytest.raises(InputError, match=r"'money' must map every player .* for \['Bo'\]"):
        Simulation.model_validate(game).run(seed=0)
    game["game_master"]["params"]["variables"] = [{"name": "money", "value": {"Ann": 5, "Bo": 2}}]
    outcome = Simulation.model_validate(game).run(seed=0)
    assert outcome.final_state["money"] == pytest.approx({"Ann": 5 + 9 + 1.2, "Bo": 2 + 9 + 1.2})
