"""The page of a study run (``silicolab study run``) and of the demo (a study plus a tour):
the SCM as a path diagram, the variables with the scientist's explanations, the design, a
searchable list of conditions, the fit, the predictions, the follow-on and the cost."""

from __future__ import annotations

import math
from typing import Any

from silicolab.core.files import read_json_file
from silicolab.report.html.blocks import (
    Chat,
    Code,
    Facts,
    Fold,
    Page,
    Searchable,
    Section,
    Table,
    Text,
)
from silicolab.report.html.figures import scatter_vs
from silicolab.report.html.graphs import path_diagram, stars
from silicolab.report.html.source import RunSource, health_fold, pretty, rows_table
from silicolab.report.study_report import run_ledger
from silicolab.report.tour import tour_seconds

PARAM_COLUMNS = (
    ("lhs", "effect"),
    ("op", "op"),
    ("rhs", "cause"),
    ("est", "estimate"),
    ("se", "SE"),
    ("stars", ""),
    ("z", "z"),
    ("p", "p"),
    ("ci_low", "CI low"),
    ("ci_high", "CI high"),
    ("std_all", "std."),
)
VARIABLE_COLUMNS = (
    ("name", "variable"),
    ("role", "role"),
    ("type", "type"),
    ("units", "units"),
    ("levels", "levels"),
    ("values", "treatment values"),
    ("operationalization", "operationalization"),
    ("question", "measurement question"),
    ("aggregation", "aggregation"),
)


def build(src: RunSource) -> Page:
    """The study page (a demo run adds its truth and tour)."""
    record = src.record
    if not record.get("runs"):  # a study still running (or interrupted): its finished conditions
        runs = [e for e in src.ok_events() if "condition_id" in e and "statements" in e]
        record = {**record, "runs": sorted(runs, key=lambda r: r.get("index", 0))}
    hyp = record.get("hypothesis") or {}
    main = (record.get("estimation") or {}).get("main") or {}
    sections = [
        Section("Hypothesis", "hypothesis", _hypothesis(src, hyp, main, "scm", "The SCM")),
        Section("Variables", "variables", _variables(hyp, record.get("decisions") or [])),
        Section("Design", "design", _design(record.get("design") or {}, hyp)),
        Section("Conditions", "conditions", _conditions(record.get("runs") or [])),
        Section("Fit", "fit", _fit(record)),
    ]
    later = src.path / "predictions.json"  # written by 'study predict' after the run
    if not record.get("predictions") and later.is_file():
        predictions = read_json_file(later, fix="rerun 'silicolab study predict' or delete it")
        record = {**record, "predictions": predictions}
    if record.get("predictions"):
        sections.append(Section("Predictions", "predictions", _predictions(src, record)))
    if record.get("follow_on"):
        sections.append(Section("Follow-on", "follow-on", _follow_on(src, record["follow_on"])))
    if record.get("truth"):
        sections.append(Section("Truth", "truth", _truth(record)))
    if record.get("tour"):
        sections.append(Section("Tour", "tour", _tour(record["tour"], src.info)))
    sections.append(Section("Cost", "cost", _cost(record, src.info)))
    facts = [
        ("scenario", record.get("scenario")),
        ("conditions", len(record.get("runs") or [])),
        ("n", main.get("n")),
        *[(f"R² {k}", v) for k, v in (main.get("r2") or {}).items()],
        *[(f"{role} model", m) for role, m in (record.get("models") or {}).items()],
        *[
            (f"stage {name}", f"{stage['status']}: {stage.get('reason', 'not reached')}")
            for name, stage in (record.get("stages") or {}).items()
            if stage.get("status") in ("failed", "skipped", "pending")
        ],
        *src.run_facts(),
    ]
    title = f"Study: {record.get('study') or hyp.get('name') or src.path.name}"
    subtitle = "An automated social-science study: hypothesis, experiment, fit and predictions."
    return Page(title, subtitle, facts, sections, tuple(src.figures.saved))


