"""Two people bargain over a mug, then each is asked whether a deal was struck and at what price.

The seller values the mug at ``v_s`` and will not sell below it; the buyer values it at ``v_b``
and will not pay above it. Both are :class:`~silicolab.sim.agents.GenerativeAgent` objects
built from Identity, Goal, Constraint and Observation components. They talk under one of the
six conversation protocols (default ``"ordered"``, at most 12 statements); a rule-based
coordinator ends the talk once someone says ``"Deal at $X"`` or ``"No deal"``. Afterwards a
post-simulation survey asks each of them whether a deal was struck (binary) and at what price
(continuous).

Offline, the agents run on the ``scripted`` test double with :func:`scripted_bargainer`: the
seller opens high, the buyer low, each moves halfway towards the other's last offer without
crossing its own value, and an offer close enough to one's own next offer is accepted. So a
deal lands inside ``[v_s, v_b]`` when ``v_s < v_b`` and never happens otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from silicolab.core.errors import InputError
from silicolab.llm.base import LanguageModel
from silicolab.llm.types import Request
from silicolab.sim.agents import GenerativeAgent, RuleAgent
from silicolab.sim.components import Constraint, Goal, Identity, Observation
from silicolab.sim.conversation import PROTOCOLS, STOP, Conversation, run_conversation
from silicolab.sim.entity import ActionSpec
from silicolab.sim.log import EpisodeLog, StepLog, keep_log
from silicolab.sim.survey import SurveyAnswer, SurveyQuestion, ask_survey

SELLER, BUYER, COORDINATOR = "Seller", "Buyer", "Coordinator"
TOLERANCE = 0.5
"""The scripted bargainers accept an offer within this many dollars of their own next offer."""

_VALUE = re.compile(r"values the mug at \$(\d+(?:\.\d+)?)")
_LINE = re.compile(r"^\d+\. ([^:\n]+): (.*)$", re.MULTILINE)
_PRICE = re.compile(r"\$(\d+(?:\.\d+)?)")
_DEAL = re.compile(r"\bdeal at \$(\d+(?:\.\d+)?)", re.IGNORECASE)
_END = re.compile(r"\b(deal at|no deal)\b", re.IGNORECASE)


@dataclass(frozen=True)
class BargainingResult:
    """One bargaining episode.

    ``deal`` and ``price`` are what the two participants reported in the survey: ``None``
    when their answers disagree (or are NA where a value is needed). ``log`` holds every
    statement, coordinator decision and survey answer.
    """

    deal: bool | None
    price: float | None
    transcript: list[dict[str, Any]]
    survey: list[SurveyAnswer]
    log: EpisodeLog
    conversation: Conversation

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        return {
            "deal": self.deal,
            "price": self.price,
            "transcript": self.transcript,
            "survey": [a.to_dict() for a in self.survey],
            "stop_reason": self.conversation.stop_reason,
            "protocol": self.conversation.protocol,
            "log": self.log.to_list(),
        }


def opening_text(seller_value: float, buyer_value: float) -> str:
    """The scenario every participant's prompt starts with (values stay private)."""
    del seller_value, buyer_value  # private: each agent learns only its own value
    return (
        f"{SELLER} has a ceramic mug for sale and {BUYER} is interested in it. They negotiate "
        "a price in dollars. Name prices as $X.XX. To accept the other's last offer say "
        "'Deal at $X.XX.'; to walk away say 'No deal.'"
    )


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


def scripted_bargainer(request: Request) -> str:
    """The offline bargainers' reply function (deterministic; reads only the prompt)."""
    user = next((m["content"] for m in reversed(request.messages) if m["role"] == "user"), "")
    if "Survey question:" in user:
        return _survey_reply(user)
    who = _role(request)
    if who is None or "Conversation so far:" not in user:
        return "I have nothing to add."
    return _next_statement(*who, user)


def scripted_model() -> LanguageModel:
    """The offline model: :func:`scripted_bargainer` behind the usual wrappers."""
    from silicolab.llm import ScriptedModel, load_model

    return load_model(ScriptedModel(fn=scripted_bargainer, name="scripted:bargaining"))


