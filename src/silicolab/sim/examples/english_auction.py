"""An English (ascending clock) auction: an auctioneer, truthful bidders and a game master,
played from the simulation file ``worlds/auction.yaml`` (prefabs:
:mod:`silicolab.sim.prefabs.auction`).

Every round the clock price is announced and each active bidder answers "stay" or "drop"
(simultaneously; resolved in initiative order). Then the auctioneer either raises the price
by ``increment`` (possible only while two or more bidders are in) or closes the auction
(possible only when at most one is left). The grounded variables are the current price, the
high bidder and the set of active bidders; the game master rejects impossible actions.

A truthful clock bidder stays in while ``price <= budget``. Theory (private values) says the
auction clears at the second-highest budget, up to the increment and the start price. Two
price rules are supported:

* ``"second_dropout"`` — the last clock price the second-highest bidder accepted (equals
  the second-highest budget when ``increment`` divides the budget grid);
* ``"next_increment"`` — one increment above it: the clock price at which the winner was
  left alone (never more than the winner's budget, since the winner accepted it).

If the last bidders all drop in the same round (tied budgets) the item goes to the first of
them in initiative order at the last price they all accepted. If nobody accepts the start
price there is no sale.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from silicolab.core.errors import InputError
from silicolab.core.sync import sync_twin
from silicolab.sim.examples.files import grounded_history, varied, world
from silicolab.sim.game_master import GameMaster
from silicolab.sim.log import EpisodeLog
from silicolab.sim.prefabs.auction import (
    AUCTIONEER,
    PriceRule,
    auction_game_master,
    auction_premise,
    check_rules,
)
from silicolab.sim.simulation import Simulation

__all__ = ["AuctionResult", "arun_english_auction", "make_game_master", "run_english_auction"]


@dataclass(frozen=True)
class AuctionResult:
    """Outcome of one auction: ``winner``/``price`` are ``None`` when nothing was sold."""

    winner: str | None
    price: float | None
    rounds: int
    events: tuple[str, ...]
    log: EpisodeLog
    #: the grounded variables' changes, ``[step, name, old, new, cause]`` each
    history: tuple[list[Any], ...] = ()


def make_game_master(
    bidders: Sequence[str],
    *,
    increment: float = 50.0,
    start_price: float = 50.0,
    price_rule: PriceRule = "second_dropout",
    auctioneer: str = AUCTIONEER,
) -> GameMaster:
    """The auction's game master (rule-based resolver; no language model)."""
    return auction_game_master(
        bidders,
        increment=increment,
        start_price=start_price,
        price_rule=price_rule,
        auctioneer=auctioneer,
    )


def auction_simulation(
    budgets: Sequence[float],
    *,
    increment: float = 50.0,
    start_price: float = 50.0,
    price_rule: PriceRule = "second_dropout",
    max_rounds: int = 10_000,
) -> Simulation:
    """``worlds/auction.yaml`` with truthful bidders ``Bidder 1..N`` holding ``budgets``."""
    check_rules(increment, price_rule)
    base = world("auction")
    bidders = [
        {"name": f"Bidder {i + 1}", "prefab": "rule",
         "params": {"policy": "truthful_bidder", "args": {"budget": float(b)}}}
        for i, b in enumerate(budgets)
    ]  # fmt: skip
    params = {"increment": increment, "start_price": start_price, "price_rule": price_rule}
    gm = base.game_master.model_dump()
    return varied(
        "auction",
        {
            "premise": auction_premise(start_price, increment),
            "max_steps": 2 * max_rounds,
            "entities": [*bidders, base.entities[-1].model_dump()],
            "game_master": {**gm, "params": {**gm["params"], **params}},
        },
    )


async def arun_english_auction(
    budgets: Sequence[float],
    *,
    increment: float = 50.0,
    start_price: float = 50.0,
    price_rule: PriceRule = "second_dropout",
    seed: int = 0,
    max_rounds: int = 10_000,
    checkpoint: str | Path | None = None,
    resume: bool = False,
) -> AuctionResult:
    """Run one auction with truthful bidders ``Bidder 1..N`` holding ``budgets``
    (``checkpoint``/``resume``: see :meth:`silicolab.sim.simulation.Simulation.arun`)."""
    sim = auction_simulation(
        budgets,
        increment=increment,
        start_price=start_price,
        price_rule=price_rule,
        max_rounds=max_rounds,
    )
    outcome = await sim.arun(seed=seed, checkpoint=checkpoint, resume=resume)
    state = outcome.final_state
    if state["winner"] is None and outcome.events[-1:] != ["The auction closes without a sale."]:
        raise InputError(f"the auction did not finish within {max_rounds} rounds")
    return AuctionResult(
        winner=state["winner"],
        price=state["sale_price"],
        rounds=(outcome.steps + 1) // 2,
        events=tuple(outcome.events),
        log=outcome.log,
        history=tuple(grounded_history(outcome)),
    )


run_english_auction = sync_twin(arun_english_auction)
