"""The page of a BoxingGym bench run (``silicolab bench boxinggym``): the results beside
the published anchors; the standardized error over evaluation budgets (with the random
designer's when the run holds random episodes); per episode, the designs chosen on the
design space, the EIG and regret of each step, the scientist's explanation and the
novice's score."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from silicolab.report.bench import BOXINGGYM_COLUMNS, legend_text, shown_rows
from silicolab.report.html.blocks import Code, Columns, Facts, Fold, Page, Section, Table, Text
from silicolab.report.html.figures import line_chart, new_figure
from silicolab.report.html.source import RunSource, health_fold, rows_table

ANCHORS = ("paper_before", "paper_after", "paper_after_comm", "paper_regret")
EPISODE_FIGURES = 12


def build(src: RunSource) -> Page:
    """The BoxingGym page."""
    record = src.record
    rows = record.get("rows") or []
    episodes = _records(src)
    health = health_fold(record.get("health"))
    columns = (*BOXINGGYM_COLUMNS, ("after_comm", "after comm."), ("paper_after_comm", "paper"))
    shown, legend = shown_rows(rows)  # paper numbers marked by provenance (‡: on our scale)
    results = [rows_table(shown, columns, highlight=ANCHORS)]
    results += [Text(line, muted=True) for line in legend_text(legend).splitlines()]
    sections = [
        Section("Results", "results", [*results, *health]),
        Section("Error over budgets", "budgets", _budgets(src, episodes, random_designer(src))),
        Section("Episodes", "episodes", _episodes(src, episodes)),
    ]
    settings = record.get("settings") or {}
    facts = [(k, settings.get(k)) for k in ("env", "agent", "model", "seeds", "communicate")]
    subtitle = "Experimental design on a hidden generative model: error, EIG and regret."
    return Page(
        "BoxingGym benchmark", subtitle, facts + src.run_facts(), sections, tuple(src.figures.saved)
    )


def budget_curves(episodes: list[dict[str, Any]]) -> dict[tuple[str, str], list[tuple[int, float]]]:
    """Mean standardized error at each evaluation budget, per ``(env, agent)``."""
    sums: dict[tuple[str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for e in episodes:
        for score in e.get("scores") or []:
            value = score.get("standardized")
            if isinstance(value, int | float):
                key = (str(e.get("env")), str(e.get("agent")))
                sums[key][int(score.get("n_experiments", 0))].append(float(value))
    return {k: sorted((n, sum(v) / len(v)) for n, v in by_n.items()) for k, by_n in sums.items()}


def random_designer(src: RunSource) -> tuple[str, list[dict[str, Any]]]:
    """The random designer's episodes to compare with: none when this run is the random
    designer's, else those of the newest finished random BoxingGym run in the same runs
    folder, for this run's environments, goals and prior setting (its name, its episodes)."""
    from silicolab.core.errors import InputError
    from silicolab.runs import Run

    settings = src.record.get("settings") or {}
    mine = {(e.get("env"), e.get("goal"), e.get("prior")) for e in _records(src)}
    if settings.get("agent") == "random" or not mine:
        return "", []
    for sibling in sorted(src.path.parent.iterdir(), reverse=True):
        if sibling == src.path or not (sibling / "run.json").is_file():
            continue
        try:
            run = Run.open(sibling)
        except InputError:
            continue
        if run.kind != src.kind or run.status != "finished" or run.config.get("agent") != "random":
            continue
        data = [e.get("data") or {} for e in run.finished_events().values()]
        episodes = [d["record"] for d in data if isinstance(d.get("record"), dict)]
        same = [e for e in episodes if (e.get("env"), e.get("goal"), e.get("prior")) in mine]
        if same:
            return sibling.name, same
    return "", []


def _records(src: RunSource) -> list[dict[str, Any]]:
    return [e["record"] for e in src.ok_events() if isinstance(e.get("record"), dict)]


def _budgets(
    src: RunSource, episodes: list[dict[str, Any]], random: tuple[str, list[dict[str, Any]]]
) -> list[Any]:
    source, random_episodes = random
    curves = budget_curves(episodes + random_episodes)
    if not curves:
        return [Text("No evaluation was scored.", muted=True)]
    series = [
        (f"{env} · {agent}", [n for n, _ in c], [v for _, v in c])
        for (env, agent), c in curves.items()
    ]
    fig = line_chart(series, xlabel="experiments (evaluation budget)", ylabel="standardized error")
    caption = (
        "Mean standardized error after each budget (lower is better; < 0 beats the prior mean)."
    )
    blocks: list[Any] = [src.figures.add("budgets", fig, caption)]
    if source:
        blocks.append(Text(f"The random designer's curves come from the run {source}.", muted=True))
    elif not any(agent == "random" for _, agent in curves):
        blocks.append(
            Text(
                "The random designer's curve appears here when a finished random run of the "
                "same environments sits in the same runs folder "
                "(silicolab bench boxinggym --agent random).",
                muted=True,
            )
        )
    return blocks


