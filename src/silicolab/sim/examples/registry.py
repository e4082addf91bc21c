"""The worked simulations the ``silicolab sim run NAME`` command can run.

Each plays its simulation file (``silicolab/sim/worlds/<name>.yaml``) through
:class:`~silicolab.sim.simulation.Simulation` and turns the outcome into the example's
summary (the ``run_*`` functions of :mod:`silicolab.sim.examples`).

Each entry is ``(model, seed, **options) -> dict``: a JSON-ready summary whose ``"log"`` is
the episode log as a list (see :meth:`silicolab.sim.log.EpisodeLog.to_list`). ``model`` is a
language model -- the model of the role in :data:`MODEL_ROLES` -- or ``None`` (the
offline scripted default); rule-only examples ignore it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from silicolab.llm.base import LanguageModel

Example = Callable[..., dict[str, Any]]


def auction(model: LanguageModel | None, seed: int, **options: Any) -> dict[str, Any]:
    """English clock auction with truthful rule bidders (no language model)."""
    from silicolab.sim.examples.english_auction import run_english_auction

    del model
    budgets = options.pop("budgets", (150.0, 300.0, 250.0))
    result = run_english_auction(budgets, seed=seed, **options)
    return {
        "example": "auction",
        "budgets": [float(b) for b in budgets],
        "winner": result.winner,
        "price": result.price,
        "rounds": result.rounds,
        "events": list(result.events),
        "grounded_history": list(result.history),
        "log": result.log.to_list(),
    }


def bargaining(model: LanguageModel | None, seed: int, **options: Any) -> dict[str, Any]:
    """Seller and buyer bargain over a mug, then answer a survey."""
    from silicolab.sim.examples.bargaining import run_bargaining

    result = run_bargaining(model, seed=seed, **options)
    return {
        "example": "bargaining",
        "seller_value": options.get("seller_value", 4.0),
        "buyer_value": options.get("buyer_value", 10.0),
        **result.to_dict(),
    }


def market(model: LanguageModel | None, seed: int, **options: Any) -> dict[str, Any]:
    """Rule-based traders in a market with grounded money and goods (no language model)."""
    from silicolab.sim.examples.market import run_market

    del model
    return {"example": "market", **run_market(seed=seed, **options).to_dict()}


EXAMPLES: dict[str, Example] = {"auction": auction, "bargaining": bargaining, "market": market}
"""Example name -> runner."""

MODEL_ROLES: dict[str, str] = {"bargaining": "subject"}
"""The examples whose agents call a language model -> the role those agents play (the
bargainers are simulated people; every coordinator and game master here is rule-based)."""

USES_MODEL = frozenset(MODEL_ROLES)
"""The examples whose agents call a language model."""

CHECKPOINTED = frozenset({"auction", "market"})
"""The examples that take ``checkpoint=path, resume=bool`` and continue a killed episode
from its last completed step (the others start the episode again)."""
