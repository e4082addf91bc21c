"""A small market with grounded money and goods: rule-based traders and a game master.

Sellers hold widgets that cost them ``cost`` each; every turn a seller posts an ask with the
``post(price)`` tool, starting at 1.5 x cost and coming down by 10 % of cost per round, never
below cost. Buyers hold money and want ``wants`` widgets worth ``reservation`` each; on its turn
a buyer calls ``trade(counterparty, item, price)`` on the cheapest posted ask it can accept,
at that ask. Buyers do not see anyone's money or stock, so some of their attempts are
impossible: the game master's grounded state (each trader's money ``>= 0`` and goods ``>= 0``
via :func:`~silicolab.sim.grounded.at_least`) rejects them, and the buyer avoids that seller
afterwards. Trades move money and goods atomically, so both totals are conserved.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from silicolab.core.errors import InputError
from silicolab.sim.agents import RuleAgent
from silicolab.sim.engines import run_sequential
from silicolab.sim.entity import ActionSpec
from silicolab.sim.game_master import Attempt, GameMaster, Resolution
from silicolab.sim.grounded import GroundedState, GroundedVariable, at_least
from silicolab.sim.log import EpisodeLog

ITEM = "widget"
#: Default sellers: name -> (cost per widget, widgets held).
SELLERS: dict[str, tuple[float, int]] = {"S1": (4.0, 2), "S2": (6.0, 1), "S3": (8.0, 2)}
#: Default buyers: name -> (reservation price per widget, money, widgets wanted).
BUYERS: dict[str, tuple[float, float, int]] = {
    "B1": (12.0, 30.0, 2),
    "B2": (10.0, 5.0, 1),
    "B3": (9.0, 20.0, 2),
}
_ASK = re.compile(r"^(\S+) asks (\d+(?:\.\d+)?) per ")
_REJECTED = "Your action was not possible"


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


def seller_agent(name: str, cost: float) -> RuleAgent:
    """Posts an ask of 1.5 x cost, lowered by 10 % of cost each turn, never below cost."""

    def policy(agent: RuleAgent, _spec: ActionSpec) -> str:
        turn = agent.state["turn"]
        agent.state["turn"] = turn + 1
        c = agent.state["cost"]
        return f"post(price={round(max(c, 1.5 * c - 0.1 * c * turn), 2)})"

    return RuleAgent(name, policy, {"cost": float(cost), "turn": 0})


def buyer_agent(name: str, reservation: float, wants: int) -> RuleAgent:
    """Buys at the cheapest posted ask within ``reservation`` until it holds ``wants`` widgets;
    after a rejected attempt it avoids that seller."""

    def policy(agent: RuleAgent, _spec: ActionSpec) -> str:
        s = agent.state
        asks: dict[str, float] = {}
        bought = 0
        for i, text in enumerate(agent.observations):
            if text.startswith(_REJECTED) and i >= s["seen"] and s["target"]:
                s["avoid"].append(s["target"])
            ask = _ASK.match(text)
            if ask:
                asks[ask.group(1)] = float(ask.group(2))
            if text.startswith(f"{agent.name} buys "):
                bought += 1
        s["seen"], s["target"] = len(agent.observations), None
        options = [
            (p, seller)
            for seller, p in asks.items()
            if seller not in s["avoid"] and p <= s["reservation"]
        ]
        if bought >= s["wants"] or not options:
            return "pass"
        price, seller = min(options)
        s["target"] = seller
        return f"trade(counterparty={seller!r}, item={ITEM!r}, price={price})"

    state = {"reservation": float(reservation), "wants": int(wants), "avoid": [], "seen": 0}
    return RuleAgent(name, policy, {**state, "target": None})


def make_game_master(
    money: Mapping[str, float], goods: Mapping[str, int], *, items: tuple[str, ...] = (ITEM,)
) -> GameMaster:
    """A game master keeping ``money:<name>``, ``goods:<name>`` (both ``>= 0``) and
    ``ask:<name>``, with the ``trade`` and ``post`` tools."""
    names = sorted(set(money) | set(goods))
    variables: list[GroundedVariable[Any]] = []
    for n in names:
        m, g = float(money.get(n, 0.0)), int(goods.get(n, 0))
        variables += [
            GroundedVariable(f"money:{n}", m, float, f"{n}'s money", at_least(0, f"{n}'s money")),
            GroundedVariable(f"goods:{n}", g, int, f"{n}'s widgets", at_least(0, f"{n}'s goods")),
            GroundedVariable(f"ask:{n}", None, (float, type(None)), f"{n}'s posted ask"),
        ]
    variables.append(GroundedVariable("trades", (), tuple, "committed trades"))
    state = GroundedState.of(*variables)

    def trade(actor: str, gm: GameMaster, counterparty: str, item: str, price: float) -> Resolution:
        """Buy one item from counterparty at price (at least their posted ask)."""
        s = gm.state
        if counterparty not in names or counterparty == actor:
            return Resolution(f"{counterparty!r} is not another trader", rejected=True)
        if item not in items:
            return Resolution(f"nobody trades {item!r}; items: {', '.join(items)}", rejected=True)
        ask = s[f"ask:{counterparty}"]
        if ask is None or float(price) < ask:
            return Resolution(f"{counterparty} has not offered a {item} at {price}", rejected=True)
        price = round(float(price), 2)
        record = {"buyer": actor, "seller": counterparty, "item": item, "price": price}
        return Resolution(
            f"{actor} buys a {item} from {counterparty} for {price:.2f}.",
            {
                f"money:{actor}": round(s[f"money:{actor}"] - price, 2),
                f"money:{counterparty}": round(s[f"money:{counterparty}"] + price, 2),
                f"goods:{actor}": s[f"goods:{actor}"] + 1,
                f"goods:{counterparty}": s[f"goods:{counterparty}"] - 1,
                "trades": (*s["trades"], {**record, "step": gm.clock.steps}),
            },
        )

    def post(actor: str, price: float) -> Resolution:
        """Post an ask: the price at which actor sells one widget."""
        if not float(price) > 0:
            return Resolution("an ask must be positive", rejected=True)
        return Resolution(f"{actor} asks {float(price):.2f} per {ITEM}.", {f"ask:{actor}": price})

    def resolver(_gm: GameMaster, attempt: Attempt) -> Resolution:
        if attempt.action.strip() == "pass":
            return Resolution(f"{attempt.actor} passes.", observers=())
        return Resolution("say trade(...), post(...) or pass", rejected=True)

    return GameMaster(
        state=state,
        tools=[trade, post],
        resolver=resolver,
        action_spec=ActionSpec("What does {name} do? Use a tool or say pass.", tag="trader"),
        premise=f"A market for {ITEM}s opens.",
        name="Market",
    )


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
    ``checkpoint``/``resume``: see :func:`silicolab.sim.engines.run_sequential`."""
    if rounds < 1:
        raise InputError(f"rounds={rounds} must be >= 1", params=("rounds",))
    sellers = dict(SELLERS if sellers is None else sellers)
    buyers = dict(BUYERS if buyers is None else buyers)
    if set(sellers) & set(buyers):
        raise InputError("a trader cannot be both a seller and a buyer")
    entities = [seller_agent(n, cost) for n, (cost, _) in sellers.items()]
    entities += [buyer_agent(n, r, w) for n, (r, _, w) in buyers.items()]
    gm = make_game_master(
        {n: m for n, (_, m, _) in buyers.items()},
        {n: g for n, (_, g) in sellers.items()},
    )
    log = run_sequential(
        gm,
        entities,
        max_steps=rounds * len(entities),
        seed=seed,
        checkpoint=checkpoint,
        resume=resume,
    )
    snapshot = gm.state.snapshot()
    trades = [dict(t) for t in snapshot.pop("trades")]
    rejected = [
        {"actor": a.actor, "action": a.action, "step": a.step, "reason": why}
        for a, why in gm.rejections
    ]
    return MarketResult(trades, snapshot, rejected, log, gm.state.state_dict()["history"])
