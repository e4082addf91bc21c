"""The experimental design: which treatment combinations (conditions) are run.

A full factorial crosses every treatment's values; ``conditions=N`` draws a seeded random
subset of N of them. A condition's id is a hash of its treatment values, so it is stable
under every edit of the hypothesis that leaves the treatments alone (a reworded goal, a
new survey question): a resumed or re-run study finds its finished conditions again.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass
from typing import Any

from silicolab.core.errors import InputError
from silicolab.core.seeding import rng
from silicolab.studies.hypothesis import Hypothesis

#: Designs above this many runs need an explicit ``max_conditions``.
DEFAULT_MAX_CONDITIONS = 1000


@dataclass(frozen=True)
class Condition:
    """One run of a treatment combination: ``treatments`` maps each cause to its value
    text; ``id`` names the combination (shared by its replicates) and ``replicate``
    (0-based) which independent run of it this is."""

    id: str
    index: int
    treatments: dict[str, str]
    replicate: int = 0

    @property
    def unit_id(self) -> str:
        """The run's key in ``events.jsonl`` and its sample identity: the condition id,
        with ``/r<k>`` for replicates after the first (so a one-replicate study keeps the
        keys it always had)."""
        return self.id if self.replicate == 0 else f"{self.id}/r{self.replicate}"

    def to_dict(self) -> dict[str, Any]:
        out = {"id": self.id, "index": self.index, "treatments": dict(self.treatments)}
        if self.replicate:
            out["replicate"] = self.replicate
        return out


@dataclass(frozen=True)
class Design:
    """The conditions to run, and how they were chosen."""

    conditions: list[Condition]
    full_size: int
    kind: str
    seed: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "full_size": self.full_size,
            "seed": self.seed,
            "conditions": [c.to_dict() for c in self.conditions],
        }


def condition_id(treatments: dict[str, str]) -> str:
    """``c-`` and 10 hex digits of the SHA-256 of the sorted treatment values."""
    text = json.dumps(treatments, sort_keys=True, ensure_ascii=False)
    return "c-" + hashlib.sha256(text.encode()).hexdigest()[:10]


def factorial_size(hypothesis: Hypothesis) -> int:
    return math.prod(len(v.values) for v in hypothesis.treatments)


def make_design(
    hypothesis: Hypothesis,
    *,
    conditions: int | None = None,
    seed: int | None = 0,
    max_conditions: int = DEFAULT_MAX_CONDITIONS,
    replicates: int = 1,
) -> Design:
    """The full factorial, or ``conditions`` of its cells drawn at random with ``seed``
    (kept in factorial order), each cell run ``replicates`` independent times (replicates
    of a cell are adjacent). Refuses a design whose runs exceed ``max_conditions``."""
    treatments = hypothesis.treatments
    full = factorial_size(hypothesis)
    if conditions is not None and not conditions >= 1:
        raise InputError(f"conditions={conditions} must be at least 1", params=("conditions",))
    if not replicates >= 1:
        raise InputError(f"replicates={replicates} must be at least 1", params=("replicates",))
    wanted = (full if conditions is None else min(conditions, full)) * replicates
    if wanted > max_conditions:
        raise InputError(
            f"the design has {wanted} runs, above max_conditions={max_conditions}; "
            f"raise max_conditions= or run a random subset with conditions=N",
            params=("max_conditions", "conditions"),
        )
    if conditions is None or conditions >= full:
        chosen = range(full)
        kind = "factorial"
    else:
        picks = rng(seed, "design", hypothesis.name).choice(full, size=conditions, replace=False)
        chosen = sorted(int(i) for i in picks)
        kind = "random_subset"
    cells = list(itertools.product(*(v.values for v in treatments)))
    out = []
    for index in chosen:
        values = dict(zip((v.name for v in treatments), cells[index], strict=True))
        out.extend(Condition(condition_id(values), index, values, r) for r in range(replicates))
    return Design(out, full, kind, seed if kind == "random_subset" else None)


__all__ = ["DEFAULT_MAX_CONDITIONS", "Condition", "Design", "condition_id", "make_design"]
