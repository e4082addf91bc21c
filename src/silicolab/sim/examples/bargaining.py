"""Two people bargain over a mug, then each is asked whether a deal was struck and at what price.

The seller values the mug at ``v_s`` and will not sell below it; the buyer values it at ``v_b``
and will not pay above it. Both are :class:`~silicolab.sim.agents.GenerativeAgent` objects
built from Identity, Goal, Constraint and Observation components. They talk under one of the
six conversation protocols (default ``"ordered"``, at most 12 statements); a rule-based
coordinator ends the talk once someone says ``"Deal at $X"`` or ``"No deal"``. Afterwards a
post-simulation survey asks each of them whether a deal was struck (binary) and at what price
(continuous).

The episode is the simulation file ``worlds/bargaining.yaml``: two ``basic`` people, a
``rule`` coordinator (policy ``bargaining_coordinator``) and the ``dialogic`` game master
playing a conversation scene, then a survey scene. Offline, the agents run on the
``scripted`` test double with :func:`scripted_bargainer` (the file's ``offline.responder``
``bargainer``, :mod:`silicolab.sim.prefabs.bargaining`): the
seller opens high, the buyer low, each moves halfway towards the other's last offer without
crossing its own value, and an offer close enough to one's own next offer is accepted. So a
deal lands inside ``[v_s, v_b]`` when ``v_s < v_b`` and never happens otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from silicolab.core.errors import InputError
from silicolab.llm.base import LanguageModel
from silicolab.sim.conversation import PROTOCOLS, Conversation, Statement
from silicolab.sim.examples.files import varied, world
from silicolab.sim.log import EpisodeLog
from silicolab.sim.outcome import SimulationOutcome
from silicolab.sim.prefabs.bargaining import BUYER, SELLER, scripted_bargainer
from silicolab.sim.simulation import Simulation
from silicolab.sim.survey import SurveyAnswer

__all__ = ["BargainingResult", "run_bargaining", "scripted_bargainer", "scripted_model"]


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


def scripted_model() -> LanguageModel:
    """The offline model: :func:`scripted_bargainer` behind the usual wrappers."""
    from silicolab.llm import ScriptedModel, load_model

    return load_model(ScriptedModel(fn=scripted_bargainer, name="scripted:bargaining"))


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


def bargaining_simulation(
    *,
    seller_value: float = 4.0,
    buyer_value: float = 10.0,
    protocol: str = "ordered",
    max_statements: int = 12,
) -> Simulation:
    """``worlds/bargaining.yaml`` with the given private values, protocol and length."""
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
    base = world("bargaining").model_dump()
    values = {SELLER: ("$4.00", seller_value), BUYER: ("$10.00", buyer_value)}
    for entity in base["entities"]:
        if entity["name"] in values:
            written, value = values[entity["name"]]
            params = entity["params"]
            params["identity"] = params["identity"].replace(written, f"${value:.2f}")
            params["constraints"] = [
                c.replace(written, f"${value:.2f}") for c in params["constraints"]
            ]
    talk = base["game_master"]["params"]["scenes"][0]
    talk.update(protocol=protocol, max_statements=max_statements)
    return varied("bargaining", {"entities": base["entities"], "game_master": base["game_master"]})


def result_of(outcome: SimulationOutcome, protocol: str, max_statements: int) -> BargainingResult:
    """The bargaining summary of a played ``bargaining`` simulation."""
    said = [
        s
        for s in outcome.log.steps
        if s.kind == "statement" or (s.kind == "draft" and s.event == "realized")
    ]
    statements = [Statement(i, s.who, s.output) for i, s in enumerate(said)]
    stop = "coordinator" if len(statements) < max_statements else "cap"
    fields = SurveyAnswer.__dataclass_fields__
    answers = [SurveyAnswer(**{k: v for k, v in a.items() if k in fields}) for a in outcome.survey]
    deal, price = _agreed(answers)
    transcript = [{"speaker": s.speaker, "text": s.text} for s in statements]
    conv = Conversation(protocol, statements, stop, log=outcome.log)  # type: ignore[arg-type]
    return BargainingResult(deal, price, transcript, answers, outcome.log, conv)


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
    sim = bargaining_simulation(
        seller_value=seller_value,
        buyer_value=buyer_value,
        protocol=protocol,
        max_statements=max_statements,
    )
    return result_of(sim.run(model=model, seed=seed), protocol, max_statements)
