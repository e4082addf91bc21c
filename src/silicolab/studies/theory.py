"""Scoring predictions, and the theory benchmark of a study that declares a theory (§4).

Manning, Zhu & Horton (2024, §4.1 and §4.3) score every prediction of the auction's
clearing price by its mean squared error (MSE) over the simulations that were fitted
(the 80 capped auctions removed), and set them against auction theory, whose prediction
is the second-highest budget:

* ``MSE_Theory`` (128 in the paper): theory's price against the observed price;
* ``MSE_{y_i - Theory}`` (8915): the scientist's predict-y answers against theory's
  price, i.e. how far the predictions are from the theory rather than from the data;
* ``MSE_{y_i|β₋ᵢ - Theory}`` (1761): the same for the answers given the refitted SCM.

A study declares its theory in the hypothesis file (``theory:`` naming a derived
variable, see :mod:`silicolab.studies.derived`); here it becomes the per-condition
``theory`` column and the ``theory*`` entries of the predictions' ``mse``. The mechanical
leave-one-out predictions are scored against theory too (``loo_mechanical_theory``),
which the paper does not report but costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from silicolab.core.errors import InputError
from silicolab.studies.derived import theory_column
from silicolab.studies.hypothesis import Hypothesis

#: mse key -> the prediction column compared with theory's (the paper's y - Theory terms).
AGAINST_THEORY = {
    "predict_y_theory": "predict_y",
    "loo_llm_theory": "loo_llm",
    "loo_mechanical_theory": "loo_mechanical",
}


def mse(observed: pd.Series, predicted: pd.Series) -> float | None:
    """Mean squared error over the rows where both are known (``None`` when none are)."""
    both = pd.concat([observed, predicted], axis=1).dropna()
    if both.empty:
        return None
    return float(np.mean((both.iloc[:, 0] - both.iloc[:, 1]) ** 2))


def theory_values(hypothesis: Hypothesis, rows: pd.DataFrame) -> pd.Series | None:
    """Theory's prediction of the outcome for each of ``rows`` (same index), or ``None``
    when the hypothesis declares no theory. A nominal outcome has no numeric theory
    prediction to compare: asking for one is an :class:`InputError` (callers skip it)."""
    if hypothesis.theory is None:
        return None
    if hypothesis.outcome.type == "nominal":
        raise InputError(
            f"the outcome {hypothesis.outcome.name!r} is nominal: a theory's numeric "
            "prediction cannot be scored against it by mean squared error"
        )
    column = theory_column(hypothesis, rows.reset_index(drop=True))
    if column is None:
        return None
    return pd.Series(np.asarray(column, dtype=float), index=rows.index, name="theory")


def theory_scores(table: pd.DataFrame, chosen: Sequence[str]) -> dict[str, float | None]:
    """The theory benchmark of a per-condition ``table`` (indexed by condition, with
    ``observed``, ``theory`` and whichever prediction columns were made):

    * ``theory``: MSE of theory against the observed outcome, on every row;
    * ``theory_subset``: the same on the ``chosen`` rows the model was asked about;
    * ``predict_y_theory``, ``loo_llm_theory``, ``loo_mechanical_theory``: MSE of each
      prediction against theory, on the rows where that prediction exists."""
    if "theory" not in table:
        return {}
    out = {
        "theory": mse(table["observed"], table["theory"]),
        "theory_subset": mse(
            table.loc[list(chosen), "observed"], table.loc[list(chosen), "theory"]
        ),
    }
    for key, column in AGAINST_THEORY.items():
        if column in table:
            out[key] = mse(table[column], table["theory"])
    return out


__all__ = ["AGAINST_THEORY", "mse", "theory_scores", "theory_values"]