def rule_coordinator(name: str = COORDINATOR) -> RuleAgent:
    """Stops the talk after a ``Deal at $X`` or ``No deal`` statement; otherwise goes on
    (or, in the coordinator protocols, lets the first eligible speaker talk)."""

    def policy(_agent: RuleAgent, spec: ActionSpec) -> str:
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

    return RuleAgent(name, policy)


def make_agents(
    model: LanguageModel, seller_value: float, buyer_value: float
) -> tuple[GenerativeAgent, GenerativeAgent]:
    """The seller and the buyer, each knowing only its own value."""
    seller = GenerativeAgent(
        SELLER,
        model,
        [
            Identity(
                f"{{name}} owns a ceramic mug and wants to sell it. {{name}} values the mug at "
                f"${seller_value:.2f}."
            ),
            Goal("Sell the mug for as much as possible."),
            Constraint(
                f"Never sell for less than ${seller_value:.2f}.",
                "Keep each statement to one or two sentences.",
            ),
            Observation(n=12),
        ],
    )
    buyer = GenerativeAgent(
        BUYER,
        model,
        [
            Identity(
                f"{{name}} wants to buy a ceramic mug. {{name}} values the mug at "
                f"${buyer_value:.2f}."
            ),
            Goal("Buy the mug for as little as possible."),
            Constraint(
                f"Never pay more than ${buyer_value:.2f}.",
                "Keep each statement to one or two sentences.",
            ),
            Observation(n=12),
        ],
    )
    return seller, buyer


QUESTIONS = (
    ("deal", "Was a deal struck for the mug?", "binary"),
    ("price", "At what price in dollars was the mug sold?", "continuous"),
)


def _agreed(answers: list[SurveyAnswer]) -> tuple[bool | None, float | None]:
    deals = {a.value for a in answers if a.variable == "deal"}
    if len(deals) != 1 or None in deals:
        return None, None
    deal = bool(deals.pop())
    if not deal:
        return False, None
    prices = [a.value for a in answers if a.variable == "price"]
    if any(p is None for p in prices) or max(prices) - min(prices) > 0.005:  # type: ignore[operator]
        return True, None
    return True, float(prices[0])  # type: ignore[arg-type]


def run_bargaining(
    model: LanguageModel | None = None,
    *,
    seller_value: float = 4.0,
    buyer_value: float = 10.0,
    protocol: str = "ordered",
    seed: int = 0,
    max_statements: int = 12,
) -> BargainingResult:
    """Run one bargaining conversation and the post-conversation survey.

    ``model=None`` uses the offline scripted bargainers (:func:`scripted_model`).
    """
    if protocol not in PROTOCOLS:
        raise InputError(
            f"unknown protocol: protocol={protocol!r}; choose one of {', '.join(PROTOCOLS)}",
            params=("protocol",),
        )
    if seller_value <= 0 or buyer_value <= 0:
        raise InputError(
            f"seller_value={seller_value} and buyer_value={buyer_value} must both be positive",
            params=("seller_value", "buyer_value"),
        )
    llm = model if model is not None else scripted_model()
    seller, buyer = make_agents(llm, seller_value, buyer_value)
    opening = opening_text(seller_value, buyer_value)
    conv = run_conversation(
        [seller, buyer],
        protocol=protocol,
        opening=opening,
        coordinator=rule_coordinator(),
        central=SELLER,
        max_statements=max_statements,
        seed=seed,
    )
    questions = [
        SurveyQuestion(var, text, kind, addressee=who)  # type: ignore[arg-type]
        for who in (SELLER, BUYER)
        for var, text, kind in QUESTIONS
    ]
    try:
        answers = ask_survey(
            {SELLER: seller, BUYER: buyer},
            questions,
            context=f"{opening}\n\nTranscript:\n{conv.transcript()}",
        )
    except Exception as err:
        keep_log(err, EpisodeLog(list(conv.log.steps)))  # the talk so far is not lost
        raise
    log = EpisodeLog(list(conv.log.steps))
    for i, a in enumerate(answers):
        log.add(
            StepLog(
                len(conv.statements) + i,
                a.addressee,
                "survey",
                a.raw,
                {"question": a.question},
                event=f"{a.variable} = {a.value!r} ({a.explanation})",
            )
        )
    deal, price = _agreed(answers)
    transcript = [{"speaker": s.speaker, "text": s.text} for s in conv.statements]
    return BargainingResult(deal, price, transcript, answers, log, conv)
