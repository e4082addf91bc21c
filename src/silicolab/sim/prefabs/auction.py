"""The English (ascending clock) auction as prefabs: the ``english_auction`` game master
and the ``truthful_bidder`` and ``auctioneer`` rule policies.

Every round the clock price is announced and each active bidder answers "stay" or "drop"
(simultaneously; resolved in initiative order). Then the auctioneer either raises the price
by ``increment`` (possible only while two or more bidders are in) or closes the auction
(possible only when at most one is left). The grounded variables are the current price, the
high bidder and the set of active bidders; the game master rejects impossible actions.
Price rules: ``second_dropout`` (the last clock price the second-highest bidder accepted)
and ``next_increment`` (one increment above it). Tied last bidders: the first of them in
initiative order buys at the last price they all accepted; nobody at the start price: no
sale. Play it with the ``simultaneous`` engine.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from silicolab.core.errors import InputError
from silicolab.sim.agents import RuleAgent
from silicolab.sim.entity import ActionSpec, Entity
from silicolab.sim.game_master import Attempt, GameMaster, Resolution
from silicolab.sim.grounded import GroundedState, GroundedVariable, at_least
from silicolab.sim.prefabs.base import BuildContext, Params, Prefab, register
from silicolab.sim.prefabs.entities import Policy, policy

PriceRule = Literal["second_dropout", "next_increment"]
AUCTIONEER = "Auctioneer"
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@policy("truthful_bidder")
def truthful_bidder(budget: float) -> Policy:
    """A clock bidder that stays in while the announced price is within ``budget``."""

    def act(agent: RuleAgent, spec: ActionSpec) -> str:
        price = float(_NUMBER.findall(spec.call_to_action)[0])
        return "stay" if price <= float(budget) else "drop"

    return act


@policy("auctioneer")
def auctioneer() -> Policy:
    """Raises while two or more bidders are in and closes otherwise."""

    def act(_agent: RuleAgent, spec: ActionSpec) -> str:
        active = int(_NUMBER.findall(spec.call_to_action)[0])
        return "raise" if active >= 2 else "close"

    return act


def auction_premise(start_price: float, increment: float) -> str:
    """The premise every participant is told."""
    return (
        f"An English auction starts at {start_price:g}; the price rises by "
        f"{increment:g} each round."
    )


@dataclass(frozen=True)
class AuctionRules:
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


def check_rules(increment: float, price_rule: str) -> None:
    """Refuse a non-positive ``increment`` or an unknown ``price_rule``."""
    if increment <= 0:
        raise InputError(f"increment={increment} must be positive", params=("increment",))
    if price_rule not in ("second_dropout", "next_increment"):
        raise InputError(
            f"unknown price_rule: price_rule={price_rule!r}; use 'second_dropout' or "
            "'next_increment'",
            params=("price_rule",),
        )


def auction_game_master(
    bidders: Sequence[str],
    *,
    increment: float = 50.0,
    start_price: float = 50.0,
    price_rule: PriceRule = "second_dropout",
    auctioneer: str = AUCTIONEER,
    premise: str = "",
    name: str = "Auction house",
) -> GameMaster:
    """The auction's game master (rule-based resolver; no language model); ``premise``
    defaults to :func:`auction_premise`."""
    check_rules(increment, price_rule)
    rules = AuctionRules(tuple(bidders), increment, start_price, price_rule, auctioneer)
    return GameMaster(
        state=rules.initial_state(),
        resolver=rules.resolver,
        validator=rules.validator,
        schedule=rules.schedule,
        action_spec=rules.action_spec,
        premise=premise or auction_premise(start_price, increment),
        name=name,
    )


class AuctionParams(Params):
    """The auction's rules; the bidders are every entity but the ``auctioneer``."""

    increment: float = Field(50.0, gt=0)
    start_price: float = 50.0
    price_rule: PriceRule = "second_dropout"
    auctioneer: str = AUCTIONEER


@register
class EnglishAuction(Prefab):
    name = "english_auction"
    kind = "game_master"
    description = "ascending clock auction: grounded price and bidders, rule resolution"
    Params = AuctionParams

    @classmethod
    def build(cls, name: str, params: AuctionParams, ctx: BuildContext) -> GameMaster:
        if params.auctioneer not in ctx.entity_names:
            raise InputError(
                f"the auctioneer {params.auctioneer!r} is not an entity "
                f"(entities: {', '.join(ctx.entity_names)})"
            )
        bidders = [n for n in ctx.entity_names if n != params.auctioneer]
        return auction_game_master(
            bidders,
            increment=params.increment,
            start_price=params.start_price,
            price_rule=params.price_rule,
            auctioneer=params.auctioneer,
            premise=ctx.premise,
            name=name,
        )
