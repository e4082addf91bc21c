"""The page of a simulation run (``silicolab sim run``): the grounded variables over time,
the conversation and survey, and the episode log step by step with each component's
contribution folded; nested games are linked from the step that played them."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from silicolab.core.files import dumps
from silicolab.report.html.blocks import (
    Chat,
    Code,
    Facts,
    Fold,
    Link,
    Page,
    Searchable,
    Section,
    Table,
    Text,
)
from silicolab.report.html.figures import PALETTE, new_figure
from silicolab.report.html.source import RunSource, health_fold, rows_table

_LISTS = (
    "log",
    "transcript",
    "survey",
    "events",
    "grounded_history",
    "trades",
    "rejected",
    "timeline",
    "per_entity",
)


def build(src: RunSource) -> Page:
    """The simulation page."""
    record = src.record
    name = record.get("example") or src.info.get("slug") or src.path.name
    scalars = [
        (k, v)
        for k, v in record.items()
        if k not in ("schema_version", "kind", "health", "seed") and not isinstance(v, dict | list)
    ]
    nested: list[tuple[str, dict[str, Any]]] = []
    steps = _steps(record.get("log") or [], nested)
    sections = []
    if record.get("grounded_history") or record.get("final_state"):
        sections.append(Section("Grounded variables", "grounded", _grounded(src, record)))
    sections.append(Section("Outcome", "outcome", _outcome(record)))
    sections.append(Section("Episode log", "log", steps))
    if nested:
        sections.append(Section("Nested games", "nested", _nested(nested)))
    facts = [*scalars, ("log steps", len(record.get("log") or [])), *src.run_facts()]
    subtitle = "A generative agent-based simulation, step by step."
    return Page(f"Simulation: {name}", subtitle, facts, sections, tuple(src.figures.saved))


def grounded_series(history: list[list[Any]]) -> dict[str, dict[str, list[tuple[int, float]]]]:
    """Numeric grounded variables over steps, grouped by the part of their name before
    ``:`` (``money:B1`` -> group ``money``, line ``B1``): ``{group: {line: [(step, v)]}}``.
    Each line starts at step 0 with its value before the first change and is held to the
    end of the episode."""
    groups: dict[str, dict[str, list[tuple[int, float]]]] = defaultdict(dict)
    end = 1 + max((int(h[0]) for h in history), default=0)
    for step, name, old, new, _cause in history:
        group, _, line = str(name).partition(":")
        points = groups[group].setdefault(line or group, [])
        if not points and _number(old):
            points.append((0, float(old)))
        if _number(new):
            points.append((int(step) + 1, float(new)))
    for lines in groups.values():
        for points in lines.values():
            if points and points[-1][0] < end:
                points.append((end, points[-1][1]))
    return {g: lines for g, lines in groups.items() if any(lines.values())}


def timeline_series(rows: list[dict[str, Any]]) -> dict[str, dict[str, list[tuple[int, float]]]]:
    """Numeric values of a world's ``timeline`` rows as :func:`grounded_series` gives them:
    ``{variable: {key (or the variable): [(after_step, value)]}}``, each held to the end."""
    groups: dict[str, dict[str, list[tuple[int, float]]]] = defaultdict(dict)
    end = max((int(r["after_step"]) for r in rows), default=0)
    for row in rows:
        if _number(row.get("value")):
            line = str(row.get("key") or row["variable"])
            points = groups[str(row["variable"])].setdefault(line, [])
            points.append((int(row["after_step"]), float(row["value"])))
    for lines in groups.values():
        for points in lines.values():
            if points[-1][0] < end:
                points.append((end, points[-1][1]))
    return dict(groups)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _grounded(src: RunSource, record: dict[str, Any]) -> list[Any]:
    series = grounded_series(record.get("grounded_history") or []) or timeline_series(
        record.get("timeline") or []
    )
    blocks: list[Any] = []
    if series:
        fig = new_figure(7.0, 2.4 * len(series))
        axes = fig.subplots(len(series), 1, squeeze=False)[:, 0]
        for ax, (group, lines) in zip(axes, series.items(), strict=True):
            for i, (line, points) in enumerate(sorted(lines.items())):
                xs, ys = zip(*points, strict=True)
                ax.step(xs, ys, where="post", label=line[:40], color=PALETTE[i % len(PALETTE)])
            ax.set(ylabel=group[:30])
            ax.legend(fontsize=7, frameon=False, ncols=min(6, len(lines)))
        axes[-1].set_xlabel("step")
        caption = "Grounded variables over the episode's steps (each change as it happened)."
        blocks.append(src.figures.add("grounded", fig, caption))
    else:
        blocks.append(Text("This episode records no numeric grounded variable.", muted=True))
    final = record.get("final_state")
    if isinstance(final, dict) and final:
        rows = [{"variable": k, "value": v} for k, v in final.items()]
        blocks.append(Table([("variable", "variable"), ("value", "final value")], rows))
    return blocks


def _outcome(record: dict[str, Any]) -> list[Any]:
    blocks: list[Any] = []
    per_entity = record.get("per_entity") or []
    if per_entity:
        columns = list(dict.fromkeys(k for row in per_entity for k in row))
        shown = [{k: _shown(v) for k, v in row.items()} for row in per_entity]
        blocks.append(rows_table(shown, [(c, c) for c in columns], caption="Outcome per entity"))
    statements = record.get("transcript") or []
    if statements:
        blocks.append(Chat([(str(s.get("speaker")), str(s.get("text"))) for s in statements]))
    survey = record.get("survey") or []
    if survey:
        columns = [("addressee", "asked"), ("question", "question"), ("raw", "answer")]
        columns += [("value", "value"), ("explanation", "parsed because")]
        blocks.append(rows_table(survey, columns, caption="Survey"))
    for key in ("trades", "rejected"):
        rows = record.get(key) or []
        if rows and isinstance(rows[0], dict):
            blocks.append(rows_table(rows, [(k, k) for k in rows[0]], caption=key))
    events = record.get("events") or []
    if events:
        blocks.append(Fold(summary=f"Events ({len(events)})", blocks=[Code("\n".join(events))]))
    others = {k: v for k, v in record.items() if isinstance(v, list) and k not in _LISTS}
    for key, value in others.items():
        blocks.append(Facts([(key, value)]))
    return blocks + health_fold(record.get("health")) or [Text("Nothing recorded.", muted=True)]


def _shown(value: Any) -> Any:
    return dumps(value) if isinstance(value, dict | list) else value


def _steps(log: list[dict[str, Any]], nested: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The log as a searchable list of folds; nested games go to ``nested`` (with the
    anchor of the step that played them)."""
    if not log:
        return [Text("The episode log is empty.", muted=True)]
    return [Searchable(_step_folds(log, "step", nested), placeholder="search the episode log")]


