"""Where the spread of a path's estimates comes from: the subject model, the wording, the seed.

:func:`variance_decomposition` fits, with statsmodels' formula API, the ordinary least
squares model ``estimate ~ C(model) + C(wording) + C(seed)`` over one path's usable
variants and reads each factor's type-2 sum of squares from ``anova_lm(typ=2)``; a factor's
share is its sum of squares over the total sum of squares of the estimates around their
mean, and the residual's share is what the three factors leave (their interactions and
the sampling noise within a cell).

Assumptions, stated where they matter:

- **A balanced grid** (every model x wording x seed combination once, as ``study
  replicate`` runs it): then the type-2 sums of squares are orthogonal and the four shares
  add up to 1. In an unbalanced grid factors overlap, the shares need not add up to 1, and
  ``balanced`` is false.
- **A factor with one level** explains nothing: it is left out of the model and its share
  is 0.
- The estimates are decomposed as points, unweighted by their SE: the question is how far
  the *reported findings* move with each factor, not the precision of each.
- With no spread at all (every estimate equal, or one variant) the shares are undefined
  (``None``) and ``note`` says why.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from silicolab.core.errors import InputError
from silicolab.studies.replication.meta import VariantEstimate, _clean

#: The variant factors, in the order they are reported.
FACTORS = ("model", "wording", "seed")


@dataclass(frozen=True)
class Decomposition:
    """The shares of one path's total sum of squares: ``shares`` per factor (``model``,
    ``wording``, ``seed``) and ``residual`` (``None`` when there is no spread), the number
    of ``levels`` of each factor, ``n`` variants used, ``total_ss``, ``balanced`` and a
    ``note`` on special cases."""

    path: str
    shares: dict[str, float | None]
    residual: float | None
    levels: dict[str, int]
    n: int
    total_ss: float
    balanced: bool
    note: str = ""

    def largest(self) -> tuple[str, float] | None:
        """The factor with the largest share and its share, ``None`` without spread."""
        known = {f: s for f, s in self.shares.items() if s is not None}
        if not known:
            return None
        name = max(FACTORS, key=lambda f: known.get(f, -1.0))
        return name, known[name]

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "shares": {k: _clean(v) for k, v in self.shares.items()},
            "residual": _clean(self.residual),
            "levels": dict(self.levels),
            "n": self.n,
            "total_ss": _clean(self.total_ss),
            "balanced": self.balanced,
            "note": self.note,
        }


def variance_decomposition(rows: Iterable[VariantEstimate], path: str) -> Decomposition:
    """The model / wording / seed / residual shares of the spread of ``path``'s estimates
    (usable rows only: see :meth:`VariantEstimate.problem`). Raises :class:`InputError`
    when ``rows`` hold no row for ``path``."""
    import pandas as pd

    mine = [r for r in rows if r.path == path]
    if not mine:
        raise InputError(f"path={path!r}: no row has this path", params=("path",))
    usable = [r for r in mine if r.problem() is None]
    frame = pd.DataFrame(
        {
            "estimate": [r.estimate for r in usable],
            "model": [r.model for r in usable],
            "wording": [str(r.wording) for r in usable],
            "seed": [str(r.seed) for r in usable],
        }
    )
    levels = {f: int(frame[f].nunique()) for f in FACTORS}
    cells = frame.groupby(list(FACTORS)).size() if usable else pd.Series(dtype=int)
    full = 1
    for f in FACTORS:
        full *= max(levels[f], 1)
    balanced = bool(len(cells) == full and (cells == 1).all()) if usable else False
    total = float(((frame.estimate - frame.estimate.mean()) ** 2).sum()) if usable else 0.0
    excluded = len(mine) - len(usable)
    notes = [f"{excluded} excluded row(s) left out"] if excluded else []
    base = {"path": path, "levels": levels, "n": len(usable), "balanced": balanced}
    scale = 1.0 + float((frame.estimate**2).sum()) if usable else 1.0
    if total <= 1e-12 * scale:  # equal estimates up to rounding: nothing to attribute
        notes.insert(
            0, "no spread: every usable estimate is the same" if usable else "no usable row"
        )
        shares: dict[str, float | None] = dict.fromkeys(FACTORS)
        return Decomposition(
            shares=shares, residual=None, total_ss=total, note="; ".join(notes), **base
        )
    shares, residual = _anova_shares(frame, levels, total)
    if not balanced:
        notes.insert(0, "unbalanced grid: the shares need not add up to 1")
    return Decomposition(
        shares=shares, residual=residual, total_ss=total, note="; ".join(notes), **base
    )


def _anova_shares(
    frame: Any, levels: dict[str, int], total: float
) -> tuple[dict[str, float | None], float]:
    """Each factor's type-2 sum of squares over ``total``, and the residual's share.

    In a model of main effects only, a factor's type-2 sum of squares is the residual sum
    of squares of the fit without it minus that of the fit with every factor, which is what
    ``anova_lm(typ=2)`` reports; computed from the fits directly because ``anova_lm`` also
    builds F tests and raises when the grid is saturated (no residual degrees of freedom,
    as when a few variants are left with one estimate per cell)."""
    import numpy as np
    import statsmodels.formula.api as smf

    present = [f for f in FACTORS if levels[f] > 1]
    shares: dict[str, float | None] = dict.fromkeys(FACTORS, 0.0)
    if not present:  # cannot happen with distinct variants, kept for clarity of the shares
        return shares, 1.0

    def ssr(factors: list[str]) -> float:
        terms = " + ".join(f"C({f})" for f in factors) or "1"
        return max(0.0, float(smf.ols(f"estimate ~ {terms}", data=frame).fit().ssr))

    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")  # a saturated grid: statsmodels warns on its scale
        full = ssr(present)
        for f in present:
            shares[f] = max(0.0, ssr([g for g in present if g != f]) - full) / total
    return shares, full / total


__all__ = ["FACTORS", "Decomposition", "variance_decomposition"]
