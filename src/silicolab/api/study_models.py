"""The models a study calls and what it may spend: the roles' models, the cost plan, and
the spending limit.

``max_cost`` (USD) is a limit that holds: it is refused up front when a paid model's
price is unknown (nobody could tell when the limit is reached), the plan is refused when
it may cost more, and during the run one :class:`~silicolab.llm.budget.Budget` shared by
every role stops new paid calls once the actual spend reaches it (the run ends
``interrupted``, :class:`~silicolab.core.errors.BudgetReached`, and a resume with a higher
limit continues it). ``prices`` (input, output USD per 1M tokens) give the paid roles'
prices when neither ``silicolab.yaml`` nor the built-in table (:mod:`silicolab.llm.prices`)
knows them.

Messages name the Python parameters (``max_cost=``); the command line prints them as its
flags (``--max-cost``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from silicolab.core.config import load_settings
from silicolab.core.errors import InputError
from silicolab.llm.ledger import Prices

#: Where prices given by the caller come from, as the plan names it.
PRICE_SOURCE = "--price-in/--price-out"


def given_prices(prices: Prices | tuple[float, float] | None) -> Prices | None:
    """The caller's ``prices``: (input, output) USD per 1M tokens, or None."""
    if prices is None or isinstance(prices, Prices):
        return prices
    pair = tuple(prices) if isinstance(prices, tuple | list) else ()
    numbers = [p for p in pair if isinstance(p, int | float) and not isinstance(p, bool)]
    if len(pair) != 2 or len(numbers) != 2 or min(numbers) < 0:
        raise InputError(
            f"prices={prices!r} must be (input, output) USD per 1M tokens, e.g. prices=(0.15, 0.6)",
            params=("prices",),
        )
    return Prices(float(numbers[0]), float(numbers[1]), source=PRICE_SOURCE)


def usable_scientist(model: Any) -> bool:
    """Whether ``model`` can play the scientist: anything but the bare ``scripted`` test
    double (the default when no model is configured), which has no script for it."""
    return getattr(model, "spec", "scripted") != "scripted"


def study_models(
    subjects: str,
    hypothesis: Any,
    *,
    model: str | None,
    base_url: str | None,
    config: Path | None,
    seed: int = 0,
    prices: Prices | None = None,
    budget: Any = None,
) -> Any:
    """The models by role (scientist, subject, coordinator), or ``None`` when no model is
    used at all (rule-based subjects and no usable scientist). A scientist that is the
    offline ``scripted`` test double is no scientist (``StudyModels.scientist`` is None);
    for ``world`` subjects the offline world plays subjects and coordinator and, without a
    usable scientist, its scripted scientist answers the scientist's steps. ``prices`` bill
    the paid roles, ``budget`` limits every role's spending together."""
    from silicolab.llm.roles import model_for_role
    from silicolab.studies.pipeline import StudyModels

    settings = load_settings(config)
    overrides: dict[str, Any] = {}
    if model:
        overrides["spec"] = model
    if base_url:
        overrides["base_url"] = base_url
    money = {"prices": prices, "budget": budget}
    scientist = model_for_role(
        "scientist", settings, **role_overrides("scientist", settings, overrides, **money)
    )
    usable = usable_scientist(scientist)
    if subjects == "rule":
        return StudyModels(scientist, scientist, scientist) if usable else None
    if subjects == "world":  # the one offline builder (the demo's too)
        from silicolab.studies.offline import offline_study_models

        return offline_study_models(
            hypothesis,
            seed=seed,
            cache_path=settings.resolved_cache_path,
            scientist=scientist if usable else None,
        )
    roles = {
        r: model_for_role(r, settings, **role_overrides(r, settings, overrides, **money))
        for r in ("subject", "coordinator")
    }
    return StudyModels(scientist if usable else None, **roles)


