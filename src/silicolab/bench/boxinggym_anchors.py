"""The BoxingGym paper's published numbers (spec §16 and §2.3: the paper's Tables 1-3),
each a table cell with its provenance (:mod:`silicolab.bench.anchors`).

Table 1 holds GPT-4o's standardized errors (prior condition: before, after 10 experiments,
after communication), Table 2 Box's Apprentice's, Table 3 the EI regrets of both, with and
without the prior. The paper's Tables 4-5 give the standardized errors with 95% CIs, with
and without the prior; they are not transcribed (spec §16), so no-prior standardized errors
have no anchor here.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from silicolab.bench.anchors import Kind, Provenance

if TYPE_CHECKING:
    import pandas as pd

#: The 13 (environment, goal) pairs of the paper's Table 1, in its order.
TABLE1_ORDER: tuple[tuple[str, str], ...] = (
    ("hyperbolic_temporal_discount", "direct"),
    ("hyperbolic_temporal_discount", "discount"),
    ("location_finding", "direct"),
    ("location_finding", "source"),
    ("death_process", "direct"),
    ("death_process", "infection"),
    ("irt", "direct"),
    ("dugongs", "direct"),
    ("peregrines", "direct"),
    ("survival", "direct"),
    ("lotka_volterra", "direct"),
    ("emotion", "direct"),
    ("moral_machines", "direct"),
)


@dataclass(frozen=True)
class Anchor:
    """One published number: ``metric`` of ``agent`` ("gpt-4o" or "box", Box's Apprentice)
    on ``env``/``goal`` with or without the prior, from ``table``."""

    env: str
    goal: str
    agent: str
    metric: str  # "before" | "after" | "after_comm" | "regret"
    value: float
    prior: bool = True
    table: str = "1"
    note: str = ""

    @property
    def provenance(self) -> Provenance:
        """Where the number is: a cell of the paper's Table ``table``."""
        prior = "" if self.prior else ", no prior"
        where = (
            f"Table {self.table}, row {self.env}/{self.goal}{prior}, col {self.agent} {self.metric}"
        )
        return Provenance(Kind.TABLE, where)


_PAIRS = list(TABLE1_ORDER)
_NaN = math.nan
# Table 1, GPT-4o, prior: before / after 10 / after communication (– = not run).
_TABLE1 = (
    (0.31, 0.74, 0.74),
    (-0.06, -0.06, _NaN),
    (0.96, 1.24, 0.97),
    (1.29, -0.15, _NaN),
    (1.19, 0.46, 0.75),
    (0.13, 1.64, _NaN),
    (0.00, 0.00, -0.28),
    (0.06, -0.09, -0.08),
    (2.29, -0.65, -0.63),
    (0.18, 0.27, 1.00),
    (0.08, -0.45, -0.26),
    (0.74, 0.82, 0.87),
    (0.32, 0.44, 0.60),
)
# Table 2, Box's Apprentice, prior.
_TABLE2 = {
    ("hyperbolic_temporal_discount", "direct"): (0.66, 1.17, 0.66),
    ("location_finding", "direct"): (0.99, 1.45, 1.18),
    ("death_process", "direct"): (3.79, -1.02, 0.58),
    ("irt", "direct"): (0.44, -0.12, -0.08),
    ("dugongs", "direct"): (0.26, -0.08, -0.09),
    ("peregrines", "direct"): (2.71, 0.04, 0.97),
    ("survival", "direct"): (0.14, 0.55, 0.91),
    ("moral_machines", "direct"): (0.97, 0.89, 0.56),
}
# Table 3, EI regret: (gpt-4o prior, gpt-4o no prior, box prior, box no prior).
_TABLE3 = {
    ("hyperbolic_temporal_discount", "direct"): (0.57, 0.61, 0.55, 0.62),
    ("hyperbolic_temporal_discount", "discount"): (0.69, _NaN, _NaN, _NaN),
    ("location_finding", "direct"): (15.3, 11.8, 12.6, 15.3),
    ("location_finding", "source"): (16.8, _NaN, _NaN, _NaN),
    ("death_process", "direct"): (0.037, 0.042, 0.029, 0.019),
    ("death_process", "infection"): (0.108, _NaN, _NaN, _NaN),
    ("irt", "direct"): (0.035, 0.031, 0.031, 0.033),
    ("dugongs", "direct"): (0.20, 0.17, 0.19, 0.20),
    ("peregrines", "direct"): (0.26, 0.38, 0.25, 0.66),
    ("survival", "direct"): (0.084, 0.082, 0.079, 0.075),
    ("emotion", "direct"): (0.538, _NaN, _NaN, _NaN),
    ("moral_machines", "direct"): (0.046, _NaN, 0.045, _NaN),
}
_LOCATION_NOTE = "upstream EIG artefact; regrets clipped to [0, 50000] and divided by 1000"


def _anchors() -> tuple[Anchor, ...]:
    out: list[Anchor] = []
    metrics = ("before", "after", "after_comm")
    for (env, goal), values in zip(_PAIRS, _TABLE1, strict=True):
        out += [Anchor(env, goal, "gpt-4o", m, v) for m, v in zip(metrics, values, strict=True)]
    for (env, goal), values in _TABLE2.items():
        out += [
            Anchor(env, goal, "box", m, v, table="2") for m, v in zip(metrics, values, strict=True)
        ]
    for (env, goal), values in _TABLE3.items():
        note = _LOCATION_NOTE if env == "location_finding" else ""
        for (agent, prior), v in zip(
            (("gpt-4o", True), ("gpt-4o", False), ("box", True), ("box", False)),
            values,
            strict=True,
        ):
            out.append(Anchor(env, goal, agent, "regret", v, prior, "3", note))
    return tuple(a for a in out if not math.isnan(a.value))


PUBLISHED: tuple[Anchor, ...] = _anchors()


def published_table() -> pd.DataFrame:
    """:data:`PUBLISHED` as a tidy table, with each number's provenance."""
    import pandas as pd

    return pd.DataFrame([{**asdict(a), **a.provenance.to_dict()} for a in PUBLISHED])


def find_anchor(env: str, goal: str, agent: str, metric: str, prior: bool = True) -> float:
    """The published value, or NaN when the paper has none."""
    anchor = anchor_of(env, goal, agent, metric, prior)
    return math.nan if anchor is None else anchor.value


def anchor_of(env: str, goal: str, agent: str, metric: str, prior: bool) -> Anchor | None:
    """The published :class:`Anchor`, or None when the paper has none."""
    for a in PUBLISHED:
        if (a.env, a.goal, a.agent, a.metric, a.prior) == (env, goal, agent, metric, prior):
            return a
    return None


__all__ = ["PUBLISHED", "TABLE1_ORDER", "Anchor", "anchor_of", "find_anchor", "published_table"]
