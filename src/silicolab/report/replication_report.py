"""``report.md`` of a replication run: the verdict of every path with its rule, the pooled
estimates and heterogeneity, the variance decomposition, the variants, and the wordings
side by side."""

from __future__ import annotations

from typing import Any

from silicolab.report.tables import markdown_table

_PATH_COLUMNS = [
    ("path", "path"), ("verdict", "verdict"), ("k", "variants"),
    ("random", "random effects [95% CI]"), ("fixed", "fixed effect [95% CI]"), ("i2", "I²"),
    ("tau2", "tau²"), ("q_p", "Q p"), ("same_sign_share", "same sign"),
    ("significant_share", "p < 0.05"),
]  # fmt: skip


def summary_row(path: dict[str, Any]) -> dict[str, Any]:
    """One path's line for tables and ``--json``: estimates rounded for reading."""
    random, fixed = path.get("random") or {}, path.get("fixed") or {}

    def est(p: dict[str, Any]) -> str:
        if p.get("estimate") is None:
            return "-"
        return f"{p['estimate']:.3g} [{p['ci_low']:.3g}, {p['ci_high']:.3g}]"

    return {
        "path": path["path"],
        "k": path.get("k"),
        "fixed": est(fixed),
        "random": est(random),
        "tau2": path.get("tau2"),
        "i2": path.get("i2"),
        "q": path.get("q"),
        "q_p": path.get("q_p"),
        "prediction": path.get("prediction"),
        "same_sign_share": path.get("same_sign_share"),
        "significant_share": path.get("significant_share"),
        "decomposition": (path.get("decomposition") or {}).get("shares"),
        "verdict": path["verdict"]["name"],
        "rule": path["verdict"]["rule_text"],
    }


def _rows(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [summary_row(p) for p in record.get("paths") or []]


def replication_report(record: dict[str, Any]) -> str:
    """The Markdown report of a replication ``record``."""
    rows = _rows(record)
    lines = [f"# Replication: {record.get('study')}", ""]
    lines += [
        f"{len(record.get('variants') or [])} variants: subject models "
        f"{', '.join(record.get('models') or [])} x {len(record.get('wordings') or [])} "
        f"wording(s) x seeds {record.get('seeds')}.",
        "",
    ]
    if rows:
        lines += ["## Paths", "", markdown_table(rows, _PATH_COLUMNS), ""]
        lines += ["## Verdicts and their rules", ""]
        lines += [f"- **{r['path']}**: {r['verdict']} — {r['rule']}" for r in rows]
        lines += ["", "## Where the spread comes from", ""]
        shares = [{"path": r["path"], **(r["decomposition"] or {})} for r in rows]
        columns = [("path", "path"), ("model", "model"), ("wording", "wording"),
                   ("seed", "seed"), ("residual", "residual")]  # fmt: skip
        lines += [markdown_table(shares, columns), ""]
    else:
        lines += ["No variant gave a fitted path; see the variants below.", ""]
    lines += ["## Variants", ""]
    variant_columns = [("id", "id"), ("model", "model"), ("wording", "wording"),
                       ("seed", "seed"), ("conditions", "conditions"), ("paths", "paths"),
                       ("fit_error", "fit problem")]  # fmt: skip
    lines += [markdown_table(record.get("variants") or [], variant_columns), ""]
    lines += _wording_lines(record.get("wordings") or [])
    lines += ["Files: `record.json` (everything as data), `figures/` (forest plots).", ""]
    return "\n".join(lines)


def _wording_lines(wordings: list[dict[str, Any]]) -> list[str]:
    """The paraphrases side by side: one row per changed text, one column per wording."""
    paraphrases = [w for w in wordings if w.get("index")]
    fields = list(dict.fromkeys(k for w in paraphrases for k in w.get("texts") or {}))
    if not fields:
        return ["## Wordings", "", "Only the original wording.", ""]
    original = next((w for w in wordings if w.get("index") == 0), {})
    rows = []
    for f in fields:
        row = {"field": f, "w0": (original.get("texts") or {}).get(f, "")}
        for w in wordings:
            if w.get("index"):
                row[f"w{w['index']}"] = (w.get("texts") or {}).get(f, "")
        rows.append(row)
    columns = [("field", "field"), ("w0", "original")]
    columns += [(f"w{w['index']}", f"wording {w['index']}") for w in wordings if w.get("index")]
    return ["## Wordings", "", markdown_table(rows, columns), ""]


__all__ = ["replication_report", "summary_row"]
