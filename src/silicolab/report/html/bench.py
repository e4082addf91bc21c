"""The page of a discovery or episode bench (``silicolab bench discovery|episodes``): the
results table beside the published anchors, with a bar chart of the headline score."""

from __future__ import annotations

from typing import Any

from silicolab.report.bench import DISCOVERY_COLUMNS, EPISODE_COLUMNS, legend_text, shown_rows
from silicolab.report.html.blocks import Facts, Page, Section, Text
from silicolab.report.html.figures import bars
from silicolab.report.html.source import RunSource, health_fold, rows_table


def build(src: RunSource) -> Page:
    """The bench page (discovery or episodes)."""
    record = src.record
    rows = record.get("rows") or []
    discovery = src.kind == "bench-discovery"
    if discovery:
        columns: Any = DISCOVERY_COLUMNS
        highlight: tuple[str, ...] = ("published_shd", "published_nhd")
    else:
        scores = sorted({k for r in rows for k in r if str(k).startswith("score_")})
        columns = (*EPISODE_COLUMNS, *((s, s.removeprefix("score_")) for s in scores))
        highlight = ()
    shown, legend = shown_rows(rows)
    blocks: list[Any] = [rows_table(shown, columns, highlight=highlight)]
    blocks += [Text(line, muted=True) for line in legend_text(legend).splitlines()]
    figure = _figure(src, rows, discovery)
    if figure is not None:
        blocks.append(figure)
    settings = record.get("settings") or {}
    sections = [
        Section("Results", "results", blocks),
        Section(
            "Settings",
            "settings",
            [Facts(list(settings.items())), *health_fold(record.get("health"))],
        ),
    ]
    title = "Causal discovery benchmark" if discovery else "Episode benchmark"
    subtitle = "Ours beside the published numbers (highlighted)." if discovery else ""
    facts = [("rows", len(rows)), *src.run_facts()]
    return Page(title, subtitle, facts, sections, tuple(src.figures.saved))


def _figure(src: RunSource, rows: list[dict[str, Any]], discovery: bool) -> Any:
    if not rows:
        return Text("No rows.", muted=True)
    if discovery:
        groups = [f"{r.get('method')}\n{r.get('dataset')}" for r in rows]
        values = {
            "ours": [r.get("shd") for r in rows],
            "paper": [r.get("published_shd") for r in rows],
        }
        fig = bars(groups, values, ylabel="SHD (lower is better)")
        return src.figures.add("shd", fig, "SHD per method and dataset, ours beside the paper.")
    scores = sorted({k for r in rows for k in r if str(k).startswith("score_")})
    if not scores:
        return None
    groups = [str(r.get("env")) for r in rows]
    values = {s.removeprefix("score_"): [r.get(s) for r in rows] for s in scores}
    fig = bars(groups, values, ylabel="mean score")
    return src.figures.add("scores", fig, "Mean headline scores per environment.")
