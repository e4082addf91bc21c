"""The bargaining example's offline parts as named pieces: the ``bargainer`` offline
responder (:func:`scripted_bargainer`) and the ``bargaining_coordinator`` rule policy.

The scripted bargainers read only the prompt: the seller opens high, the buyer low, each
moves halfway towards the other's last offer without crossing its own value (read from
"values the mug at $X" in its system prompt), and an offer close enough to one's own next
offer is accepted. So a deal lands inside ``[v_s, v_b]`` when ``v_s < v_b`` and never
happens otherwise. In a survey each reports the last "Deal at $X" it read, or none.
"""

from __future__ import annotations

import re

from silicolab.llm.types import Request
from silicolab.sim.agents import RuleAgent
from silicolab.sim.conversation import STOP
from silicolab.sim.entity import ActionSpec
from silicolab.sim.prefabs.base import responder
from silicolab.sim.prefabs.entities import Policy, policy

SELLER, BUYER, COORDINATOR = "Seller", "Buyer", "Coordinator"
TOLERANCE = 0.5
"""The scripted bargainers accept an offer within this many dollars of their own next offer."""

_VALUE = re.compile(r"values the mug at \$(\d+(?:\.\d+)?)")
_LINE = re.compile(r"^\d+\. ([^:\n]+): (.*)$", re.MULTILINE)
_PRICE = re.compile(r"\$(\d+(?:\.\d+)?)")
_DEAL = re.compile(r"\bdeal at \$(\d+(?:\.\d+)?)", re.IGNORECASE)
_END = re.compile(r"\b(deal at|no deal)\b", re.IGNORECASE)


def _role(request: Request) -> tuple[str, float] | None:
    system = next((m["content"] for m in request.messages if m["role"] == "system"), "")
    value = _VALUE.search(system)
    if value is None:
        return None
    role = SELLER if "wants to sell" in system else BUYER
    return role, float(value.group(1))


def _last_prices(lines: list[tuple[str, str]], me: str) -> tuple[float | None, float | None]:
    own = other = None
    for speaker, text in lines:
        found = _PRICE.findall(text)
        if not found:
            continue
        if speaker.strip() == me:
            own = float(found[-1])
        else:
            other = float(found[-1])
    return own, other


def _next_statement(role: str, value: float, user: str) -> str:
    lines = _LINE.findall(user.split("Conversation so far:", 1)[-1])
    own, other = _last_prices(lines, role)
    last_turn = "This is the last statement" in user
    if role == SELLER:
        opening = round(max(1.5 * value, value + 2.0), 2)
        acceptable = other is not None and other >= value
        target = opening if own is None else own
        if own is not None and other is not None:
            target = round(max(value, (own + other) / 2), 2)
        close = other is not None and other >= target - TOLERANCE
        offer = f"I can let it go for ${target:.2f}."
    else:
        opening = round(0.5 * value, 2)
        acceptable = other is not None and other <= value
        target = opening if own is None else own
        if own is not None and other is not None:
            target = round(min(value, (own + other) / 2), 2)
        close = other is not None and other <= target + TOLERANCE
        offer = f"I could pay ${target:.2f}."
    if acceptable and (close or last_turn):
        return f"Deal at ${other:.2f}."
    if last_turn:
        return "No deal. I'm afraid we could not agree on a price."
    return offer


def _survey_reply(user: str) -> str:
    context, _, question = user.partition("Survey question:")
    deals = _DEAL.findall(context.split("Transcript:", 1)[-1])
    if "deal" in question.lower() and "price" not in question.lower():
        if deals:
            return f"Yes, we agreed at ${float(deals[-1]):.2f}."
        return "No, we did not agree on a price."
    if deals:
        return f"{float(deals[-1]):.2f} - that is the price we shook hands on."
    return "NA - no deal was struck, so nothing was paid."


@responder("bargainer")
def scripted_bargainer(request: Request) -> str:
    """The offline bargainers' reply function (deterministic; reads only the prompt)."""
    user = next((m["content"] for m in reversed(request.messages) if m["role"] == "user"), "")
    if "Survey question:" in user:
        return _survey_reply(user)
    who = _role(request)
    if who is None or "Conversation so far:" not in user:
        return "I have nothing to add."
    return _next_statement(*who, user)


@policy("bargaining_coordinator")
def bargaining_coordinator() -> Policy:
    """Stops the talk after a ``Deal at $X`` or ``No deal`` statement; otherwise goes on
    (or, in the coordinator protocols, lets the first eligible speaker talk)."""

    def act(_agent: RuleAgent, spec: ActionSpec) -> str:
        transcript = spec.call_to_action.split("Transcript so far:", 1)[-1]
        transcript = re.split(r"\n\n(?:Each participant|At most)", transcript, maxsplit=1)[0]
        lines = _LINE.findall(transcript)
        ended = bool(lines) and _END.search(lines[-1][1]) is not None
        if ended:
            for stop in ("stop", STOP):
                if stop in spec.options:
                    return stop
        if "continue" in spec.options:
            return "continue"
        return next(o for o in spec.options if o != STOP)

    return act
