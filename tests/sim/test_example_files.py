"""The three worked examples as simulation files give the results of the old hand-built
code (computed here by hand or in closed form), files round-trip through YAML, and the
small business world runs offline deterministically with its money conserved."""

from __future__ import annotations

from pathlib import Path

import pytest

from silicolab.sim.examples.files import WORLDS, grounded_history, world
from silicolab.sim.grounded import decode_value
from silicolab.sim.simulation import Simulation

NAMES = ("auction", "market", "bargaining", "small_business")


def test_auction_file_clears_at_the_second_highest_budget() -> None:
    outcome = world("auction").run(seed=0)
    # truthful bidders, budgets (150, 300, 250), clock from 50 by 50: Bidder 1 drops at
    # 200, Bidder 3 at 300, so Bidder 2 wins and pays the second-highest budget, 250,
    # after the clock reached 300 (6 bidding rounds, each a bid step and an auctioneer step).
    assert (outcome.final_state["winner"], outcome.final_state["sale_price"]) == ("Bidder 2", 250.0)
    assert outcome.events[-1] == "Bidder 2 wins the item at 250."
    assert "Bidder 1 drops out at 200." in outcome.events
    assert outcome.steps == 12 and (outcome.steps + 1) // 2 == 6
    prices = [h[3] for h in grounded_history(outcome) if h[1] == "price"]
    assert prices == [100.0, 150.0, 200.0, 250.0, 300.0]


def test_market_file_trades_as_computed_by_hand() -> None:
    outcome = world("market").run(seed=0)
    trades = decode_value(outcome.final_state["trades"])
    # Round 1: S1 asks 6, S2 9, S3 12; B1 (reservation 12) buys from S1 at 6; B2 (money 5)
    # cannot pay 6: rejected; B3 buys from S1 at 6 (S1 now empty).
    first = [(t["buyer"], t["seller"], t["price"]) for t in trades[:2]]
    assert first == [("B1", "S1", 6.0), ("B3", "S1", 6.0)]
    assert outcome.rejected[0]["reason"] == "B2's money cannot go below 0 (it would be -1.0)"
    money = sum(v for k, v in outcome.final_state.items() if k.startswith("money:"))
    goods = sum(v for k, v in outcome.final_state.items() if k.startswith("goods:"))
    assert money == pytest.approx(30.0 + 5.0 + 20.0) and goods == 2 + 1 + 2
    rows = {r["entity"]: r for r in outcome.per_entity}
    assert rows["B1"]["goods"] == sum(t["buyer"] == "B1" for t in trades)


def test_bargaining_file_strikes_the_scripted_deal() -> None:
    outcome = world("bargaining").run(seed=0)
    # values 4 and 10: the seller opens at max(1.5 * 4, 4 + 2) = 6, the buyer at 0.5 * 10 = 5;
    # the seller's next offer would be max(4, (6 + 5) / 2) = 5.5, within 0.5 of 5: deal at 5.
    assert outcome.events == [
        "Seller: I can let it go for $6.00.",
        "Buyer: I could pay $5.00.",
        "Seller: Deal at $5.00.",
    ]
    answers = {(a["addressee"], a["variable"]): a["value"] for a in outcome.survey}
    assert answers == {
        ("Seller", "deal"): 1,
        ("Seller", "price"): 5.0,
        ("Buyer", "deal"): 1,
        ("Buyer", "price"): 5.0,
    }
    assert not [s for s in outcome.log.steps if s.who == "Coordinator" and s.kind == "statement"]
    decisions = [s.output for s in outcome.log.steps if s.kind == "decision"]
    assert decisions == ["continue", "continue", "stop"]


def test_the_example_functions_return_the_file_results() -> None:
    from silicolab.sim.examples.registry import EXAMPLES

    auction = EXAMPLES["auction"](None, 0)
    assert (auction["winner"], auction["price"], auction["rounds"]) == ("Bidder 2", 250.0, 6)
    assert auction["log"] == world("auction").run(seed=0).log.to_list()
    market = EXAMPLES["market"](None, 0)
    played = world("market").run(seed=0)
    assert market["log"] == played.log.to_list() and market["rejected"] == played.rejected
    assert market["grounded_history"] == grounded_history(played)
    bargaining = EXAMPLES["bargaining"](None, 0)
    assert (bargaining["deal"], bargaining["price"]) == (True, 5.0)


@pytest.mark.parametrize("name", NAMES)
def test_files_round_trip_through_yaml(name: str, tmp_path: Path) -> None:
    sim = Simulation.load(WORLDS / f"{name}.yaml")
    assert sim.name == name and sim.description and sim.premise
    again = Simulation.from_yaml(sim.to_yaml())
    assert again == sim
    sim.save(tmp_path / "copy.yaml")
    assert Simulation.load(tmp_path / "copy.yaml") == sim


def test_small_business_is_deterministic_and_conserves_money() -> None:
    sim = world("small_business")
    first, second = sim.run(seed=0), sim.run(seed=0)
    assert first.log.to_list() == second.log.to_list()
    start = {"Rosa": 0.0, "Ann": 10.0, "Ben": 4.0, "Cara": 6.0}
    # Replay the money through the timeline: the total is the same after every step.
    money, totals = dict(start), {}
    for row in first.timeline:
        if row["variable"].startswith("money:") and row["after_step"] > 0:
            money[row["variable"].split(":", 1)[1]] = row["value"]
            totals[row["after_step"]] = sum(money.values())
    assert len(totals) == 3 and set(totals.values()) == {sum(start.values())}
    trades = decode_value(first.final_state["trades"])
    # 3 loaves at 3 coins: Ann, Ben, Ann; then Ben cannot pay, and the bakery is empty.
    assert [(t["buyer"], t["price"]) for t in trades] == [("Ann", 3.0), ("Ben", 3.0), ("Ann", 3.0)]
    rows = {r["entity"]: r for r in first.per_entity}
    assert {n: rows[n]["money"] for n in start} == {
        "Rosa": 9.0,
        "Ann": 4.0,
        "Ben": 1.0,
        "Cara": 6.0,
    }
    assert {n: rows[n]["goods"] for n in start} == {"Rosa": 0, "Ann": 2, "Ben": 1, "Cara": 0}
    reasons = {r["reason"] for r in first.rejected}
    assert reasons == {
        "Ben's money cannot go below 0 (it would be -2.0)",
        "Rosa's goods cannot go below 0 (it would be -1)",
    }
    assert "Cara asks Rosa whether the rye is fresh today." in first.events  # narrated
    assert first.gm_llm_calls == 4
