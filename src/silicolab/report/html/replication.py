"""Figures of a replicated study: a forest plot per path and the variance decomposition.

:func:`forest_plot` draws one path: each variant's estimate with its 95 % CI, grouped by
subject model (colour, separated by a rule) then wording then seed, under them the
fixed-effect and random-effects pooled estimates as diamonds and the random-effects
prediction interval for a new variant as a bar; a row excluded from the meta-analysis keeps
its line, marked "(excluded)", without a point (its reason is in the record).
:func:`decomposition_chart` stacks, for each path, the shares of the spread from the model,
the wording, the seed and the residual. Both return a matplotlib figure
(:func:`~.figures.new_figure`) for :class:`~.figures.FigureSet`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from silicolab.report.html.figures import PALETTE, new_figure
from silicolab.studies.replication import FACTORS, Decomposition, PathMeta, VariantEstimate

#: z for the variants' 95 % intervals (the pooled ones come from the meta-analysis).
_Z95 = 1.959963984540054


def _ordered(rows: Iterable[VariantEstimate]) -> list[VariantEstimate]:
    """Rows grouped by model (in order of first appearance), then wording, then seed."""
    rows = list(rows)
    first = {m: i for i, m in reversed(list(enumerate(r.model for r in rows)))}
    return sorted(rows, key=lambda r: (first[r.model], r.wording, r.seed))


def forest_plot(meta: PathMeta, rows: Sequence[VariantEstimate]) -> Any:
    """The forest plot of ``meta``'s path from its ``rows`` (rows of other paths ignored)."""
    mine = _ordered(r for r in rows if r.path == meta.path)
    models = list(dict.fromkeys(r.model for r in mine))
    fig = new_figure(6.4, 1.2 + 0.2 * (len(mine) + 4))  # + a gap, fixed, random, prediction
    ax = fig.add_subplot()
    ticks: list[float] = []
    labels: list[str] = []
    for y, row in enumerate(mine):
        label = f"{row.model} · w{row.wording} · s{row.seed}"
        if row.problem() is None:
            colour = PALETTE[models.index(row.model) % len(PALETTE)]
            half = _Z95 * row.se
            ax.errorbar(row.estimate, -y, xerr=half, fmt="s", ms=3.5, color=colour, lw=1)
        else:
            label += " (excluded)"
        ticks.append(-y)
        labels.append(label)
        if y > 0 and mine[y - 1].model != row.model:
            ax.axhline(-y + 0.5, color="#bbb", lw=0.6)
    base = -len(mine) - 1.0
    if meta.fixed is not None and meta.random is not None:
        fixed, random = meta.fixed, meta.random
        _diamond(ax, fixed.estimate, fixed.ci_low, fixed.ci_high, base, "#555")
        _diamond(ax, random.estimate, random.ci_low, random.ci_high, base - 1, "#000")
        ticks += [base, base - 1]
        labels += ["fixed effect", "random effects (DL)"]
        if meta.prediction is not None:
            low, high = meta.prediction
            ax.plot([low, high], [base - 2] * 2, color=PALETTE[3], lw=2, solid_capstyle="butt")
            ticks.append(base - 2)
            labels.append("prediction interval")
    ax.axvline(0, color="#888", lw=0.8, ls="--")
    ax.set_yticks(ticks, labels)
    ax.tick_params(axis="y", labelsize=7)
    ax.grid(axis="y", visible=False)
    ax.set(xlabel=f"estimate of {meta.path} (95% CI)", title=meta.path)
    return fig


def _diamond(ax: Any, estimate: float, low: float, high: float, y: float, colour: str) -> None:
    """A pooled estimate as a diamond spanning its CI."""
    xs = [low, estimate, high, estimate, low]
    ys = [y, y + 0.3, y, y - 0.3, y]
    ax.fill(xs, ys, color=colour, lw=0)


