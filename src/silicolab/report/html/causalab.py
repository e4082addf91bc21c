"""The page of a CausaLab bench run (``silicolab bench causalab``): the results beside the
published anchors, the hypothesis metrics over steps, and a trajectory viewer: for each
episode, step by step, the action, the measurement, the DSL record and the scientist's
hypothesis graph beside the true graph with the edge differences coloured."""

from __future__ import annotations

from typing import Any

from silicolab.report.bench import (
    CAUSALAB_COLUMNS,
    REGIME_COLUMNS,
    legend_text,
    regime_rows,
    shown_rows,
)
from silicolab.report.html.blocks import (
    Code,
    Columns,
    Facts,
    Fold,
    Page,
    Searchable,
    Section,
    Text,
)
from silicolab.report.html.figures import bars, line_chart
from silicolab.report.html.graphs import compare_edges, comparison_figure, edge_scores
from silicolab.report.html.source import RunSource, health_fold, rows_table

#: Episodes whose every step gets a graph figure (the others show the DSL record only):
#: a 50-episode suite would otherwise draw hundreds of figures.
GRAPH_EPISODES = 12
ANCHORS = tuple(k for k, _ in CAUSALAB_COLUMNS if k.startswith("published_"))


def true_graph(suite: str, index: int) -> tuple[list[str], list[tuple[str, str]]] | None:
    """The nodes and edges of the bundled suite's graph ``index`` (``None`` if unknown)."""
    from silicolab.core.errors import InputError
    from silicolab.envs.causalab.suite import load_suite

    try:
        config = load_suite(suite)[index]
    except (InputError, IndexError, TypeError):
        return None
    return list(config.nodes), [(str(u), str(v)) for u, v in config.edges]


