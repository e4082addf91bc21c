"""The page of a causal-discovery run (``silicolab discover``): predicted and true graphs
side by side in one layout with correct, missing, extra and reversed edges marked, the
scores (SHD, NHD, F1) and, for the MAC meta-debate, every debate question by question."""

from __future__ import annotations

from typing import Any

from silicolab.report.html.blocks import Chat, Facts, Fold, Page, Section, Table, Text
from silicolab.report.html.graphs import compare_edges, comparison_figure
from silicolab.report.html.source import RunSource, health_fold

SCORE_KEYS = ("shd", "nhd", "nhd_truncated", "f1", "precision", "recall", "hamming")


def true_edges(record: dict[str, Any]) -> list[tuple[str, str]] | None:
    """The record's true edges; for a run written before the record kept them, the bundled
    dataset's ground truth (``None`` when no truth is known)."""
    truth = record.get("truth")
    if isinstance(truth, dict):
        return [(str(u), str(v)) for u, v in truth.get("edges") or []]
    if record.get("scores") is None or not record.get("dataset"):
        return None
    from silicolab.core.errors import InputError
    from silicolab.discovery import datasets

    try:
        graph = datasets.load(record["dataset"]).truth
    except InputError:
        return None
    return None if graph is None else [(str(u), str(v)) for u, v in graph.edges]


def build(src: RunSource) -> Page:
    """The discovery page."""
    record = src.record
    result = record.get("result") or {}
    edges = result.get("edges") or {}
    nodes = [str(n) for n in result.get("nodes") or []]
    directed = [tuple(e) for e in edges.get("directed") or []]
    undirected = [tuple(e) for e in edges.get("undirected") or []]
    truth = true_edges(record)
    method = result.get("method", "")
    fallback = record.get("fallback") or {}  # a coding agent that failed every attempt
    drawn = method
    if fallback.get("graph_is_fallback"):
        drawn = f"fallback {fallback['algorithm']} (not {method})"
    blocks: list[Any] = []
    if truth is not None:
        fig = comparison_figure(
            nodes, truth, directed, undirected, predicted_title=drawn, truth_title="truth"
        )
        caption = "Predicted (left, coloured by edge class) and true graph, same layout."
        blocks.append(src.figures.add("graphs", fig, caption))
        blocks.append(_edge_table(compare_edges(truth, directed, undirected)))
    else:
        blocks.append(Text("No ground truth is known for this data: the edges found.", muted=True))
        rows = [{"cause": u, "effect": v, "kind": "directed"} for u, v in directed]
        rows += [{"cause": u, "effect": v, "kind": "undirected"} for u, v in undirected]
        blocks.append(Table([("cause", "cause"), ("effect", "effect"), ("kind", "kind")], rows))
    scores = record.get("scores") or {}
    sections = [
        Section("Graphs", "graphs", blocks),
        Section("Scores", "scores", _scores(scores, result)),
    ]
    if record.get("debates"):
        sections.append(Section("Debates", "debates", debate_blocks(record["debates"])))
    facts = [("dataset", record.get("dataset")), ("method", method)]
    if fallback:
        facts.append(("FALLBACK (every coding attempt failed)", fallback["algorithm"]))
    facts += [(k.upper(), scores[k]) for k in ("shd", "nhd", "f1") if k in scores]
    facts += [("runtime s", result.get("runtime_s")), *src.run_facts()]
    title = f"Causal discovery: {method} on {record.get('dataset')}"
    subtitle = "The recovered graph against the ground truth."
    return Page(title, subtitle, facts, sections, tuple(src.figures.saved))


def _edge_table(classes: dict[str, list[tuple[str, str]]]) -> Table:
    rows = [{"edge": f"{u} -> {v}", "class": k} for k, es in classes.items() for u, v in es]
    return Table([("edge", "edge"), ("class", "class")], rows, caption="Every edge, classified")


def _scores(
    scores: dict[str, Any],
    result: dict[str, Any],
) -> list[Any]:
    blocks: list[Any] = []
    if scores:
        keys = dict.fromkeys((*SCORE_KEYS, *scores))
        blocks.append(Facts([(k, scores[k]) for k in keys if k in scores]))
    params = result.get("params") or {}
    if params:
        rows = [{"parameter": k, "value": v} for k, v in params.items()]
        blocks.append(Table([("parameter", "parameter"), ("value", "value")], rows))
    notes = result.get("notes") or []
    blocks += [Text(str(n), muted=True) for n in notes]
    return blocks + health_fold(result.get("health"))


def debate_blocks(debates: list[dict[str, Any]]) -> list[Any]:
    """One fold per debated source variable: each question with its rounds (what the
    affirmative and negative said, the judge's thought and decision) and the verdict."""
    folds = []
    for i, debate in enumerate(debates):
        source = str(debate.get("source", ""))
        verdicts = debate.get("verdicts") or {}
        inner: list[Any] = []
        for q in debate.get("questions") or []:
            key = f"q{q.get('number')}"
            said: list[tuple[str, str]] = []
            for rnd in debate.get("rounds") or []:
                if q.get("number") not in (rnd.get("open") or []):
                    continue
                said.append((f"round {rnd.get('round')} affirmative", str(rnd.get("affirmative"))))
                said.append((f"round {rnd.get('round')} negative", str(rnd.get("negative"))))
                judge = (rnd.get("judge") or {}).get(key) or {}
                said.append(
                    (
                        f"round {rnd.get('round')} judge",
                        f"{judge.get('decision', '')}: {judge.get('thought', '')}",
                    )
                )
            verdict = verdicts.get(str(q.get("effect")), "")
            summary = f"{q.get('cause')} -> {q.get('effect')}"
            evidence = [Text(f"evidence: {q['evidence']}")] if q.get("evidence") else []
            inner.append(
                Fold(summary=summary, badge=f"verdict: {verdict}", blocks=[*evidence, Chat(said)])
            )
        folds.append(Fold(summary=f"Debate on {source}", blocks=inner, anchor=f"debate-{i}"))
    return folds