def decomposition_chart(decompositions: Sequence[Decomposition]) -> Any:
    """Horizontal stacked bars, one per path: the model, wording, seed and residual shares
    of the spread of its estimates; a path without spread is marked so, not drawn."""
    fig = new_figure(6.4, 1.0 + 0.35 * max(1, len(decompositions)))
    ax = fig.add_subplot()
    parts = [*FACTORS, "residual"]
    widest = 1.0  # an unbalanced grid's shares may add up to more than 1
    for y, dec in enumerate(decompositions):
        if dec.residual is None:
            ax.text(0.01, -y, "no spread", va="center", fontsize=7, color="#666")
            continue
        values = [dec.shares[f] or 0.0 for f in FACTORS] + [dec.residual]
        left = 0.0
        widest = max(widest, sum(values))
        for i, value in enumerate(values):
            colour = PALETTE[i] if i < len(FACTORS) else "#bbb"
            ax.barh(-y, value, left=left, color=colour, height=0.6)
            left += value
    ax.set_yticks([-float(y) for y in range(len(decompositions))], [d.path for d in decompositions])
    ax.set_xlim(0, widest)
    ax.set(xlabel="share of the sum of squares of the estimates")
    ax.grid(axis="y", visible=False)
    from matplotlib.patches import Patch

    handles = [
        Patch(color=PALETTE[i] if part != "residual" else "#bbb", label=part)
        for i, part in enumerate(parts)
    ]
    ax.legend(handles=handles, fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1, 1))
    return fig


__all__ = ["decomposition_chart", "forest_plot"]


def build(src: Any) -> Any:
    """The page of a replication run: verdicts, a forest plot per path, the variance
    decomposition, the variants and the wordings side by side."""
    from silicolab.report.html.blocks import Page, Section, Text
    from silicolab.report.html.source import rows_table
    from silicolab.studies.replication import meta_analyze, variance_decomposition

    record = src.record
    rows = [VariantEstimate.from_dict(r) for r in record.get("rows") or []]
    metas = meta_analyze(rows) if rows else []
    paths = record.get("paths") or []
    verdicts = [
        {"path": p["path"], "verdict": p["verdict"]["name"], "rule": p["verdict"]["rule_text"]}
        for p in paths
    ]
    summary: list[Any] = [
        rows_table(verdicts, [("path", "path"), ("verdict", "verdict"), ("rule", "rule")])
        if verdicts
        else Text("No variant gave a fitted path.", muted=True)
    ]
    forests = [
        src.figures.add(f"forest-{i}", forest_plot(m, rows), f"Forest plot: {m.path}")
        for i, m in enumerate(metas)
    ]
    if metas:
        decs = [variance_decomposition(rows, m.path) for m in metas]
        forests.append(
            src.figures.add("decomposition", decomposition_chart(decs),
                            "Shares of each path's spread: model, wording, seed, residual")
        )  # fmt: skip
    variants = rows_table(
        record.get("variants") or [],
        [(k, k) for k in ("id", "model", "wording", "seed", "conditions", "paths", "fit_error")],
    )
    sections = [
        Section("Verdicts", "verdicts", summary),
        Section("Forest plots", "forest", forests or [Text("No paths.", muted=True)]),
        Section("Wordings", "wordings", [_wordings_table(record.get("wordings") or [])]),
        Section("Variants", "variants", [variants]),
    ]
    facts = [("study", record.get("study")), ("variants", len(record.get("variants") or [])),
             *src.run_facts()]  # fmt: skip
    subtitle = "One study under every subject model, wording and seed, meta-analyzed per path."
    return Page(f"Replication: {record.get('study')}", subtitle, facts, sections,
                tuple(src.figures.saved))  # fmt: skip


def _wordings_table(wordings: list[dict[str, Any]]) -> Any:
    """The paraphrases side by side: one row per reworded text, one column per wording."""
    from silicolab.report.html.blocks import Text
    from silicolab.report.html.source import rows_table

    paraphrases = [w for w in wordings if w.get("index")]
    fields = list(dict.fromkeys(k for w in paraphrases for k in w.get("texts") or {}))
    if not fields:
        return Text("Only the original wording.", muted=True)
    original = next((w.get("texts") or {} for w in wordings if w.get("index") == 0), {})
    rows = [
        {"field": f, "w0": original.get(f, ""),
         **{f"w{w['index']}": (w.get("texts") or {}).get(f, "") for w in paraphrases}}
        for f in fields
    ]  # fmt: skip
    columns = [("field", "field"), ("w0", "original")]
    columns += [(f"w{w['index']}", f"wording {w['index']}") for w in paraphrases]
    return rows_table(rows, columns)
