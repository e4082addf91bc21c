"""A replication's record as two flat tables to plot, filter and cite: every variant's
estimate of every path (``estimates.csv``) and one line per path with its pooled
estimates, heterogeneity, variance shares and verdict (``paths.csv``). Numbers are kept
unrounded; a value the analysis could not compute is empty (NaN in pandas)."""

from __future__ import annotations

from typing import Any

import pandas as pd

#: The columns of :func:`estimates_table`, in order.
ESTIMATE_COLUMNS = ("variant", "model", "wording", "seed", "path", "estimate", "se", "p", "n")
#: The factors of the variance decomposition, as ``share_<factor>`` columns.
FACTORS = ("model", "wording", "seed")


def estimates_table(record: dict[str, Any]) -> pd.DataFrame:
    """One row per variant and path: its estimate, standard error, p-value and rows used."""
    rows = record.get("rows") or []
    return pd.DataFrame([{c: r.get(c) for c in ESTIMATE_COLUMNS} for r in rows],
                        columns=list(ESTIMATE_COLUMNS))  # fmt: skip


def paths_table(record: dict[str, Any]) -> pd.DataFrame:
    """One row per hypothesized path: the verdict, ``k`` variants pooled, the fixed- and
    random-effects estimates with their 95 % CIs and p, tau², I², Cochran's Q (df, p), the
    prediction interval, the shares of variants with the pooled sign and with p < 0.05,
    and the variance shares of model, wording, seed and the residual."""
    out = []
    for path in record.get("paths") or []:
        row: dict[str, Any] = {
            "path": path["path"],
            "verdict": path["verdict"]["name"],
            "k": path.get("k"),
        }
        for kind in ("fixed", "random"):
            pooled = path.get(kind) or {}
            for field in ("estimate", "se", "ci_low", "ci_high", "p"):
                row[f"{kind}_{field}"] = pooled.get(field)
        for field in ("tau2", "i2", "q", "q_df", "q_p"):
            row[field] = path.get(field)
        low, high = path.get("prediction") or (None, None)
        row["prediction_low"], row["prediction_high"] = low, high
        row["same_sign_share"] = path.get("same_sign_share")
        row["significant_share"] = path.get("significant_share")
        decomposition = path.get("decomposition") or {}
        shares = decomposition.get("shares") or {}
        for factor in FACTORS:
            row[f"share_{factor}"] = shares.get(factor)
        row["share_residual"] = decomposition.get("residual")
        row["rule"] = path["verdict"].get("rule_text")
        row["detail"] = path["verdict"].get("detail")
        out.append(row)
    return pd.DataFrame(out)


__all__ = ["ESTIMATE_COLUMNS", "estimates_table", "paths_table"]
