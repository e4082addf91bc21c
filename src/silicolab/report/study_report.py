"""``report.md`` of a study and the summary a researcher wants to see first.

Rendered from the study's record (``record.json``) and the run's accounting in
``run.json`` (the language-model ledger), so a report can be rebuilt for any finished run
without rerunning anything. A model that was not estimable (the main fit:
``fit_error`` with ``fit_problems``; an interaction or alternative model: the estimation's
``skipped`` list) is shown as "not estimable" with each reason, never with an estimate, SE
or p-value; a nested test that was not run shows why.
"""

from __future__ import annotations

from collections.abc import Mapping
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


def _fixed(value: Any, spec: str) -> str:
    """``value`` formatted with ``spec``, or ``NA`` for a missing (null) number."""
    return format(value, spec) if isinstance(value, int | float) else "NA"


def problem_lines(problems: list[dict[str, Any]]) -> list[str]:
    """One line per estimability problem: ``equation (kind): detail``."""
    return [f"{p.get('equation')} ({p.get('kind')}): {p.get('detail')}" for p in problems]


def nested_test_line(test: dict[str, Any]) -> str:
    """A nested test as one line: its LR and Wald statistics, or why it was not run."""
    if "lr" not in test:
        return f"test {test['name']}: not run: {test.get('skipped') or 'no statistic'}"
    lr, wald = test["lr"], test["wald"]
    return (
        f"test {test['name']}: LR {_fixed(lr['stat'], '.3g')} (df {lr['df']}, "
        f"p {_fixed(lr['p'], '.3g')}), Wald p {_fixed(wald['p'], '.3g')}"
    )


def _fit_section(holder: dict[str, Any], which: str = "main") -> list[str]:
    """The path table of ``holder``'s estimation, or why there is none."""
    rows = path_rows(holder.get("estimation"), which)
    if rows:
        return [markdown_table(rows, PATH_COLUMNS)]
    if holder.get("fit_problems"):
        out = ["**Not estimable**: no estimate, SE or p-value is reported, because", ""]
        return out + [f"- {line}" for line in problem_lines(holder["fit_problems"])]
    if holder.get("fit_error"):
        return [f"_no fit: {holder['fit_error']}_"]
    return ["_no fit_"]


def prediction_line(record: dict[str, Any], label: str = "") -> str | None:
    """``prediction MSE: llm 1.2, loo_mechanical 3.4, ...`` (with ``label`` in parentheses
    after ``MSE``): how close the study's predictions came, or ``None`` without any."""
    mse = (record.get("predictions") or {}).get("mse")
    if not mse:
        return None
    shown = ", ".join(f"{k} {v:.4g}" for k, v in mse.items() if v is not None)
    return f"prediction MSE{f' ({label})' if label else ''}: {shown}"


def summary_lines(record: dict[str, Any], info: Mapping[str, Any] | None = None) -> list[str]:
    """The first lines a researcher reads: design, runs, R², NA, health, and the cost
    from ``info`` (the run's ``run.json``, see :func:`run_ledger`)."""
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
        r2 = ", ".join(f"{k} {_fixed(v, '.3f')}" for k, v in main["r2"].items())
        lines.append(f"fit: n = {main['n']} ({main['n_dropped']} dropped for NA), R² {r2}")
    elif record.get("fit_problems"):
        lines.append("fit: not estimable (no estimate, SE or p-value is reported):")
        lines += [f"  {reason}" for reason in problem_lines(record["fit_problems"])]
    elif record.get("fit_error"):
        lines.append(f"fit: not possible: {record['fit_error']}")
    for test in est.get("tests", []):
        lines.append(nested_test_line(test))
    for skipped in est.get("skipped") or []:
        reasons = "; ".join(problem_lines(skipped.get("problems") or []))
        lines.append(f"model {skipped['model']}: not estimable: {reasons}")
    for role, ledger in run_ledger(record, info).items():
        lines.append(
            f"LLM {role}: {ledger['calls']} calls ({ledger['cache_hits']} cached), "
            f"{ledger['input_tokens']:,} in / {ledger['output_tokens']:,} out tokens, "
            f"${ledger['cost']:.4f}"
        )
    for name, stage in (record.get("stages") or {}).items():
        if stage.get("status") in ("failed", "skipped", "pending"):
            lines.append(f"stage {name}: {stage['status']}: {stage.get('reason', 'not reached')}")
    health = record.get("health") or {}
    if health.get("degraded"):
        why = "; ".join(health.get("problems") or [])
        lines.append(f"DEGRADED: {why or 'worst condition ' + str(health.get('worst_unit'))}")
    return lines


def run_ledger(record: Mapping[str, Any], info: Mapping[str, Any] | None) -> dict[str, Any]:
    """Each role's language-model ledger of a study run: ``run.json``'s ``llm_ledger``
    (every process of the run), or the record's, where records before schema 2 kept it."""
    return dict((info or {}).get("llm_ledger") or record.get("llm_ledger") or {})


def study_report(record: dict[str, Any], info: Mapping[str, Any] | None = None) -> str:
    """The whole ``report.md`` of a study record (``info``: the run's ``run.json``)."""
    out = [f"# Study: {record['study']}", "", f"> {record['scenario']}", ""]
    out += [f"- {line}" for line in summary_lines(record, info)]
    out += ["", "## Fitted SCM", ""]
    out += _fit_section(record)
    for title, key in (("With interactions", "interactions"),):
        extra = path_rows(record.get("estimation"), key)
        if extra:
            out += ["", f"## {title}", "", markdown_table(extra, PATH_COLUMNS)]
    skipped = (record.get("estimation") or {}).get("skipped") or []
    if skipped:
        out += ["", "## Models not estimable", ""]
        for model in skipped:
            out.append(f"- `{model['model']}`:")
            out += [f"  - {line}" for line in problem_lines(model.get("problems") or [])]
    predictions = record.get("predictions")
    if predictions:
        out += ["", "## Predictions", ""]
        out.append(
            f"- scientist model {predictions.get('model')}, temperature "
            f"{predictions.get('temperature')}, {predictions.get('rows')} rows"
            + (f" ({predictions.get('dropped_capped')} capped runs dropped)"
               if predictions.get("drop_capped") else "")
        )  # fmt: skip
        out += [f"- MSE {k}: {v}" for k, v in predictions.get("mse", {}).items()]
        out += [f"- {k} skipped: {v}" for k, v in (predictions.get("skipped") or {}).items()]
        if predictions.get("note"):
            out.append(f"- note: {predictions['note']}")
    follow = record.get("follow_on")
    if follow:
        out += ["", "## Follow-on experiment", ""]
        out += _fit_section(follow)
    out += ["", "## Decisions", ""]
    out += [f"- **{d['step']}**: {d['value']} — {d['explanation']}" for d in record["decisions"]]
    out += [
        "",
        "Files: `record.json` (the results), `data.csv` (one row per run), `run.json` "
        "(status, time, model calls).",
    ]
    return "\n".join(out) + "\n"


__all__ = [
    "PATH_COLUMNS",
    "nested_test_line",
    "path_rows",
    "prediction_line",
    "problem_lines",
    "run_ledger",
    "study_report",
    "summary_lines",
]