def path_labels(params: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """``(cause, effect) -> "est (SE) stars"`` of the regression paths (no interactions)."""
    labels = {}
    for p in params:
        if p.get("op") == "~" and ":" not in str(p.get("rhs")):
            labels[(p["rhs"], p["lhs"])] = (
                f"{_num(p.get('est'))} ({_num(p.get('se'))}){stars(p.get('p'))}"
            )
    return labels


def _num(value: Any) -> str:
    if not isinstance(value, int | float) or not math.isfinite(value):
        return "–"
    return f"{value:.3g}"


def _hypothesis(
    src: RunSource, hyp: dict[str, Any], main: dict[str, Any], name: str, title: str
) -> list[Any]:
    """The path diagram of ``hyp`` with the fitted estimates of ``main``."""
    variables = hyp.get("variables") or []
    nodes = [v["name"] for v in variables if v.get("role") != "outcome"]
    nodes += [v["name"] for v in variables if v.get("role") == "outcome"]
    edges = [(c, v["name"]) for v in variables for c in v.get("causes") or [] if c in nodes]
    labels = path_labels(main.get("params") or [])
    if not nodes:
        return [Text("No hypothesis was recorded.", muted=True)]
    fig = path_diagram(nodes, edges, {e: labels.get(e, "") for e in edges})
    caption = f"{title}: each arrow is a hypothesized cause with its estimate (SE) and stars."
    blocks: list[Any] = [src.figures.add(name, fig, caption)]
    blocks.append(Text(f"Scenario: {hyp.get('scenario', '')}"))
    agents = hyp.get("agents") or []
    if agents:
        columns = [("name", "agent"), ("role", "role"), ("goal", "goal"), ("constraint", "rule")]
        blocks.append(rows_table(agents, columns, caption="Agents"))
    return blocks


def _variables(hyp: dict[str, Any], decisions: list[dict[str, Any]]) -> list[Any]:
    """The variables table and the scientist's decisions with their explanations."""
    rows = []
    for v in hyp.get("variables") or []:
        question = "; ".join(
            f"{q.get('addressee')}: {q.get('text')}" for q in v.get("questions", [])
        )
        rows.append({**v, "question": question})
    blocks: list[Any] = [rows_table(rows, VARIABLE_COLUMNS)]
    if not decisions:
        return blocks
    blocks.append(Text("The scientist's decisions, each with its explanation:"))
    names = [v["name"] for v in hyp.get("variables") or []]
    by_variable = {
        n: [d for d in decisions if str(d.get("step", "")).startswith(f"{n}.")] for n in names
    }
    general = [d for d in decisions if not any(d in ds for ds in by_variable.values())]
    if general:
        blocks.append(
            Fold(summary=f"the study ({len(general)})", blocks=[_decision(d) for d in general])
        )
    for name, own in by_variable.items():
        if own:
            summary = f"{name} ({len(own)})"
            blocks.append(
                Fold(
                    summary=summary, blocks=[_decision(d) for d in own], anchor=f"decisions-{name}"
                )
            )
    return blocks


def _decision(d: dict[str, Any]) -> Fold:
    return Fold(
        summary=str(d.get("step", "")),
        badge=str(d.get("explanation", ""))[:90],
        blocks=[Text(str(d.get("explanation", ""))), Code(pretty(d.get("value")))],
    )


def _design(design: dict[str, Any], hyp: dict[str, Any]) -> list[Any]:
    keys = ("kind", "full_size", "seed", "protocol", "order", "central", "max_statements")
    facts = [(k, design.get(k)) for k in keys if design.get(k) is not None]
    facts.insert(1, ("conditions run", len(design.get("conditions") or [])))
    levels = [
        {"variable": v["name"], "n": len(v["values"]), "values": v["values"]}
        for v in hyp.get("variables") or []
        if v.get("values")
    ]
    columns = [("variable", "treatment"), ("n", "levels"), ("values", "values")]
    return [Facts(facts), Table(columns=columns, rows=levels, caption="Treatments")]


def _conditions(runs: list[dict[str, Any]]) -> list[Any]:
    """Every condition, folded, in a searchable list: treatments, transcript, survey."""
    if not runs:
        return [Text("No condition finished.", muted=True)]
    survey_columns = [
        ("addressee", "asked"),
        ("question", "question"),
        ("raw", "answer"),
        ("value", "value"),
        ("explanation", "parsed because"),
    ]
    items = []
    for r in runs:
        treatments = r.get("treatments") or {}
        values = ", ".join(f"{k}={v}" for k, v in (r.get("values") or {}).items())
        said = [(str(s.get("speaker")), str(s.get("text"))) for s in r.get("statements") or []]
        blocks: list[Any] = [Facts([*treatments.items(), ("stop", r.get("stop_reason"))])]
        blocks += [Chat(said), Table(columns=survey_columns, rows=r.get("survey") or [])]
        if r.get("error"):
            blocks.append(Text(f"error: {r['error']}"))
        label = "; ".join(f"{k}: {v}" for k, v in treatments.items())
        items.append(
            Fold(
                summary=f"#{r.get('index')} {label}",
                badge=f"{values} · {len(said)} statements",
                blocks=blocks,
                anchor=f"condition-{r.get('condition_id')}",
            )
        )
    return [Searchable(items, placeholder="search conditions, transcripts and answers")]


PROBLEM_COLUMNS = (("model", "model"), ("equation", "equation"), ("kind", "problem"),
                   ("detail", "why"))  # fmt: skip


def _fit(record: dict[str, Any]) -> list[Any]:
    est = record.get("estimation") or {}
    if not est.get("main"):
        return _no_fit(record)
    return _fit_tables(est)


def _no_fit(holder: dict[str, Any]) -> list[Any]:
    """Why a stage has no fit: each estimability problem, or the error; no numbers."""
    problems = holder.get("fit_problems") or []
    if not problems:
        return [Text(f"No fit: {holder.get('fit_error') or 'nothing to fit'}", muted=True)]
    text = "Not estimable: the hypothesized SCM cannot be fitted to these data, so no "
    text += "estimate, SE or p-value is reported."
    return [Text(text), rows_table(problems, PROBLEM_COLUMNS, caption="Why")]


def _test_facts(test: dict[str, Any]) -> Facts:
    """A nested test's statistics, or the reason it was not run (no statistic)."""
    if "lr" not in test:
        return Facts([("test", test.get("name")), ("not run", test.get("skipped"))])
    return Facts(list(test.items()))


def _fit_tables(est: dict[str, Any]) -> list[Any]:
    main = est["main"]
    params = [{**p, "stars": stars(p.get("p"))} for p in main.get("params") or []]
    blocks: list[Any] = [
        Facts(
            [("n", main.get("n")), ("SE", main.get("se_type")), ("dropped", main.get("n_dropped"))]
        ),
        rows_table(
            params, PARAM_COLUMNS, caption="Path estimates (* p < .05, ** < .01, *** < .001)"
        ),
        Code(str(main.get("lavaan", ""))),
    ]
    if (est.get("interactions") or {}).get("params"):
        rows = [{**p, "stars": stars(p.get("p"))} for p in est["interactions"]["params"]]
        blocks.append(rows_table(rows, PARAM_COLUMNS, caption="With pairwise interactions"))
    for test in est.get("tests") or []:
        blocks.append(_test_facts(test))
    skipped = [
        {"model": m.get("model"), **p} for m in est.get("skipped") or [] for p in m["problems"]
    ]
    if skipped:
        caption = "Models not estimable (no estimates shown) and why"
        blocks.append(rows_table(skipped, PROBLEM_COLUMNS, caption=caption))
    if main.get("descriptives"):
        desc = main["descriptives"]
        blocks.append(rows_table(desc, [(k, k) for k in desc[0]], caption="Descriptives"))
    return blocks


def _predictions(src: RunSource, record: dict[str, Any]) -> list[Any]:
    pred = record["predictions"]
    rows = pred.get("conditions") or []
    kinds = [
        k for k in ("predict_y", "loo_llm", "loo_mechanical", "theory") if any(k in r for r in rows)
    ]
    facts = [
        ("scientist model", pred.get("model")),
        ("temperature", pred.get("temperature")),
        ("rows scored", pred.get("rows")),
        ("capped runs dropped", pred.get("dropped_capped") if pred.get("drop_capped") else 0),
        *[(f"MSE {k}", v) for k, v in (pred.get("mse") or {}).items()],
        *[(f"{k} skipped", v) for k, v in (pred.get("skipped") or {}).items()],
    ]
    if pred.get("note"):
        facts.append(("note", pred["note"]))
    blocks: list[Any] = [Facts(facts)]
    if rows and kinds:
        observed = [r.get("observed") for r in rows]
        fig = scatter_vs(observed, {k: [r.get(k) for r in rows] for k in kinds})
        caption = "Predicted against observed outcome per condition (dashed: perfect)."
        blocks.append(src.figures.add("predictions", fig, caption))
    if pred.get("paths"):
        columns = [
            ("rhs", "cause"),
            ("estimate", "estimate"),
            ("predicted", "predicted β"),
            ("sign_correct", "sign right"),
            ("significant", "significant"),
            ("predicted_significant", "predicted sig."),
            ("error", "error"),
        ]
        blocks.append(rows_table(pred["paths"], columns, caption="Predicted path coefficients"))
    if pred.get("beta_summary"):
        blocks.append(Facts(list(pred["beta_summary"].items())))
    return blocks


def _follow_on(src: RunSource, follow: dict[str, Any]) -> list[Any]:
    plan = follow.get("plan") or {}
    blocks: list[Any] = [Facts([(k, plan.get(k)) for k in ("kept", "dropped", "added")])]
    decisions = plan.get("decisions") or []
    if decisions:
        summary = f"The scientist's follow-on decisions ({len(decisions)})"
        blocks.append(Fold(summary=summary, blocks=[_decision(d) for d in decisions]))
    main = (follow.get("estimation") or {}).get("main") or {}
    title = "The follow-on SCM"
    blocks += _hypothesis(src, follow.get("hypothesis") or {}, main, "follow_on_scm", title)
    comparison = (follow.get("comparison") or {}).get("paths") or []
    if comparison:
        columns = [(k, k) for k in comparison[0]]
        blocks.append(rows_table(comparison, columns, caption="First experiment vs follow-on"))
    if (follow.get("estimation") or {}).get("main"):
        blocks += _fit_tables(follow["estimation"])
    else:
        blocks += _no_fit(follow)
    runs = follow.get("runs") or []
    if runs:
        blocks.append(Fold(summary=f"Follow-on conditions ({len(runs)})", blocks=_conditions(runs)))
    return blocks


def _truth(record: dict[str, Any]) -> list[Any]:
    truth = record["truth"]
    estimates = {p["rhs"]: p.get("est") for p in _paths(record)}
    rows = [
        {"cause": c, "true": e, "estimated": estimates.get(c)}
        for c, e in (truth.get("effects") or {}).items()
    ]
    columns = [("cause", "cause"), ("true", "true effect"), ("estimated", "estimate")]
    text = Text("The demo's subjects follow a hidden SCM: its true effects beside the fit.")
    return [text, Facts([("intercept", truth.get("intercept"))]), Table(columns, rows)]


def _paths(record: dict[str, Any]) -> list[dict[str, Any]]:
    main = (record.get("estimation") or {}).get("main") or {}
    return [p for p in main.get("params") or [] if p.get("op") == "~"]


def _tour(tour: dict[str, Any], info: dict[str, Any]) -> list[Any]:
    """The demo's tour; a discovery method's seconds come from ``run.json``'s timings."""
    blocks: list[Any] = []
    for name, part in tour.items():
        rows = part.get("rows") if isinstance(part, dict) else None
        if name == "discovery" and rows:
            seconds = tour_seconds(part, info.get("timings"))
            rows = [{**r, "runtime_s": seconds.get(r.get("method"))} for r in rows]
        facts = [(k, v) for k, v in (part or {}).items() if k != "rows"]
        inner: list[Any] = [Facts(facts)]
        if rows:
            inner.append(rows_table(rows, [(k, k) for k in rows[0]]))
        blocks.append(Fold(summary=name, blocks=inner, open=True))
    return blocks


def _cost(record: dict[str, Any], info: dict[str, Any]) -> list[Any]:
    """The model calls of every process of the run (``run.json``; older records kept
    them), the cost plan and the model health."""
    ledger = run_ledger(record, info)
    keys = ("calls", "cache_hits", "input_tokens", "output_tokens", "cost", "retries", "errors")
    rows = [
        {"role": role, "tag": tag, **values}
        for role, entry in ledger.items()
        for tag, values in [("all", entry), *(entry.get("by_tag") or {}).items()]
    ]
    columns = [("role", "role"), ("tag", "tag"), *((k, k) for k in keys)]
    blocks: list[Any] = [rows_table(rows, columns, caption="Language-model calls by role and tag")]
    plan = (record.get("options") or {}).get("plan")
    if plan:
        blocks.append(Code(pretty(plan)))
    return blocks + health_fold(record.get("health"))