def hypothesis_edges(hypothesis: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The directed edges of a DSL hypothesis (``[{"from", "to"}]``)."""
    edges = (hypothesis or {}).get("edges") or []
    return [(str(e.get("from")), str(e.get("to"))) for e in edges if isinstance(e, dict)]


def build(src: RunSource) -> Page:
    """The CausaLab page."""
    record = src.record
    rows = record.get("rows") or []
    episodes = [e["record"] for e in src.ok_events() if isinstance(e.get("record"), dict)]
    shown, legend = shown_rows(rows)
    results: list[Any] = [rows_table(shown, CAUSALAB_COLUMNS, highlight=ANCHORS)]
    results += [Text(line, muted=True) for line in legend_text(legend).splitlines()]
    if rows:
        groups = [str(r.get("suite")) for r in rows]
        values = {
            "ours": [r.get("accuracy") for r in rows],
            "paper": [midpoint(r.get("published_accuracy")) for r in rows],
        }
        fig = bars(groups, values, ylabel="accuracy %")
        results.append(src.figures.add("accuracy", fig, "Accuracy per suite beside the paper."))
    results += _regime(record.get("regime"))
    sections = [
        Section("Results", "results", results + health_fold(record.get("health"))),
        Section("Metrics over steps", "metrics", _metrics(src, episodes)),
        Section("Trajectories", "trajectories", _trajectories(src, episodes)),
    ]
    settings = record.get("settings") or {}
    facts = [(k, settings.get(k)) for k in ("suite", "agent", "model", "episodes", "fidelity")]
    facts += src.run_facts()
    subtitle = "A scientist's experiments on a hidden causal graph, step by step."
    return Page("CausaLab benchmark", subtitle, facts, sections, tuple(src.figures.saved))


def midpoint(value: Any) -> Any:
    """A published value for a figure: the number, or the middle of a ``[low, high]`` range
    (the table beside it prints the range)."""
    if isinstance(value, list | tuple) and len(value) == 2:
        return (value[0] + value[1]) / 2
    return value


def _regime(regime: dict[str, Any] | None) -> list[Any]:
    """The anchors of the scaling regime asked for with ``--regime``, marked, and whether
    the run matches it."""
    if not regime:
        return []
    shown, legend = regime_rows(regime)
    title = f"The paper's {regime.get('regime')} regime: {regime.get('description')}"
    blocks: list[Any] = [Text(title)]
    if shown:
        blocks.append(rows_table(shown, REGIME_COLUMNS, highlight=("published",)))
    else:
        blocks.append(Text("The paper gives no numbers for this regime.", muted=True))
    blocks += [Text(line, muted=True) for line in legend_text(legend).splitlines()]
    return [*blocks, Text(f"{regime.get('match', '')}.")]


def step_scores(episode: dict[str, Any]) -> list[dict[str, float]] | None:
    """SHD and edge F1 of the hypothesis after each step (``None`` without a truth)."""
    truth = true_graph(str(episode.get("suite")), int(episode.get("index", -1)))
    if truth is None:
        return None
    return [
        edge_scores(compare_edges(truth[1], hypothesis_edges(step.get("hypothesis"))))
        for step in episode.get("steps") or []
    ]


def _metrics(src: RunSource, episodes: list[dict[str, Any]]) -> list[Any]:
    scored = [(e, step_scores(e)) for e in episodes]
    curves = [(e, s) for e, s in scored if s]
    if not curves:
        return [Text("No episode with a known true graph.", muted=True)]
    blocks: list[Any] = []
    for metric, label in (("shd", "SHD"), ("f1", "edge F1")):
        series = [
            (f"{e.get('graph_id')} s{e.get('seed')}", list(range(len(s))), [x[metric] for x in s])
            for e, s in curves[:8]
        ]
        fig = line_chart(series, xlabel="step", ylabel=label)
        caption = f"{label} of the scientist's hypothesis after each step (first 8 episodes)."
        blocks.append(src.figures.add(f"steps_{metric}", fig, caption))
    return [Columns(blocks)]


def _trajectories(src: RunSource, episodes: list[dict[str, Any]]) -> list[Any]:
    if not episodes:
        return [Text("No finished episode.", muted=True)]
    items = [_episode(src, e, draw=i < GRAPH_EPISODES) for i, e in enumerate(episodes)]
    note = Text(
        f"Graphs are drawn for the first {GRAPH_EPISODES} episodes; the others show the records.",
        muted=True,
    )
    return [
        Searchable(items, placeholder="search episodes"),
        *([note] if len(items) > GRAPH_EPISODES else []),
    ]


def _episode(src: RunSource, episode: dict[str, Any], *, draw: bool) -> Fold:
    metrics = episode.get("metrics") or {}
    truth = true_graph(str(episode.get("suite")), int(episode.get("index", -1)))
    name = f"{episode.get('graph_id')}-s{episode.get('seed')}"
    facts = [
        ("success", episode.get("success")),
        ("stop", episode.get("stop_reason")),
        ("budget used", metrics.get("budget_used")),
        ("SHD", metrics.get("shd")),
        ("edge F1", metrics.get("all_edge_f1")),
        ("target frequency", episode.get("target_frequency")),
        ("submitted", episode.get("submissions")),
    ]
    drawn: dict[tuple[tuple[str, str], ...], Any] = {}
    steps = []
    for step in episode.get("steps") or []:
        edges = tuple(hypothesis_edges(step.get("hypothesis")))
        figure = None
        if draw and truth is not None:
            if edges not in drawn:
                fig = comparison_figure(
                    truth[0], truth[1], list(edges), predicted_title="hypothesis"
                )
                caption = "The scientist's hypothesis (edges coloured by class) and the truth."
                drawn[edges] = src.figures.add(f"{name}-{len(drawn)}", fig, caption, save=False)
            figure = drawn[edges]
        steps.append(_step(step, figure))
    badge = f"{'success' if episode.get('success') else 'failure'} · {len(steps)} steps"
    return Fold(
        summary=f"episode {name}",
        badge=badge,
        blocks=[Facts(facts), *steps],
        anchor=f"episode-{name}",
        search=f"{name} {episode.get('stop_reason')} {badge}",
    )


def dsl_text(step: dict[str, Any]) -> str:
    """A step's DSL record, readable: the hypothesis (edges, equation, coefficients) and
    the action."""
    hyp = step.get("hypothesis") or {}
    action = step.get("action") or {}
    lines = ["hypothesis:"]
    lines += [f"  {u} -> {v}" for u, v in hypothesis_edges(hyp)] or ["  (no edges)"]
    if hyp.get("freq_equation"):
        lines.append(f"  {hyp['freq_equation']}")
    coefficients = hyp.get("coefficients") or {}
    if coefficients:
        lines.append("  " + ", ".join(f"{k} = {v}" for k, v in coefficients.items()))
    args = ", ".join(f"{k}={v}" for k, v in action.items() if k != "tool")
    lines.append(f"action: {action.get('tool', '?')}({args})")
    return "\n".join(lines)


def _step(step: dict[str, Any], figure: Any) -> Fold:
    action = step.get("action") or {}
    record: list[Any] = [
        Facts([("action", action.get("tool", "?")), ("phase", step.get("phase"))]),
        Text(f"measurement: {step.get('observation') or '(none)'}"),
        Code(dsl_text(step)),
    ]
    if step.get("raw_output"):
        raw = Code(str(step["raw_output"]))
        record.append(Fold(summary="the scientist's raw output", blocks=[raw]))
    problems = [*(step.get("parse_errors") or []), *(step.get("parse_warnings") or [])]
    if problems:
        record.append(Text("parse: " + "; ".join(map(str, problems))))
    blocks: list[Any] = record if figure is None else [Columns([_stack(record), figure])]
    summary = f"step {step.get('t')} · {action.get('tool', '?')}"
    return Fold(summary=summary, badge=str(step.get("observation") or "")[:80], blocks=blocks)


def _stack(blocks: list[Any]) -> Fold:
    return Fold(summary="record", blocks=blocks, open=True)
