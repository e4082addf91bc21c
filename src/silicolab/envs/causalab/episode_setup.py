"""Where an episode's crystals come from, and its step cap (spec §4.1, §4.3).

* Prior records: one ``random.Random(42)`` shared by the records, each controllable
  property in config order getting ``randint(0, 100)`` (published rule); hard-quadratic
  graphs use their presets for the first two records; ``seeded=True`` draws from the
  episode seed instead.
* Crystals, fixed fidelity: integers 0..100 from a generator derived from
  ``(seed, graph_id, role)``.
* Crystals, faithful fidelity: one ``Random(seed*1000 + h(name) % 1000 [+ 50000 for the
  reactor])`` per property, as published, with the stable hash for ``h`` (upstream used the
  salted built-in ``hash``, so its crystals cannot be reproduced).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from silicolab.core.errors import InputError
from silicolab.core.seeding import rng, stable_hash
from silicolab.envs.causalab.graph_config import GraphConfig

PRIOR_SEED = 42
REACTOR_SEED_OFFSET = 50000
#: MAX_ENV_CALLS base per graph size; +24 in the main runner, +2*budget for variants
STEP_BASE = {3: 28, 4: 29, 5: 30, 6: 31, 7: 32}
MAIN_SUITES = frozenset({"3nodes", "4nodes", "5nodes", "6nodes", "7nodes"})
#: the order in which the reactor panel lists crystal properties (spec §4.4)
REACTOR_ORDER = (
    "temperatureC",
    "moisture",
    "density",
    "quantumSize",
    "radiation",
    "pressure",
    "ph",
    "conductivity",
)
#: crystal defaults the published reactor panel shows even when they are not graph nodes
DISTRACTORS = {"temperatureC": 25.0, "density": 1.0, "quantumSize": 2.0}


def check_options(
    fidelity: str,
    intervention_rule: str,
    n_prior: Any,
    budget: Any,
    max_env_steps: Any,
    bases: Mapping[str, Any] | None,
) -> None:
    """Raise :class:`InputError` for an impossible lab option."""
    if fidelity not in ("fixed", "faithful"):
        raise InputError(f"fidelity must be 'fixed' or 'faithful'; got {fidelity!r}")
    if intervention_rule not in ("coded", "paper"):
        raise InputError(f"intervention_rule must be 'coded' or 'paper'; got {intervention_rule!r}")
    for name, value in (("n_prior", n_prior), ("budget", budget), ("max_env_steps", max_env_steps)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            raise InputError(f"{name} must be a non-negative integer; got {value!r}")
    unknown_roles = set(bases or {}) - {"manipulator", "reactor", "prior"}
    if unknown_roles:
        raise InputError(
            f"unknown base roles {sorted(unknown_roles)}; use manipulator, reactor, prior"
        )


def as_number(value: Any) -> float | None:
    """``value`` as a finite float, or ``None`` if it is not a number (bools are not)."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def reactor_panel(config: GraphConfig, values: Mapping[str, Any], fidelity: str) -> dict[str, Any]:
    """The target crystal's properties in the reactor's listing order, without the target;
    faithful mode adds the published constant distractors for properties not in the graph."""
    shown: dict[str, Any] = {}
    for name in REACTOR_ORDER:
        if name in values:
            shown[name] = values[name]
        elif fidelity == "faithful" and name in DISTRACTORS:
            shown[name] = DISTRACTORS[name]
    shown.update({n: v for n, v in values.items() if n != config.nodes[0] and n not in shown})
    return shown


def default_max_env_steps(config: GraphConfig, budget: int) -> int:
    """The published step cap: 28..32 for 3..7 nodes (38 otherwise) plus 24 in the main
    suites at their own budget, else plus 2 * budget (the variant runner)."""
    base = STEP_BASE.get(len(config.nodes), 38)
    main = config.suite in MAIN_SUITES and budget == config.budget
    return base + (24 if main else 2 * budget)


def checked_bases(config: GraphConfig, bases: Mapping[str, Any], role: str) -> dict[str, Any]:
    """``bases`` restricted to the controllable properties; every one must be given."""
    missing = set(config.controllable) - set(bases)
    if missing:
        raise InputError(f"the {role} bases give no value for {sorted(missing)}")
    return {n: bases[n] for n in config.controllable}


def prior_bases(
    config: GraphConfig,
    n_prior: int,
    *,
    seed: int | None,
    seeded: bool = False,
    given: Sequence[Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The bases of the ``n_prior`` prior records."""
    if given is not None:
        return [checked_bases(config, b, "prior") for b in given][:n_prior]
    presets = (config.presets or {}).get("observations", [])
    published = random.Random(PRIOR_SEED)
    own = rng(seed, config.graph_id, "prior")
    records = []
    for i in range(n_prior):
        if i < len(presets):
            records.append(checked_bases(config, presets[i], "preset"))
        elif seeded:
            records.append(
                {n: int(own.integers(0, 100, endpoint=True)) for n in config.controllable}
            )
        else:
            records.append({n: published.randint(0, 100) for n in config.controllable})
    return records


def crystal_bases(
    config: GraphConfig,
    role: Literal["manipulator", "reactor"],
    *,
    fidelity: str,
    seed: int | None,
    given: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The bases of the manipulator's or the reactor's crystal."""
    if given is not None:
        return checked_bases(config, given, role)
    if config.presets is not None:
        return checked_bases(config, config.presets[role], role)
    if fidelity == "faithful":
        env_seed = 1 if seed is None else seed
        offset = REACTOR_SEED_OFFSET if role == "reactor" else 0
        return {
            n: random.Random(env_seed * 1000 + stable_hash(n) % 1000 + offset).randint(0, 100)
            for n in config.controllable
        }
    gen = rng(seed, config.graph_id, role)
    return {n: int(gen.integers(0, 100, endpoint=True)) for n in config.controllable}