def scientist_model(
    model: str | None,
    base_url: str | None,
    config: Path | None,
    *,
    needed_for: str = "",
    demo_seed: int | None = None,
) -> Any:
    """The scientist-role model with the caller's overrides. Without a usable one (the
    bare ``scripted`` test double): the demo's own scripted scientist for a demo run
    (``demo_seed``: its seed), else with ``needed_for`` a refusal naming the fix."""
    from silicolab.llm.roles import model_for_role

    settings = load_settings(config)
    overrides = {k: v for k, v in (("spec", model), ("base_url", base_url)) if v}
    scientist = model_for_role("scientist", settings, **overrides)
    if demo_seed is not None and not usable_scientist(scientist):
        from silicolab.studies.demo_study import demo_models

        return demo_models(demo_seed, settings.resolved_cache_path).scientist
    if needed_for and not usable_scientist(scientist):
        raise InputError(
            f"the scientist model is the offline 'scripted' test double, which cannot "
            f"{needed_for}: pass model=SPEC (e.g. openai:gpt-4o-mini, or a local server "
            "with base_url=), or configure the scientist role in silicolab.yaml",
            params=("model", "base_url"),
        )
    return scientist


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
    """The run's shared :class:`~silicolab.llm.budget.Budget` for ``max_cost`` (None
    without it), counting what ``run``'s earlier processes spent."""
    if max_cost is None:
        return None
    from silicolab.llm.budget import Budget

    return Budget(max_cost, spent_usd=spent_before(run))


def role_overrides(
    role: str, settings: Any, overrides: dict[str, Any], *, prices: Prices | None, budget: Any
) -> dict[str, Any]:
    """``overrides`` for ``role``'s model plus the run's ``budget``, and the given
    ``prices`` when the role's model is a paid one (scripted and local models stay free
    whatever the caller says)."""
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
    """The roles whose models the study calls: the scientist with ``predict`` or
    ``follow_on``, subjects and coordinator unless the subjects are rule-based."""
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
    """Refuse ``max_cost`` (before any run directory or call) when a paid model's price is
    unknown, or when the units would run on a Ray cluster, where the limit cannot be
    held. Runs without a paid model are never refused."""
    if max_cost is None:
        return
    paid = paid_roles(models, options)
    for role in paid:
        model = getattr(models, role)
        if not _prices(model).known:
            raise InputError(
                f"max_cost= needs the price of {role} model {model.spec}, which is "
                f"unknown: give prices= (input and output USD per 1M tokens), or prices: "
                f"in silicolab.yaml under models.{role}",
                params=("max_cost", "prices"),
            )
    refuse_limit_on_ray(bool(paid), max_cost=max_cost, executor=executor)


def refuse_limit_on_ray(paid: bool, *, max_cost: float | None, executor: Any) -> None:
    """Refuse ``max_cost`` for paid calls on a Ray cluster, where the limit cannot be held
    (it is kept on this machine only)."""
    if max_cost is not None and paid and getattr(executor, "kind", "local") == "ray":
        raise InputError(
            "max_cost= is held on this machine only, not on a Ray cluster: drop "
            "executor='ray', or drop max_cost=",
            params=("max_cost", "executor"),
        )


def _prices(model: Any) -> Prices:
    ledger = getattr(model, "ledger", None)
    return getattr(ledger, "prices", None) or Prices()


def check_plan_cost(plan: Any, max_cost: float | None) -> None:
    """Refuse a plan whose cost may reach more than ``max_cost``."""
    if max_cost is not None and plan.cost_usd is not None and plan.cost_usd[1] > max_cost:
        raise InputError(
            f"the planned cost may reach ${plan.cost_usd[1]:.2f}, above max_cost={max_cost:g}; "
            "run fewer conditions (conditions=N) or raise max_cost=",
            params=("max_cost", "conditions"),
        )


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
    "PRICE_SOURCE",
    "check_plan_cost",
    "check_spending_limit",
    "given_prices",
    "make_budget",
    "paid_roles",
    "refuse_limit_on_ray",
    "role_overrides",
    "scientist_model",
    "spent_before",
    "study_models",
    "study_plan",
    "usable_scientist",
]
