"""How the benchmark tables look: the columns of each bench, its report and its console table.

Every bench table keeps all its columns in the run's record; these are the columns a person
reads (short enough for a terminal), with the paper's number beside ours.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from silicolab.report.tables import Column, markdown_table, print_table

#: (column, heading) of the printed discovery comparison.
DISCOVERY_COLUMNS: tuple[Column, ...] = (
    ("method", "method"),
    ("dataset", "dataset"),
    ("model", "model"),
    ("shd", "SHD"),
    ("nhd_truncated", "NHD"),
    ("published_shd", "paper SHD"),
    ("published_nhd", "paper NHD"),
    ("match", "match"),
    ("f1", "F1"),
    ("runtime_s", "seconds"),
    ("tokens", "tokens"),
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
    ("root_f1", "root F1"),
    ("budget_used", "used"),
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


@dataclass(frozen=True)
class BenchView:
    """What a person sees of one bench table: the report's heading and text, the
    console title, the columns and a closing note."""

    heading: str
    title: str
    columns: Sequence[Column]
    intro: str = ""
    note: str = ""

    def markdown(self, table: Any) -> str:
        """The run's ``report.md``."""
        parts = [f"# {self.heading}", self.intro, markdown_table(table, self.columns), self.note]
        return "\n\n".join(p for p in parts if p) + "\n"

    def print(self, table: Any, run_dir: Path | str) -> None:
        """The table on the console (rich on a terminal, Markdown in a pipe)."""
        print_table(table, self.columns, title=self.title, footer=[f"run directory: {run_dir}"])


def discovery_view() -> BenchView:
    return BenchView(
        "Causal discovery benchmark",
        "causal discovery: ours beside the MAC paper (arXiv 2407.15073 v2)",
        DISCOVERY_COLUMNS,
    )


def causalab_view(table: Any, agent: str, with_tokens: bool) -> BenchView:
    compared = ", ".join(sorted({str(m) for m in table.get("published_model", []) if m}))
    columns = CAUSALAB_COLUMNS + ((("tokens", "tokens/ep"),) if with_tokens else ())
    return BenchView(
        "CausaLab benchmark",
        f"CausaLab, {agent} agent, beside the paper ({compared or 'no anchor'})",
        columns,
        note=f"Paper columns: {compared or 'no published numbers for these suites'}.",
    )


def boxinggym_view(agent: str, communicate: bool) -> BenchView:
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
    "BenchView",
    "boxinggym_view",
    "causalab_view",
    "discovery_view",
    "episodes_view",
]
