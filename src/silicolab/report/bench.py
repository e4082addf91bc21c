"""How the benchmark tables look: the columns of each bench, its report and its console table.

Every bench table keeps all its columns in the run's record; these are the columns a person
reads (short enough for a terminal), with the paper's number beside ours.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from silicolab.report.tables import Column, markdown_table, print_lines, print_table

#: (column, heading) of the printed discovery comparison.
DISCOVERY_COLUMNS: tuple[Column, ...] = (
    ("method", "method"),
    ("dataset", "dataset"),
    ("model", "model"),
    # Shown only when a MAC method with debaters ran: "faithful" (the paper's) or "fixed".
    ("fidelity", "debaters"),
    ("shd", "SHD"),
    ("nhd_truncated", "NHD"),
    ("published_shd", "paper SHD"),
    ("published_nhd", "paper NHD"),
    ("match", "match"),
    ("f1", "F1"),
    # Shown only when some coding agent failed and a statistical algorithm ran instead:
    # its scores stand apart from the method's, which stay empty.
    ("fallback", "fallback"),
    ("fallback_shd", "fallback SHD"),
    ("fallback_nhd_truncated", "fallback NHD"),
    ("runtime_s", "seconds"),
    ("tokens", "tokens"),
    ("published_row", "paper row"),
)
#: (column, heading) of the printed CausaLab comparison.
CAUSALAB_COLUMNS: tuple[Column, ...] = (
    ("suite", "suite"),
    ("episodes", "n"),
    ("accuracy", "acc %"),
    ("published_accuracy", "paper"),
    ("all_edge_f1", "edge F1"),
    ("published_all_edge_f1", "paper"),
    ("shd", "SHD"),
    ("published_shd", "paper"),
    ("weight_f1", "weight F1"),
    ("weight_terms_f1", "terms F1"),
    ("root_f1", "root F1"),
    ("budget_used", "used"),
    # ours, not a paper metric (no paper column beside it): see FORMULA_NOTE
    ("formula_hit", "formula ≤5 Hz % (ours)"),
)
#: (column, heading) of the printed BoxingGym comparison.
BOXINGGYM_COLUMNS: tuple[Column, ...] = (
    ("env", "environment"),
    ("goal", "goal"),
    ("seeds", "seeds"),
    ("before", "before"),
    ("paper_before", "paper"),
    ("after", "after 10"),
    ("paper_after", "paper"),
    ("regret", "EI regret"),
    ("paper_regret", "paper"),
)
#: (column, heading) of a bench over any environment family.
EPISODE_COLUMNS: tuple[Column, ...] = (
    ("env", "environment"),
    ("agent", "scientist"),
    ("episodes", "episodes"),
    ("errors", "errors"),
)


#: (column, heading) of the printed anchors of a CausaLab scaling regime (``--regime``).
REGIME_COLUMNS: tuple[Column, ...] = (
    ("suite", "suite"),
    ("model", "model"),
    ("metric", "metric"),
    ("published", "paper"),
    ("where", "where"),
)


def shown_rows(table: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows a person reads, with each published value marked by its provenance (ranges
    as ranges, see :mod:`silicolab.bench.anchors`), and the legend of the marks used."""
    from silicolab.bench.anchors import mark_rows

    records = table.to_dict("records") if hasattr(table, "to_dict") else list(table)
    return mark_rows(records)


