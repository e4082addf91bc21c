"""Nested games: a market GM hands a "negotiate with X" attempt to a bargaining sub-game."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from silicolab.core.errors import InputError
from silicolab.core.seeding import child_seed
from silicolab.sim.agents import RuleAgent
from silicolab.sim.engines import arun_simultaneous, run_sequential
from silicolab.sim.entity import ActionSpec, Entity
from silicolab.sim.game_master import Attempt, GameMaster, Resolution
from silicolab.sim.grounded import GroundedState, GroundedVariable, at_least
from silicolab.sim.nested import NestedGame, NestedOutcome, nested_seed

STEP = 10.0


def haggler(agent: RuleAgent, spec: ActionSpec) -> str:
    """Concede ``STEP`` per turn from an opening offer, never past the reservation price."""
    role, reservation, turn = agent.state["role"], agent.state["reservation"], agent.step
    if role == "buyer":
        return f"offer {min(reservation, agent.state['open'] + STEP * turn):g}"
    return f"offer {max(reservation, agent.state['open'] - STEP * turn):g}"


def bargaining(parent: GameMaster, buyer: str, seller: str, limits: dict[str, float]) -> NestedGame:
    """A two-agent bargaining sub-game; the deal price is drawn between bid and ask."""

    def resolver(gm: GameMaster, attempt: Attempt) -> Resolution:
        amount = float(attempt.action.split()[-1])
        key = "bid" if attempt.actor == buyer else "ask"
        proposed = {key: amount}
        bid, ask = proposed.get("bid", gm.state["bid"]), proposed.get("ask", gm.state["ask"])
        if bid >= ask:
            price = round(ask + gm.rng.random() * (bid - ask), 2)
            return Resolution(
                f"{buyer} and {seller} agree on a price of {price:g}.",
                {**proposed, "price": price},
                terminate=True,
            )
        return Resolution(f"{attempt.actor} offers {amount:g}.", proposed)

    def build(parent: GameMaster, attempt: Attempt) -> tuple[GameMaster, list[Entity]]:
        state = GroundedState.of(
            GroundedVariable("bid", 0.0, float),
            GroundedVariable("ask", float("inf"), float),
            GroundedVariable("price", None, (float, type(None))),
        )
        agents: list[Entity] = [
            RuleAgent(buyer, haggler, {"role": "buyer", "reservation": limits[buyer], "open": 25}),
            RuleAgent(
                seller, haggler, {"role": "seller", "reservation": limits[seller], "open": 120}
            ),
        ]
        return GameMaster(state=state, resolver=resolver, name="Bargaining"), agents

    return NestedGame(
        build, max_steps=20, summarize=lambda sub: summary(parent, sub, buyer, seller)
    )


def summary(market: GameMaster, sub: GameMaster, buyer: str, seller: str) -> Resolution | str:
    """The deal as grounded updates for the parent market (read off the parent GM)."""
    price = sub.state["price"]
    if price is None:
        return f"{buyer} and {seller} part without a deal."
    return Resolution(
        f"{seller} sells one good to {buyer} for {price:g}.",
        {
            f"money:{buyer}": market.state[f"money:{buyer}"] - price,
            f"money:{seller}": market.state[f"money:{seller}"] + price,
            f"goods:{buyer}": market.state[f"goods:{buyer}"] + 1,
            f"goods:{seller}": market.state[f"goods:{seller}"] - 1,
        },
    )


def market(money: dict[str, float], limits: dict[str, float]) -> GameMaster:
    """A market day whose resolver starts a bargaining sub-game on "negotiate with X"."""
    variables = []
    for name, cash in money.items():
        variables.append(GroundedVariable(f"money:{name}", cash, float, validator=at_least(0)))
        variables.append(GroundedVariable(f"goods:{name}", 1, int, validator=at_least(0)))

    def resolver(gm: GameMaster, attempt: Attempt) -> Resolution | str:
        found = re.match(r"negotiate with (\w+)", attempt.action)
        if found:
            partner = found.group(1)
            return Resolution(
                f"{attempt.actor} sits down with {partner} to bargain.",
                nested=bargaining(gm, attempt.actor, partner, limits),
            )
        return f"{attempt.actor} browses the stalls."

    gm = GameMaster(state=GroundedState.of(*variables), resolver=resolver, name="Market")
    return gm


def day(money: dict[str, float], seed: int = 0) -> tuple[GameMaster, list]:
    limits = {"alice": 80.0, "bob": 50.0}
    gm = market(money, limits)
    alice = RuleAgent("alice", lambda a, s: "negotiate with bob" if a.step == 0 else "rests")
    bob = RuleAgent("bob", lambda a, s: "browses")
    log = run_sequential(gm, [alice, bob], max_steps=3, seed=seed)
    return gm, log.steps


def test_negotiation_sub_game_updates_parent_money_and_goods() -> None:
    gm, steps = day({"alice": 100.0, "bob": 10.0})
    price = 100.0 - gm.state["money:alice"]
    assert 50 <= price <= 80  # between the seller's and the buyer's reservation prices
    assert gm.state["money:bob"] == pytest.approx(10.0 + price)
    assert (gm.state["goods:alice"], gm.state["goods:bob"]) == (2, 0)
    assert (
        gm.events[0]
        == f"alice sits down with bob to bargain. bob sells one good to alice for {price:g}."
    )
    entry = next(s for s in steps if s.kind == "action" and s.who == "alice")
    nested = json.loads(entry.context["nested"])
    assert nested["engine"] == "sequential"
    assert nested["seed"] == child_seed(0, "nested", 0, "alice")
    assert nested["state"]["price"] == price
    assert nested["events"][-1] == f"alice and bob agree on a price of {price:g}."
    acts = [r for r in nested["log"] if r["kind"] == "action"]
    assert [r["who"] for r in acts[:2]] == ["alice", "bob"]
    assert "nested" not in steps[-1].context  # only the negotiating step carries it


def test_nested_game_is_deterministic_under_a_seed() -> None:
    first, a = day({"alice": 100.0, "bob": 10.0}, seed=7)
    second, b = day({"alice": 100.0, "bob": 10.0}, seed=7)
    assert [s.to_dict() for s in a] == [s.to_dict() for s in b]
    assert first.state.snapshot() == second.state.snapshot()
    prices = {
        100.0 - day({"alice": 100.0, "bob": 10.0}, seed=s)[0].state["money:alice"] for s in range(6)
    }
    assert len(prices) > 1  # the derived sub-game seed does change with the parent seed


def test_outcome_violating_parent_state_is_rejected() -> None:
    gm, steps = day({"alice": 30.0, "bob": 10.0})  # alice cannot pay any agreeable price
    assert gm.state.snapshot() == {
        "money:alice": 30.0,
        "goods:alice": 1,
        "money:bob": 10.0,
        "goods:bob": 1,
    }
    assert gm.state.history == [] and len(gm.rejections) == 1
    assert "cannot go below 0" in gm.rejections[0][1]
    entry = next(s for s in steps if s.kind == "rejected")
    assert entry.who == "alice" and "nested" in entry.context  # the sub-game log is kept
    seen = [s.output for s in steps if s.kind == "observation" and s.who == "alice"]
    assert any(o.startswith("Your action was not possible") for o in seen)
    assert not any("sits down" in s.output for s in steps if s.who == "bob")


def test_tool_starts_nested_game_with_default_summary_in_async_parent() -> None:
    limits = {"alice": 80.0, "bob": 50.0}
    game = bargaining(GameMaster(), "alice", "bob", limits)
    plain = NestedGame(game.build, engine="simultaneous", max_steps=20)

    def negotiate(gm: GameMaster, actor: str, partner: str) -> Resolution:
        """Bargain with another trader."""
        return Resolution("", nested=plain)

    gm = GameMaster(tools=[negotiate])
    alice = RuleAgent("alice", lambda a, s: 'negotiate(partner="bob")')
    bob = RuleAgent("bob", lambda a, s: "waits")
    log = asyncio.run(arun_simultaneous(gm, [alice, bob], max_steps=1, seed=3))
    assert re.fullmatch(r"alice and bob agree on a price of [\d.]+\.", gm.events[0])
    entry = next(s for s in log.steps if s.who == "alice" and s.kind == "action")
    assert json.loads(entry.context["nested"])["engine"] == "simultaneous"
    assert nested_seed(gm, Attempt("alice", "", 0)) == child_seed(3, "nested", 0, "alice")


def test_bad_nested_requests_are_refused() -> None:
    with pytest.raises(InputError, match="max_steps"):
        NestedGame(lambda gm, a: (gm, []), max_steps=0)
    with pytest.raises(InputError, match="engine"):
        NestedGame(lambda gm, a: (gm, []), engine="parallel", max_steps=1)  # type: ignore[arg-type]
    gm = GameMaster(resolver=lambda gm, a: Resolution("x", nested="not a game"))
    gm.begin([RuleAgent("a", lambda a, s: "x")])
    with pytest.raises(InputError, match="NestedGame"):
        gm.resolve(Attempt("a", "x"))
    assert isinstance(NestedOutcome, type)


def test_resume_replays_nested_game_with_the_parent_seed(tmp_path: Path) -> None:
    def run(max_steps: int, resume: bool, path: Path | None = None) -> tuple[GameMaster, list]:
        gm = market({"alice": 100.0, "bob": 10.0}, {"alice": 80.0, "bob": 50.0})
        alice = RuleAgent("alice", lambda a, s: "negotiate with bob" if a.step == 1 else "rests")
        bob = RuleAgent("bob", lambda a, s: "browses")
        log = run_sequential(
            gm, [alice, bob], max_steps=max_steps, seed=5, checkpoint=path, resume=resume
        )
        return gm, log.steps

    path = tmp_path / "market.json"
    run(2, False, path)  # checkpoint after two steps, before alice's negotiation
    resumed, steps = run(3, True, path)
    whole, expected = run(3, False)
    assert resumed.seed == 5
    assert resumed.state.snapshot() == whole.state.snapshot()
    assert whole.state["goods:alice"] == 2
    assert [s.to_dict() for s in steps] == [s.to_dict() for s in expected]
