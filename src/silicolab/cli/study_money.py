"""What a ``study run`` may spend: its cost plan, the confirmation, and the spending limit.

``--max-cost USD`` is a limit that holds: it is refused up front when a paid model's price
is unknown (nobody could tell when the limit is reached), the plan is refused when it may
cost more, and during the run one :class:`~silicolab.llm.budget.Budget` shared by every
role stops new paid calls once the actual spend reaches it (the run ends ``interrupted``,
exit 4, and ``--resume`` with a higher limit continues it). ``--price-in/--price-out``
give the paid roles' prices when neither ``silicolab.yaml`` nor the built-in table
(:mod:`silicolab.llm.prices`) knows them.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from silicolab.core.errors import InputError
from silicolab.llm.ledger import Prices

#: Where prices typed on the command line come from, as the plan names it.
CLI_SOURCE = "--price-in/--price-out"


def cli_prices(price_in: float | None, price_out: float | None) -> Prices | None:
    """The prices typed as ``--price-in/--price-out`` (USD per 1M tokens), or None."""
    if price_in is None and price_out is None:
        return None
    if price_in is None or price_out is None:
        raise InputError(
            "give both --price-in and --price-out (USD per 1M input and output tokens), "
            "e.g. --price-in 0.15 --price-out 0.6"
        )
    return Prices(float(price_in), float(price_out), source=CLI_SOURCE)


def spent_before(run: Any) -> float:
    """What earlier processes of ``run`` spent on language models (the ``cost`` of each
    role's ledger in ``run.json``'s ``llm_ledger``); 0 for a new run or none recorded."""
    if run is None:
        return 0.0
    ledgers = run.info.get("llm_ledger")
    if not isinstance(ledgers, dict):
        return 0.0
    costs = (entry.get("cost") for entry in ledgers.values() if isinstance(entry, dict))
    return float(sum(c for c in costs if isinstance(c, int | float) and c > 0))


def make_budget(max_cost: float | None, run: Any) -> Any:
    """The run's shared :class:`~silicolab.llm.budget.Budget` for ``--max-cost`` (None
    without it), counting what ``run``'s earlier processes spent."""
    if max_cost is None:
        return None
    from silicolab.llm.budget import Budget

    return Budget(max_cost, spent_usd=spent_before(run))


def role_overrides(
    role: str, settings: Any, overrides: dict[str, Any], *, prices: Prices | None, budget: Any
) -> dict[str, Any]:
    """``overrides`` for ``role``'s model plus the run's ``budget``, and the command
    line's ``prices`` when the role's model is a paid one (scripted and local models stay
    free whatever the command line says)."""
    from silicolab.llm.prices import builtin_prices

    out = dict(overrides)
    if budget is not None:
        out["budget"] = budget
    spec = overrides.get("spec") or settings.model_settings(role).spec
    known = builtin_prices(spec)
    if prices is not None and not (known is not None and known.free):
        out["prices"] = prices
    return out


def used_roles(models: Any, options: Any) -> list[str]:
    """The roles whose models the study calls: the scientist with ``--predict`` or
    ``--follow-on``, subjects and coordinator unless the subjects are rule-based."""
    if models is None:
        return []
    used = ["scientist"] if options.predict or options.follow_on else []
    if options.subjects != "rule":
        used += ["subject", "coordinator"]
    return [role for role in used if getattr(models, role, None) is not None]


def paid_roles(models: Any, options: Any) -> list[str]:
    """The used roles whose model costs money: every model not known to be free."""
    return [r for r in used_roles(models, options) if not _prices(getattr(models, r)).free]


def check_spending_limit(
    models: Any, options: Any, *, max_cost: float | None, executor: Any = None
) -> None:
    """Refuse ``--max-cost`` (one line, before any run directory or call) when a paid
    model's price is unknown, or when the units would run on a Ray cluster, where the
    limit cannot be held. Runs without a paid model are never refused."""
    if max_cost is None:
        return
    paid = paid_roles(models, options)
    for role in paid:
        model = getattr(models, role)
        if not _prices(model).known:
            raise InputError(
                f"--max-cost needs the price of {role} model {model.spec}, which is "
                f"unknown: give --price-in/--price-out, or prices: in silicolab.yaml under "
                f"models.{role} (input and output USD per 1M tokens)"
            )
    if paid and getattr(executor, "kind", "local") == "ray":
        raise InputError(
            "--max-cost is held on this machine only, not on a Ray cluster: drop "
            "--executor ray, or drop --max-cost"
        )


def _prices(model: Any) -> Prices:
    ledger = getattr(model, "ledger", None)
    return getattr(ledger, "prices", None) or Prices()


def confirm_cost(plan: Any, *, paid: bool, yes: bool, max_cost: float | None) -> None:
    """Show the plan on stderr; refuse above ``max_cost``; ask unless ``yes`` or unpaid."""
    typer.echo(plan.summary_line(), err=True)
    if max_cost is not None and plan.cost_usd is not None and plan.cost_usd[1] > max_cost:
        raise InputError(
            f"the planned cost may reach ${plan.cost_usd[1]:.2f}, above --max-cost "
            f"{max_cost:g}; run fewer conditions (--conditions N) or raise --max-cost"
        )
    if not paid or yes:
        return
    if not sys.stdin.isatty():
        raise InputError("this study makes paid LLM calls: add --yes to confirm the plan above")
    if not typer.confirm("run it?", default=False, err=True):
        raise InputError("cancelled; nothing was run")


def study_plan(hypothesis: Any, options: Any, models: Any) -> tuple[Any, bool]:
    """The cost plan of the study's design (every replicate of every condition, plus the
    scientist's predictions) at the subjects' prices, and whether any model it calls is
    paid."""
    from silicolab.studies.cost import plan_cost, prediction_calls
    from silicolab.studies.design import make_design

    design = make_design(
        hypothesis, conditions=options.conditions, seed=options.seed,
        max_conditions=options.max_conditions, replicates=options.replicates,
    )  # fmt: skip
    paid = bool(paid_roles(models, options))
    prices = _prices(models.subject) if models is not None else None
    scientist = models is not None and models.scientist is not None
    plan = plan_cost(
        hypothesis, len(design.conditions), prices, llm=options.subjects != "rule",
        scientist_calls=prediction_calls(options, design) if scientist else 0,
    )  # fmt: skip
    return plan, paid


__all__ = [
    "CLI_SOURCE",
    "check_spending_limit",
    "cli_prices",
    "confirm_cost",
    "make_budget",
    "paid_roles",
    "role_overrides",
    "spent_before",
    "study_plan",
    "used_roles",
]
