"""A synthetic auction experiment with a known linear truth, shared by the studies tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from silicolab.scm import PathEstimates, estimate_paths
from silicolab.studies import Hypothesis, load_example, make_design
from silicolab.studies.fit import scm_variables

#: price = 20 + 0.3 budget_1 + 0.5 budget_2 + 0 budget_3 + N(0, 15^2)
EFFECTS = {"budget_1": 0.3, "budget_2": 0.5, "budget_3": 0.0}


def synthetic_auction(
    n: int = 60, seed: int = 1, effects: dict[str, float] | None = None
) -> tuple[Hypothesis, pd.DataFrame, PathEstimates]:
    """The auction study on a seeded subset of ``n`` of its conditions, the data table the
    pipeline would produce, and its fit."""
    effects = effects or EFFECTS
    hypothesis = load_example("auction")
    design = make_design(hypothesis, conditions=n, seed=seed)
    rows = []
    for c in design.conditions:
        row: dict[str, object] = {"condition_id": c.id}
        row |= {k: hypothesis.variable(k).numeric(v) for k, v in c.treatments.items()}
        rows.append(row)
    data = pd.DataFrame(rows)
    noise = np.random.default_rng(seed).normal(0, 15, len(data))
    data["final_price"] = 20 + sum(b * data[k] for k, b in effects.items()) + noise
    fit = estimate_paths(data, hypothesis.equations(), variables=scm_variables(hypothesis))
    return hypothesis, data, fit
