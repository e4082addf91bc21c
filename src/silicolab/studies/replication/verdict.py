"""A verdict per path of a replicated study, stated with the rule that gave it.

:func:`verdict` reads a path's :class:`~.meta.PathMeta` and its
:class:`~.decomposition.Decomposition` and applies the rules below in this order; the first
that holds is the verdict, and ``Verdict.rule_text`` states it in words with the thresholds:

1. **too few variants** - fewer than :data:`MIN_VARIANTS` usable variants: nothing to compare.
2. **robust** - every variant has the sign of the pooled estimate, the random-effects 95 %
   CI excludes zero, and I^2 is below :data:`ROBUST_I2_MAX`.
3. **model-dependent** / **wording-dependent** / **seed-dependent** - the factor with the
   largest share of the spread holds at least :data:`DOMINANT_SHARE` of it, and across its
   levels the sign of the path (of the level's mean estimate) or its significance (most of
   the level's variants with p < 0.05, or not) changes.
4. **not supported** - the random-effects CI includes zero and no factor holds
   :data:`DOMINANT_SHARE` of the spread.
5. **heterogeneous** - anything else: the variants disagree and no single factor explains it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from silicolab.core.errors import InputError
from silicolab.studies.replication.decomposition import FACTORS, Decomposition
from silicolab.studies.replication.meta import SIGNIFICANCE, PathMeta, VariantEstimate

#: Fewer usable variants than this get "too few variants".
MIN_VARIANTS = 2
#: "robust" needs I^2 strictly below this (Higgins' "moderate" heterogeneity starts at 50 %).
ROBUST_I2_MAX = 0.5
#: A factor "explains" the spread when it holds at least this share of the sum of squares.
DOMINANT_SHARE = 0.5
#: A factor level counts as significant when at least this share of its variants has p < 0.05.
LEVEL_SIGNIFICANT_SHARE = 0.5

VERDICTS = (
    "too few variants",
    "robust",
    "model-dependent",
    "wording-dependent",
    "seed-dependent",
    "not supported",
    "heterogeneous",
)

_DEPENDENT = (
    "the {f} holds the largest share of the spread of the estimates (at least "
    f"{DOMINANT_SHARE:.0%}) and the path's sign or significance changes from one {{f}} to "
    "another (sign of each {f}'s mean estimate; significant when at least "
    f"{LEVEL_SIGNIFICANT_SHARE:.0%} of its variants have p < {SIGNIFICANCE})"
)
RULES = {
    "too few variants": f"fewer than {MIN_VARIANTS} usable variants: the path cannot be "
    "compared across models, wordings or seeds",
    "robust": "every variant has the sign of the pooled estimate, the random-effects 95% CI "
    f"excludes zero, and I^2 is below {ROBUST_I2_MAX:.0%}",
    "model-dependent": _DEPENDENT.format(f="model"),
    "wording-dependent": _DEPENDENT.format(f="wording"),
    "seed-dependent": _DEPENDENT.format(f="seed"),
    "not supported": "the random-effects 95% CI includes zero and no factor (model, wording, "
    f"seed) holds {DOMINANT_SHARE:.0%} of the spread of the estimates",
    "heterogeneous": "not robust, yet no single factor explains the disagreement between "
    "variants (no rule above holds)",
}


@dataclass(frozen=True)
class Verdict:
    """The verdict ``name`` (one of :data:`VERDICTS`), its rule in words and the ``detail``
    of the numbers that decided it."""

    name: str
    rule_text: str
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "rule_text": self.rule_text, "detail": self.detail}


def level_summary(
    variants: tuple[VariantEstimate, ...], factor: str
) -> dict[str, tuple[int, bool]]:
    """For each level of ``factor``: the sign of its variants' mean estimate (-1, 0, 1) and
    whether it counts as significant (see :data:`LEVEL_SIGNIFICANT_SHARE`)."""
    groups: dict[str, list[VariantEstimate]] = {}
    for row in variants:
        groups.setdefault(str(getattr(row, factor)), []).append(row)
    out = {}
    for level, rows in groups.items():
        mean = sum(r.estimate for r in rows) / len(rows)
        significant = sum(r.p_value < SIGNIFICANCE for r in rows) / len(rows)
        out[level] = ((mean > 0) - (mean < 0), significant >= LEVEL_SIGNIFICANT_SHARE)
    return out


def flips(variants: tuple[VariantEstimate, ...], factor: str) -> bool:
    """Whether the path's sign or significance changes across the levels of ``factor``."""
    summary = level_summary(variants, factor).values()
    signs = {sign for sign, _ in summary if sign != 0}
    return len(signs) > 1 or len({significant for _, significant in summary}) > 1


def verdict(meta: PathMeta, decomposition: Decomposition) -> Verdict:
    """The verdict of ``meta``'s path (rules in the module docstring)."""
    if decomposition.path != meta.path:
        raise InputError(
            f"decomposition= is of path {decomposition.path!r}, meta= of {meta.path!r}: pass "
            "the two results of the same path",
            params=("decomposition", "meta"),
        )
    if meta.k < MIN_VARIANTS or meta.random is None:
        return _make("too few variants", f"{meta.k} usable variant(s)")
    random = meta.random
    excludes_zero = random.excludes_zero()
    ci = f"random-effects CI [{random.ci_low:.3g}, {random.ci_high:.3g}]"
    i2 = meta.i2 if meta.i2 is not None else 0.0
    stats = f"{ci}, I^2 = {i2:.0%}, same sign in {meta.same_sign_share:.0%} of variants"
    if meta.same_sign_share == 1.0 and excludes_zero and i2 < ROBUST_I2_MAX:
        return _make("robust", stats)
    largest = decomposition.largest()
    if largest is not None and largest[1] >= DOMINANT_SHARE:
        factor, share = largest
        if flips(meta.variants, factor):
            levels = level_summary(meta.variants, factor)
            shown = ", ".join(
                f"{lvl}: sign {s:+d}{' (significant)' if sig else ''}"
                for lvl, (s, sig) in levels.items()
            )
            return _make(f"{factor}-dependent", f"{factor} share {share:.0%}; {shown}")
    shares = ", ".join(
        f"{f} {decomposition.shares[f]:.0%}" for f in FACTORS if decomposition.shares[f] is not None
    )
    detail = f"{stats}; shares: {shares or 'no spread'}"
    if not excludes_zero and (largest is None or largest[1] < DOMINANT_SHARE):
        return _make("not supported", detail)
    return _make("heterogeneous", detail)


def _make(name: str, detail: str) -> Verdict:
    return Verdict(name=name, rule_text=RULES[name], detail=detail)


__all__ = [
    "DOMINANT_SHARE",
    "LEVEL_SIGNIFICANT_SHARE",
    "MIN_VARIANTS",
    "ROBUST_I2_MAX",
    "RULES",
    "VERDICTS",
    "Verdict",
    "flips",
    "level_summary",
    "verdict",
]
