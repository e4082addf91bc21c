"""A market with grounded money and goods as prefabs: the ``marketplace`` game master and
the ``market_seller`` and ``market_buyer`` rule policies.

The game master keeps ``money:<name>`` and ``goods:<name>`` (both ``>= 0``, so an
impossible trade is rejected and changes nothing), ``ask:<name>`` (a posted price) and
``trades``, and offers two tools: ``post(price)`` and ``trade(counterparty, item, price)``.
Trades move money and goods atomically, so both totals are conserved. Traders act one per
step, round robin (the ``sequential`` engine), ``rounds`` times each. ``pass`` passes; other
free text is rejected, or, with ``narrate: true``, narrated by the game master's model
(generative traders may chat, haggle or look around; only the tools move money and goods).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from silicolab.sim.agents import RuleAgent
from silicolab.sim.entity import ActionSpec
from silicolab.sim.game_master import Attempt, GameMaster, Resolution
from silicolab.sim.grounded import GroundedState, GroundedVariable, at_least
from silicolab.sim.prefabs.base import BuildContext, Params, Prefab, register
from silicolab.sim.prefabs.entities import Policy, policy

ITEM = "widget"
CALL = "What does {name} do? Use a tool or say pass."
_ASK = re.compile(r"^(\S+) asks (\d+(?:\.\d+)?) per ")
_REJECTED = "Your action was not possible"


@policy("market_seller")
def market_seller(cost: float) -> Policy:
    """Posts an ask of 1.5 x cost, lowered by 10 % of cost each turn, never below cost."""

    def act(agent: RuleAgent, _spec: ActionSpec) -> str:
        turn = agent.state.get("turn", 0)
        agent.state["turn"] = turn + 1
        c = float(cost)
        return f"post(price={round(max(c, 1.5 * c - 0.1 * c * turn), 2)})"

    return act


@policy("market_buyer")
def market_buyer(reservation: float, wants: int, item: str = ITEM) -> Policy:
    """Buys at the cheapest posted ask within ``reservation`` until it holds ``wants``
    items; after a rejected attempt it avoids that seller."""

    def act(agent: RuleAgent, _spec: ActionSpec) -> str:
        s = agent.state
        s.setdefault("avoid", [])
        s.setdefault("seen", 0)
        s.setdefault("target", None)
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
            if seller not in s["avoid"] and p <= reservation
        ]
        if bought >= wants or not options:
            return "pass"
        price, seller = min(options)
        s["target"] = seller
        return f"trade(counterparty={seller!r}, item={item!r}, price={price})"

    return act


def market_state(money: dict[str, float], goods: dict[str, int], item: str = ITEM) -> GroundedState:
    """``money:<name>``, ``goods:<name>`` (both ``>= 0``), ``ask:<name>`` and ``trades``."""
    variables: list[GroundedVariable[Any]] = []
    for n in sorted(set(money) | set(goods)):
        m, g = float(money.get(n, 0.0)), int(goods.get(n, 0))
        variables += [
            GroundedVariable(f"money:{n}", m, float, f"{n}'s money", at_least(0, f"{n}'s money")),
            GroundedVariable(f"goods:{n}", g, int, f"{n}'s {item}s", at_least(0, f"{n}'s goods")),
            GroundedVariable(f"ask:{n}", None, (float, type(None)), f"{n}'s posted ask"),
        ]
    variables.append(GroundedVariable("trades", (), tuple, "committed trades"))
    return GroundedState.of(*variables)


def market_tools(names: list[str], item: str) -> list[Any]:
    """The ``trade`` and ``post`` tools over :func:`market_state`'s variables."""

    def trade(actor: str, gm: GameMaster, counterparty: str, item: str, price: float) -> Resolution:
        """Buy one item from counterparty at price (at least their posted ask)."""
        s = gm.state
        if counterparty not in names or counterparty == actor:
            return Resolution(f"{counterparty!r} is not another trader", rejected=True)
        if item != goods_item:
            return Resolution(f"nobody trades {item!r}; items: {goods_item}", rejected=True)
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
        """Post an ask: the price at which actor sells one item."""
        if not float(price) > 0:
            return Resolution("an ask must be positive", rejected=True)
        return Resolution(
            f"{actor} asks {float(price):.2f} per {goods_item}.", {f"ask:{actor}": price}
        )

    goods_item = item
    return [trade, post]


class MarketGameMaster(GameMaster):
    """A market game master that knows its natural length: ``rounds`` turns per trader."""

    def __init__(self, *, rounds: int, **options: Any):
        super().__init__(**options)
        self.rounds = rounds

    @property
    def total_steps(self) -> int:
        """Every trader acts ``rounds`` times, one per step."""
        return self.rounds * max(1, len(self.build_names))

    build_names: tuple[str, ...] = ()


def market_game_master(
    money: dict[str, float],
    goods: dict[str, int],
    *,
    item: str = ITEM,
    narrator: Any = None,
    rounds: int = 5,
    premise: str = "",
    name: str = "Market",
) -> MarketGameMaster:
    """The market's game master; ``narrator`` (a language model) narrates free text that
    is neither a tool call nor ``pass`` (without one such text is rejected)."""
    state = market_state(money, goods, item)
    names = sorted(set(money) | set(goods))

    def resolver(_gm: GameMaster, attempt: Attempt) -> Resolution | None:
        if attempt.action.strip() == "pass":
            return Resolution(f"{attempt.actor} passes.", observers=())
        if narrator is not None:
            return None  # the narrator model resolves it
        return Resolution("say trade(...), post(...) or pass", rejected=True)

    def spec(gm: GameMaster, _name: str) -> ActionSpec:
        if narrator is None:
            return ActionSpec(CALL, tag="trader")
        usage = "".join(f"\n- {t.usage()}" for t in gm.tools.values())
        return ActionSpec(f"{CALL} Tools (write name(arg=value)):{usage}", tag="trader")

    return MarketGameMaster(
        rounds=rounds,
        state=state,
        tools=market_tools(names, item),
        resolver=resolver,
        model=narrator,
        action_spec=spec,
        premise=premise or f"A market for {item}s opens.",
        name=name,
    )


class MarketParams(Params):
    """Who holds what at the start, the one ``item`` traded and the episode's length."""

    money: dict[str, float] = Field(default_factory=dict, description="name -> money")
    goods: dict[str, int] = Field(default_factory=dict, description="name -> items held")
    item: str = ITEM
    rounds: int = Field(5, ge=1, description="turns per trader")
    narrate: bool = Field(False, description="the model narrates free text (else rejected)")


@register
class Marketplace(Prefab):
    name = "marketplace"
    kind = "game_master"
    description = "grounded money and goods; post and trade tools; optional narration"
    Params = MarketParams

    @classmethod
    def build(cls, name: str, params: MarketParams, ctx: BuildContext) -> MarketGameMaster:
        gm = market_game_master(
            {n: params.money.get(n, 0.0) for n in ctx.entity_names} | params.money,
            dict(params.goods),
            item=params.item,
            narrator=ctx.gm_model if params.narrate else None,
            rounds=params.rounds,
            premise=ctx.premise,
            name=name,
        )
        gm.build_names = ctx.entity_names
        return gm