def regime_rows(regime: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """The marked anchors of a scaling regime (``--regime``), each with ``where`` it comes
    from, and the legend of the marks used."""
    from silicolab.bench.anchors import ROW_KEY

    rows, legend = shown_rows(regime.get("anchors") or [])
    for row in rows:
        row["where"] = str((row.get(ROW_KEY) or {}).get("published", {}).get("where", ""))
    return rows, legend


def legend_text(lines: Sequence[str]) -> str:
    """The legend under a table: one line per mark used (empty when none is)."""
    return "\n".join(f"Paper columns: {line}." for line in lines)


@dataclass(frozen=True)
class BenchView:
    """What a person sees of one bench table: the report's heading and text, the
    console title, the columns, a closing note and, for ``bench causalab --regime``, the
    anchors of the paper's scaling regime (``regime``: see
    :func:`silicolab.bench.causalab.regime_summary`). Published values are printed with
    their provenance marks and a legend under the table."""

    heading: str
    title: str
    columns: Sequence[Column]
    intro: str = ""
    note: str = ""
    regime: Mapping[str, Any] | None = None
    #: lines under the table in the report and on the console (what a reader must know
    #: about some rows: a number withheld, a goal that cannot tell answers apart).
    footnotes: Sequence[str] = ()

    def markdown(self, table: Any) -> str:
        """The run's ``report.md``."""
        rows, legend = shown_rows(table)
        notes = "\n".join(f"- {line}" for line in self.footnotes)
        parts = [f"# {self.heading}", self.intro, markdown_table(rows, self.columns), notes]
        parts += [legend_text(legend), self.note, *self._regime_markdown()]
        return "\n\n".join(p for p in parts if p) + "\n"

    def print(self, table: Any, run_dir: Path | str) -> None:
        """The table on the console (rich on a terminal, Markdown in a pipe), its legend,
        and the regime's anchors when asked for."""
        rows, legend = shown_rows(table)
        footer = [*self.footnotes, *legend_text(legend).splitlines()]
        if self.note:
            footer.append(self.note)
        if self.regime is None:
            print_table(
                rows, self.columns, title=self.title, footer=[*footer, f"run directory: {run_dir}"]
            )
            return
        print_table(rows, self.columns, title=self.title, footer=footer)
        anchors, lines = self._regime_rows()
        print_table(anchors, REGIME_COLUMNS, title=self._regime_title(), footer=lines)
        print_lines([f"run directory: {run_dir}"])

    def _regime_title(self) -> str:
        regime = self.regime or {}
        return f"the paper's {regime.get('regime')} regime: {regime.get('description')}"

    def _regime_rows(self) -> tuple[list[dict[str, Any]], list[str]]:
        regime = self.regime or {}
        rows, legend = regime_rows(regime)
        if not rows:
            rows = [{"suite": "(none)", "metric": "the paper gives no numbers for this regime"}]
        return rows, [*legend_text(legend).splitlines(), f"{regime.get('match', '')}."]

    def _regime_markdown(self) -> list[str]:
        if self.regime is None:
            return []
        rows, lines = self._regime_rows()
        return [
            f"## {self._regime_title()}",
            markdown_table(rows, REGIME_COLUMNS),
            "\n".join(lines),
        ]


def discovery_view() -> BenchView:
    return BenchView(
        "Causal discovery benchmark",
        "causal discovery: ours beside the MAC paper (arXiv 2407.15073 v2)",
        DISCOVERY_COLUMNS,
    )


def causalab_view(
    table: Any, agent: str, with_tokens: bool, regime: Mapping[str, Any] | None = None
) -> BenchView:
    """The CausaLab table; ``regime`` adds the anchors of one of the paper's scaling
    regimes (:func:`silicolab.bench.causalab.regime_summary`)."""
    from silicolab.bench.causalab import FORMULA_NOTE

    compared = ", ".join(sorted({str(m) for m in table.get("published_model", []) if m}))
    columns = CAUSALAB_COLUMNS + ((("tokens", "tokens/ep"),) if with_tokens else ())
    return BenchView(
        "CausaLab benchmark",
        f"CausaLab, {agent} agent, beside the paper ({compared or 'no anchor'})",
        columns,
        note=f"Paper columns: {compared or 'no published numbers for these suites'}.",
        regime=regime,
        footnotes=(f"{FORMULA_NOTE}.",),
    )


def boxinggym_view(agent: str, communicate: bool, table: Any = None) -> BenchView:
    """The BoxingGym table's view; with ``table``, its rows' notes and the reasons for
    the paper numbers withheld become footnotes."""
    from silicolab.bench.boxinggym_scales import table_notes

    rows = [] if table is None else table.to_dict("records")
    comm = (("after_comm", "after comm."), ("paper_after_comm", "paper")) if communicate else ()
    columns, anchor = BOXINGGYM_COLUMNS + comm, "GPT-4o, Table 1/3"
    if agent in ("apprentice", "statistician"):  # beside Box's Apprentice (Table 2)
        columns = tuple((c.replace("paper_", "box_", 1), h) for c, h in columns)
        anchor = "Box's Apprentice, Table 2/3"
    return BenchView(
        "BoxingGym benchmark",
        f"BoxingGym, {agent} agent: standardized error and EI regret beside the paper ({anchor})",
        columns,
        intro="Standardized error (lower is better; negative beats the prior-mean predictor) "
        "and EI regret.",
        footnotes=table_notes(rows),
    )


def episodes_view(table: Any) -> BenchView:
    scores = [c for c in getattr(table, "columns", []) if str(c).startswith("score_")]
    columns = EPISODE_COLUMNS + tuple((c, c.removeprefix("score_")) for c in scores)
    return BenchView("Episode benchmark", "episodes: mean scores per environment", columns)


__all__ = [
    "BOXINGGYM_COLUMNS",
    "CAUSALAB_COLUMNS",
    "DISCOVERY_COLUMNS",
    "EPISODE_COLUMNS",
    "REGIME_COLUMNS",
    "BenchView",
    "boxinggym_view",
    "causalab_view",
    "discovery_view",
    "episodes_view",
    "legend_text",
    "regime_rows",
    "shown_rows",
]
