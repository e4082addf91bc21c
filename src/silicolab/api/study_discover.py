"""Causal discovery on a finished study's own data (``silicolab study discover RUN_DIR
--method ges|pc``, ``StudyResult.discover(method)``), compared with the graph the study
hypothesized (paper §5).

The paper ran GES on the data of every experiment to show what goes wrong when the
structure is searched for after the fact instead of stated before it: in the bail study
GES found the link between previous convictions and the bail amount but could not orient
it. This does the same for any study run: it takes the numeric columns of the
hypothesis' variables (treatments and measured variables; a nominal variable is
dummy-coded against its first level) from ``data.csv``, runs the project's statistical
method (:mod:`silicolab.discovery`, causal-learn underneath) with no knowledge of which
variables were randomized (as in the paper), and scores the found graph against the
hypothesized one (edges from each measured variable's causes to it) with the project's
metrics (:func:`silicolab.discovery.scoring.score`, :func:`silicolab.scm.metrics.shd_cpdag`).
The edge table and the metrics are written, as strict JSON, to
``discovery-<method>.json`` in the run directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from silicolab.api.run_flow import shown_run_dir
from silicolab.core.errors import InputError
from silicolab.core.files import atomic_write_json
from silicolab.core.records import SCHEMA_VERSION

METHODS = ("ges", "pc")
#: Fewest complete rows discovery runs on (and never fewer than variables + 3, which a
#: Fisher-z test conditioning on all other variables needs).
MIN_ROWS = 10


def discover_in_study(run_dir: str | Path, method: str = "ges") -> dict[str, Any]:
    """Run ``method`` (``ges`` or ``pc``) on the finished study in ``run_dir``, score the
    found graph against the hypothesized one, write ``discovery-<method>.json`` beside
    the record and return that summary (module docstring)."""
    from silicolab.api.study_after import FinishedStudy

    if method not in METHODS:
        raise InputError(
            f"method={method!r} is not supported here; use one of {METHODS}", params=("method",)
        )
    study = FinishedStudy.open(run_dir)
    drop_capped = bool(study.options.get("drop_capped"))
    table = study.data()  # what the fit used (replicates averaged)
    summary = discover_study(study.hypothesis, table, method=method, drop_capped=drop_capped)
    summary["run_dir"] = str(shown_run_dir(study.run.path))
    path = atomic_write_json(study.run.path / f"discovery-{method}.json", summary)
    summary["path"] = str(path.resolve())
    return summary


def discover_study(
    hypothesis: Any, table: Any, *, method: str, drop_capped: bool = False
) -> dict[str, Any]:
    """The discovery summary of ``table`` (a study's ``data.csv``) under ``hypothesis``:
    the variables and rows used, the hypothesized and the found edges, the edge table,
    the metrics and notes. ``drop_capped`` leaves out conversations that hit the
    statement cap, as the study's fit did."""
    from silicolab.discovery.registry import discover
    from silicolab.discovery.result import graph_edges
    from silicolab.discovery.scoring import score
    from silicolab.scm.metrics import shd_cpdag

    frame, groups, notes = discovery_frame(hypothesis, table, drop_capped=drop_capped)
    truth = hypothesized_graph(hypothesis, groups)
    result = discover(frame, method)
    metrics = {**score(result, truth), "shd_cpdag": shd_cpdag(truth, result.graph)}
    notes.append(
        f"{method} was not told which variables were randomized (as in the paper): it "
        "sees only the data, so it may leave edges unoriented or orient them backwards"
    )
    return {
        "schema_version": SCHEMA_VERSION,
        "study": hypothesis.name,
        "method": method,
        "params": result.params,
        "rows": len(frame),
        "variables": list(frame.columns),
        "hypothesized_edges": [list(e) for e in truth.edges],
        "found_edges": graph_edges(result.graph),
        "edges": edge_table(truth, result.graph),
        "metrics": metrics,
        "runtime_s": result.runtime_s,
        "notes": [*notes, *result.notes],
    }


def discovery_frame(
    hypothesis: Any, table: Any, *, drop_capped: bool = False
) -> tuple[Any, dict[str, list[str]], list[str]]:
    """``(frame, groups, notes)``: the numeric table discovery runs on (one column per
    numeric variable, ``name=level`` dummies for a nominal one, complete rows only),
    which frame columns stand for each variable, and notes on what was coded or dropped.
    Too few rows, a constant column or linearly dependent columns are an InputError."""
    import pandas as pd

    notes: list[str] = []
    data = table
    if drop_capped and "stop_reason" in data.columns:
        keep = data["stop_reason"] != "cap"
        if (~keep).any():
            notes.append(f"{int((~keep).sum())} capped conversations left out, as in the fit")
        data = data[keep]
    columns: dict[str, Any] = {}
    groups: dict[str, list[str]] = {}
    for v in [*hypothesis.treatments, *hypothesis.measured]:
        if v.name not in data.columns:
            raise InputError(
                f"data.csv has no column {v.name!r} of the hypothesis; the run directory "
                "is incomplete or was edited: rerun the study"
            )
        if v.type == "nominal":
            levels = list(v.levels or v.values)
            text = data[v.name].astype("string")
            for level in levels[1:]:
                dummy = (text == level).astype("Float64").where(text.notna())
                columns[f"{v.name}={level}"] = dummy
            groups[v.name] = [f"{v.name}={level}" for level in levels[1:]]
            notes.append(f"{v.name} (nominal) dummy-coded against its first level {levels[0]!r}")
        else:
            columns[v.name] = pd.to_numeric(data[v.name], errors="coerce")
            groups[v.name] = [v.name]
    frame = pd.DataFrame(columns).astype(float)
    complete = frame.dropna()
    if len(complete) < len(frame):
        notes.append(f"{len(frame) - len(complete)} rows with a missing value left out")
    _check_frame(hypothesis, complete, groups, total=len(table))
    return complete.reset_index(drop=True), groups, notes


def _check_frame(hypothesis: Any, frame: Any, groups: dict[str, list[str]], total: int) -> None:
    needed = max(MIN_ROWS, frame.shape[1] + 3)
    if len(frame) < needed:
        raise InputError(
            f"only {len(frame)} complete rows (of {total}) for {frame.shape[1]} variables; "
            f"causal discovery needs at least {needed}: run the study with more conditions "
            "(--conditions N) or check the survey answers (NA counts in the record)"
        )
    from silicolab.scm.estimability import is_constant

    values = frame.to_numpy(dtype=float)
    constant = [c for j, c in enumerate(frame.columns) if is_constant(values[:, j])]
    if constant:
        owner = {c: name for name, cols in groups.items() for c in cols}
        shown = ", ".join(f"{c} ({frame[c].iloc[0]:g} in every row)" for c in constant)
        treated = [c for c in constant if hypothesis.variable(owner[c]).role == "cause"]
        fix = (
            "run more conditions so every treatment takes two or more values"
            if treated
            else "the subjects answered the same in every condition: run the study with "
            "subjects whose answers vary (another model, or --subjects llm)"
        )
        raise InputError(
            f"{shown} does not vary in the {len(frame)} rows used; discovery cannot place a "
            f"constant variable: {fix}"
        )
    dependent = _dependent_columns(values, list(frame.columns))
    if dependent:
        raise InputError(
            f"columns {dependent} are exact linear combinations of the others (the data "
            "matrix has rank below its number of columns), which the CI tests and the BIC "
            "score cannot handle: run more conditions or leave a derived variable out of "
            "the hypothesis"
        )


def _dependent_columns(values: Any, names: list[str]) -> list[str]:
    """Columns that the other columns (and a constant) predict exactly (R² of 1 up to
    rounding), found by least squares on standardized data."""
    import numpy as np

    z = (values - values.mean(axis=0)) / values.std(axis=0)
    out = []
    for j, name in enumerate(names):
        others = np.delete(z, j, axis=1)
        if others.shape[1] == 0:
            continue
        coef, *_ = np.linalg.lstsq(others, z[:, j], rcond=None)
        residual = z[:, j] - others @ coef
        if float(residual @ residual) <= 1e-9 * len(z):
            out.append(name)
    return out


def hypothesized_graph(hypothesis: Any, groups: dict[str, list[str]]) -> Any:
    """The hypothesis' SCM as a :class:`~silicolab.scm.graph.CausalGraph` over the frame's
    columns: an edge from (every dummy of) each cause to (every dummy of) each measured
    variable that lists it."""
    from silicolab.scm.graph import CausalGraph

    nodes = [c for cols in groups.values() for c in cols]
    edges = [
        (a, b)
        for v in hypothesis.measured
        for cause in v.causes
        for a in groups[cause]
        for b in groups[v.name]
    ]
    return CausalGraph(nodes, edges)


def edge_table(truth: Any, found: Any) -> list[dict[str, Any]]:
    """One row per node pair adjacent in the hypothesis or in the found graph: the edge,
    where it is (``both``, ``hypothesized``, ``found``), how it was found (``a -> b``,
    ``a -- b`` undirected, ``a <-> b``) and whether the direction agrees (``same``,
    ``reversed``, ``unoriented``)."""
    from silicolab.discovery.result import graph_edges

    kinds = graph_edges(found)
    shown: dict[frozenset[str], tuple[str, str, str]] = {}
    for kind, arrow in (("directed", "->"), ("undirected", "--"), ("bidirected", "<->")):
        for u, v in kinds.get(kind, []):
            shown[frozenset((u, v))] = (u, v, arrow)
    for edge in kinds.get("marked", []):
        shown[frozenset((edge["u"], edge["v"]))] = (edge["u"], edge["v"], "o-o")
    rows = []
    for a, b in truth.edges:
        pair = frozenset((a, b))
        got = shown.pop(pair, None)
        row = {"edge": f"{a} -> {b}", "hypothesized": True, "status": "hypothesized"}
        row.update(found=None, direction=None)
        if got is not None:
            u, v, arrow = got
            direction = "unoriented"
            if arrow == "->":
                direction = "same" if (u, v) == (a, b) else "reversed"
            row.update(status="both", found=f"{u} {arrow} {v}", direction=direction)
        rows.append(row)
    for u, v, arrow in shown.values():
        rows.append(
            {
                "edge": f"{u} {arrow} {v}",
                "hypothesized": False,
                "status": "found",
                "found": f"{u} {arrow} {v}",
                "direction": None,
            }
        )
    return rows


__all__ = [
    "METHODS",
    "discover_in_study",
    "discover_study",
    "discovery_frame",
    "edge_table",
    "hypothesized_graph",
]
