"""A small market with grounded money and goods: rule-based traders and a game master,
played from the simulation file ``worlds/market.yaml`` (prefabs:
:mod:`silicolab.sim.prefabs.market`).

Sellers hold widgets that cost them ``cost`` each; every turn a seller posts an ask with the
``post(price)`` tool, starting at 1.5 x cost and coming down by 10 % of cost per round, never
below cost. Buyers hold money and want ``wants`` widgets worth ``reservation`` each; on its turn
a buyer calls ``trade(counterparty, item, price)`` on the cheapest posted ask it can accept,
at that ask. Buyers do not see anyone's money or stock, so some of their attempts are
impossible: the game master's grounded state (each trader's money ``>= 0`` and goods ``>= 0``)
rejects them, and the buyer avoids that seller afterwards. Trades move money and goods
atomically, so both totals are conserved.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from silicolab.core.errors import InputError
from silicolab.sim.examples.files import grounded_history, varied, world
from silicolab.sim.game_master import GameMaster
from silicolab.sim.grounded import decode_value
from silicolab.sim.log import EpisodeLog
from silicolab.sim.outcome import SimulationOutcome
from silicolab.sim.prefabs.market import ITEM, market_game_master
from silicolab.sim.simulation import Simulation

#: Default sellers: name -> (cost per widget, widgets held).
SELLERS: dict[str, tuple[float, int]] = {"S1": (4.0, 2), "S2": (6.0, 1), "S3": (8.0, 2)}
#: Default buyers: name -> (reservation price per widget, money, widgets wanted).
BUYERS: dict[str, tuple[float, float, int]] = {
    "B1": (12.0, 30.0, 2),
    "B2": (10.0, 5.0, 1),
    "B3": (9.0, 20.0, 2),
}


@dataclass(frozen=True)
class MarketResult:
    """One market episode: committed ``trades`` (buyer, seller, item, price, step), the
    ``final_state`` snapshot, the ``rejected`` attempts with the reason, the ``log`` and the
    grounded variables' ``history`` (``[step, name, old, new, cause]`` per change)."""

    trades: list[dict[str, Any]]
    final_state: dict[str, Any]
    rejected: list[dict[str, Any]]
    log: EpisodeLog
    history: list[list[Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        return {
            "trades": self.trades,
            "final_state": self.final_state,
            "rejected": self.rejected,
            "log": self.log.to_list(),
            "grounded_history": self.history,
        }

    @classmethod
    def from_outcome(cls, outcome: SimulationOutcome) -> MarketResult:
        """The summary of a played ``marketplace`` simulation."""
        state = dict(outcome.final_state)
        trades = [dict(t) for t in decode_value(state.pop("trades"))]
        return cls(trades, state, list(outcome.rejected), outcome.log, grounded_history(outcome))


def make_game_master(
    money: Mapping[str, float], goods: Mapping[str, int], *, item: str = ITEM
) -> GameMaster:
    """A game master keeping ``money:<name>``, ``goods:<name>`` (both ``>= 0``) and
    ``ask:<name>``, with the ``trade`` and ``post`` tools."""
    return market_game_master(dict(money), dict(goods), item=item)


def market_simulation(
    *,
    rounds: int = 5,
    sellers: Mapping[str, tuple[float, int]] | None = None,
    buyers: Mapping[str, tuple[float, float, int]] | None = None,
) -> Simulation:
    """``worlds/market.yaml``, or the same market with other traders or length."""
    if rounds < 1:
        raise InputError(f"rounds={rounds} must be >= 1", params=("rounds",))
    if sellers is None and buyers is None and rounds == 5:
        return world("market")
    sellers = dict(SELLERS if sellers is None else sellers)
    buyers = dict(BUYERS if buyers is None else buyers)
    if set(sellers) & set(buyers):
        raise InputError("a trader cannot be both a seller and a buyer")

    def rule(name: str, policy: str, **args: Any) -> dict[str, Any]:
        return {"name": name, "prefab": "rule", "params": {"policy": policy, "args": args}}

    entities = [rule(n, "market_seller", cost=c) for n, (c, _) in sellers.items()]
    entities += [rule(n, "market_buyer", reservation=r, wants=w) for n, (r, _, w) in buyers.items()]
    gm = world("market").game_master.model_dump()
    params = {
        **gm["params"],
        "rounds": rounds,
        "money": {n: m for n, (_, m, _) in buyers.items()},
        "goods": {n: g for n, (_, g) in sellers.items()},
    }
    return varied("market", {"entities": entities, "game_master": {**gm, "params": params}})


def run_market(
    *,
    seed: int = 0,
    rounds: int = 5,
    sellers: Mapping[str, tuple[float, int]] | None = None,
    buyers: Mapping[str, tuple[float, float, int]] | None = None,
    checkpoint: str | Path | None = None,
    resume: bool = False,
) -> MarketResult:
    """Run ``rounds`` rounds (every trader acts once per round, sellers first);
    ``checkpoint``/``resume``: see :meth:`silicolab.sim.simulation.Simulation.run`."""
    sim = market_simulation(rounds=rounds, sellers=sellers, buyers=buyers)
    return MarketResult.from_outcome(sim.run(seed=seed, checkpoint=checkpoint, resume=resume))
