"""Where BoxingGym's numbers stop meaning what the paper's meant, said beside them.

A bench row (:func:`silicolab.bench.boxinggym.pair_row`) counts the answers its scores rest
on (:func:`answer_health`), and the paper's numbers printed beside it are withheld where
fixed fidelity measures something else (:func:`not_comparable`, with the reason in the
row's ``paper_not_comparable``); :data:`GOAL_NOTES` flags goals whose score cannot tell
answers apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from silicolab.bench.anchors import ROW_KEY


def answer_health(records: Sequence[dict[str, Any]]) -> dict[str, int]:
    """How far the row's scores rest on the answers asked: ``unparsed_answers`` (over every
    evaluation of every episode), ``degraded_checkpoints`` (too few answers parsed: not
    scored, so not in the means) and ``partial_episodes`` (stopped by a model error; their
    finished checkpoints are in the means, their missing ones are not)."""
    evaluations = [
        e for r in records for e in [*r["scores"], *([r["novice"]] if r.get("novice") else [])]
    ]
    return {
        "unparsed_answers": sum(
            int(e.get("n_unparsed", e.get("n_missing", 0))) for e in evaluations
        ),
        "degraded_checkpoints": sum(bool(e.get("degraded")) for e in evaluations),
        "partial_episodes": sum(bool(r.get("model_error")) for r in records),
    }


#: Goals whose score cannot tell answers apart, with why (inherited from the paper; printed
#: as the row's ``note`` so no one reads a difference into it).
GOAL_NOTES: dict[tuple[str, str], str] = {
    ("hyperbolic_temporal_discount", "discount"): (
        "cannot discriminate answers: k is about 0.014 under the prior, so every plausible "
        "answer's squared error is tiny beside the norm (mu 0.25, sigma 4.3): the true k "
        "scores -0.058, and 0, 0.1 and ten times k score -0.058 to -0.031 (seeds 1-5)"
    ),
}
#: Goals whose standardized score fixed fidelity puts on another scale than the paper's,
#: with the reason: their fixed-mode rows are not printed beside the paper's scores.
FIXED_SCORES_NOT_COMPARABLE: dict[tuple[str, str], str] = {
    ("survival", "direct"): (
        "fixed mode's death probability is 1 - exp(-hazard), not the paper's logistic "
        "(52% of patients dead instead of 75%, seeds 1-200), while the norm constants are "
        "the paper's"
    ),
    ("death_process", "direct"): (
        "fixed mode's question names the time asked about; the paper's question did not"
    ),
    ("emotion", "direct"): (
        "fixed mode scores the ratings for the prize the question names; the paper's "
        "questions named that prize but scored the ratings for winning its index ($0, $1 or "
        "$2), so other ratings (mean happiness 1.9 there, 5.8 here; sadness 5.3 and 2.5; "
        "seeds 1-200), while the norm constants are the paper's"
    ),
}
#: Why no fixed-mode regret is printed beside the paper's (faithful mode reproduces it).
FIXED_REGRET_NOT_COMPARABLE = (
    "fixed mode's EIG is the bounded NMC estimator on the recorded outcomes, not the "
    "published estimator with its per-environment changes (death process at t = 0.1: 0.507 "
    "here, exact 0.498, 0.0375 in the paper's code); compare regrets in faithful mode"
)


def not_comparable(env: str, goal: str, fidelity: str) -> dict[str, str]:
    """``{metric: why}`` for the paper's numbers that do not measure what this row
    measures under ``fidelity`` (metrics: before, after, after_comm, regret)."""
    if fidelity != "fixed":
        return {}
    score = FIXED_SCORES_NOT_COMPARABLE.get((env, goal))
    why = {} if score is None else {"before": score, "after": score, "after_comm": score}
    return {**why, "regret": FIXED_REGRET_NOT_COMPARABLE}


def grouped_reasons(withheld: Mapping[str, str]) -> dict[str, str]:
    """``withheld`` with the metrics that share a reason joined (``before/after/...``)."""
    by_reason: dict[str, list[str]] = {}
    for metric, why in withheld.items():
        by_reason.setdefault(why, []).append(metric)
    return {"/".join(metrics): why for why, metrics in by_reason.items()}


def table_notes(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per row note and per withheld paper number (a reason shared by several
    rows, such as the fixed-mode regret, is said once), for the printed table."""
    lines: list[str] = []
    for row in rows:
        where = f"{row.get('env')}/{row.get('goal')}"
        if row.get("note"):
            lines.append(f"{where}: {row['note']}")
        withheld = not_comparable(str(row.get("env")), str(row.get("goal")), row["fidelity"])
        for metrics, why in grouped_reasons(withheld).items():
            line = f"paper {metrics} not shown ({where}): {why}"
            if metrics == "regret":
                line = f"paper regret not shown: {why}"
            if line not in lines:
                lines.append(line)
    shifted = [
        f"{r.get('env')}/{r.get('goal')}"
        for r in rows
        if any(p.get("kind") == "derived" for p in (r.get(ROW_KEY) or {}).values())
    ]
    if shifted:
        lines.append(
            f"paper columns marked ‡ ({', '.join(shifted)}): the paper's 1 − z(accuracy) "
            "minus 1, which is fixed mode's −z(accuracy)"
        )
    unparsed = sum(int(row.get("unparsed_answers") or 0) for row in rows)
    degraded = sum(int(row.get("degraded_checkpoints") or 0) for row in rows)
    partial = sum(int(row.get("partial_episodes") or 0) for row in rows)
    if unparsed or partial:
        lines.append(
            f"{unparsed} unparseable answers, {degraded} checkpoints degraded (fewer than half "
            f"the answers parsed: not scored), {partial} episodes stopped by a model error"
        )
    return lines