def _step_folds(
    log: list[dict[str, Any]], prefix: str, nested: list[tuple[str, dict[str, Any]]] | None
) -> list[Fold]:
    folds = []
    for i, s in enumerate(log):
        anchor = f"{prefix}-{i}"
        context = dict(s.get("context") or {})
        inner = context.pop("nested", None)
        blocks: list[Any] = [Text(str(s.get("output", "")))]
        if s.get("event"):
            blocks.append(Text(f"event: {s['event']}"))
        if inner is not None and nested is not None:
            target = f"nested-{len(nested)}"
            nested.append((anchor, _load(inner)))
            blocks.append(Link(f"nested game played here: see {target}", f"#{target}"))
        blocks += [
            Fold(summary=f"component: {key}", blocks=[Code(str(v))]) for key, v in context.items()
        ]
        summary = f"{prefix} {s.get('step')} · {s.get('who')} · {s.get('kind')}"
        folds.append(
            Fold(
                summary=summary, badge=str(s.get("output", ""))[:100], blocks=blocks, anchor=anchor
            )
        )
    return folds


def _load(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    try:
        loaded = json.loads(str(value))
    except json.JSONDecodeError:
        return {"log": [], "events": [str(value)]}
    return loaded if isinstance(loaded, dict) else {"log": []}


def _nested(nested: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    blocks: list[Any] = []
    for i, (parent, game) in enumerate(nested):
        inner: list[Any] = [Link(f"back to the parent step ({parent})", f"#{parent}")]
        inner.append(Facts([("engine", game.get("engine")), ("seed", game.get("seed"))]))
        if game.get("events"):
            inner.append(Code("\n".join(map(str, game["events"]))))
        inner += _step_folds(game.get("log") or [], f"nested-{i}-step", None)
        if game.get("state"):
            inner.append(Code(dumps(game["state"], indent=2)))
        blocks.append(
            Fold(summary=f"nested game {i} (from {parent})", blocks=inner, anchor=f"nested-{i}")
        )
    return blocks
