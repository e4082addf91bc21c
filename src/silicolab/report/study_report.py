"""``report.md`` of a study and the summary a researcher wants to see first.

Rendered from the study's record alone (``record.json``), so a report can be rebuilt for
any finished run without rerunning anything.
"""

from __future__ import annotations

from typing import Any

from silicolab.report.tables import markdown_table

PATH_COLUMNS = (
    ("rhs", "cause"),
    ("est", "estimate"),
    ("se", "SE"),
    ("p", "p"),
    ("ci_low", "CI low"),
    ("ci_high", "CI high"),
    ("std_all", "β*"),
)


def path_rows(estimation: dict[str, Any] | None, which: str = "main") -> list[dict[str, Any]]:
    """The path rows (``op == "~"``) of a study's fit, rounded for display."""
    if not estimation or not estimation.get(which):
        return []
    return [
        {k: _round(v) for k, v in row.items()}
        for row in estimation[which]["params"]
        if row["op"] == "~"
    ]


def _round(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.4g}")
    return value


def summary_lines(record: dict[str, Any]) -> list[str]:
    """The first lines a researcher reads: design, runs, R², NA, health, cost."""
    data = record["data"]
    design = record["design"]
    est = record.get("estimation") or {}
    main = est.get("main") or {}
    lines = [
        f"study {record['study']}: {len(record['runs'])} of {design['full_size']} conditions "
        f"({design['kind']}), protocol {design['protocol']}, models {record['models']}",
        f"runs: {data['errors']} failed, {data['capped']} hit the statement cap; NA per "
        f"variable {data['na_counts']}",
    ]
    if main:
        r2 = ", ".join(f"{k} {v:.3f}" for k, v in main["r2"].items())
        lines.append(f"fit: n = {main['n']} ({main['n_dropped']} dropped for NA), R² {r2}")
    elif record.get("fit_error"):
        lines.append(f"fit: not possible: {record['fit_error']}")
    for test in est.get("tests", []):
        lines.append(
            f"test {test['name']}: LR {test['lr']['stat']:.3g} (df {test['lr']['df']}, "
            f"p {test['lr']['p']:.3g}), Wald p {test['wald']['p']:.3g}"
        )
    for role, ledger in (record.get("llm_ledger") or {}).items():
        lines.append(
            f"LLM {role}: {ledger['calls']} calls ({ledger['cache_hits']} cached), "
            f"{ledger['input_tokens']:,} in / {ledger['output_tokens']:,} out tokens, "
            f"${ledger['cost']:.4f}"
        )
    health = record.get("health") or {}
    if health.get("degraded"):
        lines.append(f"DEGRADED: worst condition {health.get('worst_unit')}")
    return lines


def study_report(record: dict[str, Any]) -> str:
    """The whole ``report.md`` of a study record."""
    out = [f"# Study: {record['study']}", "", f"> {record['scenario']}", ""]
    out += [f"- {line}" for line in summary_lines(record)]
    out += ["", "## Fitted SCM", ""]
    rows = path_rows(record.get("estimation"))
    out.append(markdown_table(rows, PATH_COLUMNS) if rows else "_no fit_")
    for title, key in (("With interactions", "interactions"),):
        extra = path_rows(record.get("estimation"), key)
        if extra:
            out += ["", f"## {title}", "", markdown_table(extra, PATH_COLUMNS)]
    predictions = record.get("predictions")
    if predictions:
        out += ["", "## Predictions", ""]
        out += [f"- {k}: {v}" for k, v in predictions.get("mse", {}).items()]
    follow = record.get("follow_on")
    if follow:
        out += ["", "## Follow-on experiment", ""]
        rows = path_rows(follow.get("estimation"))
        out.append(markdown_table(rows, PATH_COLUMNS) if rows else "_no fit_")
    out += ["", "## Decisions", ""]
    out += [f"- **{d['step']}**: {d['value']} — {d['explanation']}" for d in record["decisions"]]
    out += ["", "Files: `record.json` (everything), `data.csv` (one row per condition)."]
    return "\n".join(out) + "\n"


__all__ = ["PATH_COLUMNS", "path_rows", "study_report", "summary_lines"]