def _episodes(src: RunSource, episodes: list[dict[str, Any]]) -> list[Any]:
    if not episodes:
        return [Text("No finished episode.", muted=True)]
    return [_episode(src, e, draw=i < EPISODE_FIGURES) for i, e in enumerate(episodes)]


def _episode(src: RunSource, e: dict[str, Any], *, draw: bool) -> Fold:
    name = f"{e.get('env')}-{e.get('goal')}-{e.get('agent')}-s{e.get('seed')}"
    scores = {int(s.get("n_experiments", 0)): s.get("standardized") for s in e.get("scores") or []}
    novice = e.get("novice") or {}
    facts = [
        ("goal", e.get("goal")),
        ("steps", e.get("steps")),
        ("error before", scores.get(0)),
        ("error after", scores.get(max(scores)) if scores else None),
        ("mean regret", e.get("regret_mean")),
        ("novice error", novice.get("standardized") if novice else None),
    ]
    blocks: list[Any] = [Facts(facts)]
    figures = []
    if draw:
        designs = _design_figure(src, name, e)
        if designs is not None:
            figures.append(designs)
        eig = _eig_figure(src, name, e)
        if eig is not None:
            figures.append(eig)
    if figures:
        blocks.append(Columns(figures))
    design_rows = e.get("designs") or []
    if design_rows:
        columns = [
            ("step", "step"),
            ("design", "design"),
            ("ok", "ok"),
            ("message", "outcome / message"),
        ]
        blocks.append(Fold(summary="designs", blocks=[Table(columns, design_rows)]))
    if e.get("explanation"):
        blocks.append(
            Fold(
                summary="the scientist's explanation",
                blocks=[Code(str(e["explanation"]))],
                open=True,
            )
        )
    if e.get("regret_error"):
        blocks.append(Text(f"regret: {e['regret_error']}", muted=True))
    return Fold(summary=f"episode {name}", blocks=blocks, anchor=f"episode-{name}")


def design_points(e: dict[str, Any]) -> list[tuple[int, list[float], Any]]:
    """``(step, numeric design, outcome value)`` of every measured design."""
    points = []
    for outcome in e.get("outcomes") or []:
        parsed = outcome.get("parsed")
        values = parsed if isinstance(parsed, list | tuple) else [parsed]
        if values and all(isinstance(v, int | float) for v in values):
            points.append(
                (int(outcome.get("step", 0)), [float(v) for v in values], outcome.get("value"))
            )
    return points


def _design_figure(src: RunSource, name: str, e: dict[str, Any]) -> Any:
    points = design_points(e)
    if not points:
        return None
    fig = new_figure(4.2, 3.2)
    ax = fig.add_subplot()
    steps = [p[0] for p in points]
    if len(points[0][1]) >= 2:
        xs, ys = [p[1][0] for p in points], [p[1][1] for p in points]
        labels = ("design[0]", "design[1]")
    else:
        xs, ys = (
            [p[1][0] for p in points],
            [p[2] if isinstance(p[2], int | float) else 0 for p in points],
        )
        labels = ("design", "outcome")
    dots = ax.scatter(xs, ys, c=steps, cmap="viridis", s=28, edgecolors="#333", linewidths=0.4)
    fig.colorbar(dots, ax=ax, label="step")
    ax.set(xlabel=labels[0], ylabel=labels[1], title="designs chosen")
    return src.figures.add(
        f"designs-{name}", fig, "Designs on the design space, coloured by step.", save=False
    )


def _eig_figure(src: RunSource, name: str, e: dict[str, Any]) -> Any:
    detail = e.get("regret_detail") or {}
    eigs, best, regret = (
        detail.get("eigs") or [],
        detail.get("eigs_max") or [],
        e.get("regret") or [],
    )
    if not eigs and not regret:
        return None
    series = [
        ("EIG of the design", list(range(len(eigs))), [_float(v) for v in eigs]),
        ("best EIG", list(range(len(best))), [_float(v) for v in best]),
        ("regret", list(range(len(regret))), [_float(v) for v in regret]),
    ]
    fig = line_chart(
        [s for s in series if s[1]], xlabel="step", ylabel="nats", width=4.6, height=3.2
    )
    return src.figures.add(f"eig-{name}", fig, "EIG and regret per step.", save=False)


def _float(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else float("nan")
