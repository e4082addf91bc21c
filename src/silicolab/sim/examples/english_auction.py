"""An English (ascending clock) auction: an auctioneer, truthful bidders and a game master.

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

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from silicolab.core.errors import InputError
from silicolab.core.sync import sync_twin
from silicolab.sim.agents import RuleAgent
from silicolab.sim.engines import arun_simultaneous
from silicolab.sim.entity import ActionSpec, Entity
from silicolab.sim.game_master import Attempt, GameMaster, Resolution
from silicolab.sim.grounded import GroundedState, GroundedVariable, at_least
from silicolab.sim.log import EpisodeLog

PriceRule = Literal["second_dropout", "next_increment"]
AUCTIONEER = "Auctioneer"
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def truthful_bidder(name: str, budget: float) -> RuleAgent:
    """A clock bidder that stays in while the announced price is within its private budget."""

    def policy(agent: RuleAgent, spec: ActionSpec) -> str:
        price = float(_NUMBER.findall(spec.call_to_action)[0])
        return "stay" if price <= agent.state["budget"] else "drop"

    return RuleAgent(name, policy, {"budget": float(budget)})


def rule_auctioneer(name: str = AUCTIONEER) -> RuleAgent:
    """An auctioneer that raises while two or more bidders are in and closes otherwise."""

    def policy(_agent: RuleAgent, spec: ActionSpec) -> str:
        active = int(_NUMBER.findall(spec.call_to_action)[0])
        return "raise" if active >= 2 else "close"

    return RuleAgent(name, policy)


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


@dataclass(frozen=True)
class _AuctionRules:
    """The rules of one clock auction, as the game master's hooks: who acts when, what
    they are asked, which attempts are refused and what an accepted attempt does."""

    names: tuple[str, ...]
    increment: float
    start_price: float
    price_rule: PriceRule
    auctioneer: str

    def initial_state(self) -> GroundedState:
        """The grounded variables at the opening price."""
        return GroundedState.of(
            GroundedVariable(
                "price",
                float(self.start_price),
                float,
                "current clock price",
                at_least(self.start_price, "the price"),
            ),
            GroundedVariable("high_bidder", None, (str, type(None)), "first bidder at the price"),
            GroundedVariable(
                "active_bidders",
                frozenset(self.names),
                frozenset,
                "bidders still in",
                self._known_bidders,
            ),
            GroundedVariable("round_accepted", False, bool, "someone accepted the current price"),
            GroundedVariable("winner", None, (str, type(None)), "who bought the item"),
            GroundedVariable("sale_price", None, (float, type(None)), "price paid"),
        )

    def _known_bidders(self, value: Any, _proposed: Any) -> str | None:
        extra = set(value) - set(self.names)
        return f"unknown bidders: {sorted(extra)}" if extra else None

    def schedule(self, gm: GameMaster, entities: Sequence[Entity], step: int) -> list[Entity]:
        """Bidders still in act on even steps, the auctioneer on odd ones."""
        if step % 2 == 1:
            return [e for e in entities if e.name == self.auctioneer]
        return [e for e in entities if e.name in gm.state["active_bidders"]]

    def action_spec(self, gm: GameMaster, name: str) -> ActionSpec:
        """The auctioneer raises or closes; a bidder stays in or drops out."""
        if name == self.auctioneer:
            n = len(gm.state["active_bidders"])
            return ActionSpec(
                f"Bidders still in: {n}. Clock price: {gm.state['price']:g}. "
                "Raise the price or close the auction?",
                "choice",
                ("raise", "close"),
            )
        return ActionSpec(
            f"The clock price is {gm.state['price']:g}. Stay in or drop out?",
            "choice",
            ("stay", "drop"),
        )

    def validator(self, gm: GameMaster, attempt: Attempt) -> str | None:
        """Why ``attempt`` is impossible now, or ``None``."""
        active = gm.state["active_bidders"]
        if gm.state["winner"] is not None or gm.done:
            return "the auction is over"
        if attempt.actor == self.auctioneer:
            if attempt.action == "raise" and len(active) < 2:
                return "cannot raise: fewer than two bidders are still in"
            if attempt.action == "close" and len(active) >= 2:
                return "cannot close: two or more bidders are still in"
            return None
        if attempt.actor not in active:
            return f"{attempt.actor} has already dropped out"
        return None

    def resolver(self, gm: GameMaster, attempt: Attempt) -> Resolution:
        """What an accepted attempt does to the state, and the event that says so."""
        s, who, price = gm.state, attempt.actor, gm.state["price"]
        if who != self.auctioneer:
            if attempt.action == "drop":
                return Resolution(
                    f"{who} drops out at {price:g}.",
                    {"active_bidders": s["active_bidders"] - {who}},
                )
            updates: dict[str, Any] = {"round_accepted": True}
            if not s["round_accepted"]:
                updates["high_bidder"] = who
            return Resolution(f"{who} stays in at {price:g}.", updates)
        if attempt.action == "raise":
            new = price + self.increment
            return Resolution(
                f"{self.auctioneer} raises the price to {new:g}.",
                {"price": new, "round_accepted": False},
            )
        return self._close(s, price)

    def _close(self, s: GroundedState, price: float) -> Resolution:
        """The sale when the auctioneer closes at ``price`` (under the price rule)."""
        active = sorted(s["active_bidders"], key=self.names.index)
        winner: str | None
        paid: float | None
        previous = price - self.increment if price > self.start_price else None
        if active:  # one bidder left alone at ``price``
            winner = active[0]
            paid = price if self.price_rule == "next_increment" or previous is None else previous
        else:  # the last bidders all dropped at ``price``: tie
            winner, paid = (s["high_bidder"], previous) if previous is not None else (None, None)
        if winner is None or paid is None:
            return Resolution("The auction closes without a sale.", terminate=True)
        return Resolution(
            f"{winner} wins the item at {paid:g}.",
            {"winner": winner, "sale_price": float(paid), "high_bidder": winner},
            terminate=True,
        )


def make_game_master(
    bidders: Sequence[str],
    *,
    increment: float = 50.0,
    start_price: float = 50.0,
    price_rule: PriceRule = "second_dropout",
    auctioneer: str = AUCTIONEER,
) -> GameMaster:
    """The auction's game master (rule-based resolver; no language model)."""
    if increment <= 0:
        raise InputError(f"increment={increment} must be positive", params=("increment",))
    if price_rule not in ("second_dropout", "next_increment"):
        raise InputError(
            f"unknown price_rule: price_rule={price_rule!r}; use 'second_dropout' or "
            "'next_increment'",
            params=("price_rule",),
        )
    rules = _AuctionRules(tuple(bidders), increment, start_price, price_rule, auctioneer)
    return GameMaster(
        state=rules.initial_state(),
        resolver=rules.resolver,
        validator=rules.validator,
        schedule=rules.schedule,
        action_spec=rules.action_spec,
        premise=f"An English auction starts at {start_price:g}; the price rises by "
        f"{increment:g} each round.",
        name="Auction house",
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
    (``checkpoint``/``resume``: see :func:`silicolab.sim.engines.run_simultaneous`)."""
    bidders = [truthful_bidder(f"Bidder {i + 1}", b) for i, b in enumerate(budgets)]
    gm = make_game_master(
        [b.name for b in bidders],
        increment=increment,
        start_price=start_price,
        price_rule=price_rule,
    )
    entities = [*bidders, rule_auctioneer()]
    log = await arun_simultaneous(
        gm,
        entities,
        max_steps=2 * max_rounds,
        seed=seed,
        checkpoint=checkpoint,
        resume=resume,
    )
    if not gm.done:
        raise InputError(f"the auction did not finish within {max_rounds} rounds")
    return AuctionResult(
        winner=gm.state["winner"],
        price=gm.state["sale_price"],
        rounds=(gm.clock.steps + 1) // 2,
        events=tuple(gm.events),
        log=log,
        history=tuple(gm.state.state_dict()["history"]),
    )


run_english_auction = sync_twin(arun_english_auction)
