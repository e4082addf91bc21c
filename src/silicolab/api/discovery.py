"""``sl.discover``: one causal-discovery method on a bundled dataset, a CSV file or a
DataFrame, scored against the truth when one is known, kept in a run directory.

The run directory is the one ``silicolab discover`` writes (``run.json``, the result as
the run's one event, ``record.json``, ``report.md``, ``report.html`` with the predicted
and true graphs side by side). The command line is a thin layer over :func:`discover`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from silicolab.api._display import Shown
from silicolab.api.discovery_inputs import (
    FRAME_NAME,
    Job,
    edge_items,
    frame_fingerprint,
    param_items,
    prepare,
    truth_edges_of,
)
from silicolab.api.run_flow import (
    Resume,
    explicit_of,
    finish_run,
    first_figure,
    health_of,
    open_checked_run,
    open_finished,
    runs_root,
    shown_run_dir,
)
from silicolab.core.errors import InputError
from silicolab.core.files import dumps
from silicolab.core.fresh import fresh_calls

#: The unit key of the discovery's result in the run's events.jsonl.
RESULT = "result"
_MARKS = {"directed": "->", "undirected": "--", "bidirected": "<->"}


@dataclass(frozen=True, repr=False)
class DiscoveryResult(Shown):
    """A finished discovery run: the ``edges`` found (grouped ``directed``,
    ``undirected``, ``bidirected``), the ``scores`` against the truth (SHD, NHD, F1, ...;
    ``None`` without a truth or when the graph is a fallback's), the ``fallback`` a coding
    agent fell back to (else ``None``), the model ``health``, the run's ``status``, its
    ``run_dir`` and ``record`` (record.json)."""

    method: str
    dataset: str
    nodes: tuple[str, ...]
    edges: dict[str, list[Any]]
    scores: dict[str, Any] | None
    status: str
    run_dir: Path
    seed: int | None = None
    fallback: dict[str, Any] | None = None
    runtime_s: float = 0.0
    usage: dict[str, Any] = field(default_factory=dict)
    health: Any = None
    record: dict[str, Any] = field(default_factory=dict)
    #: The data's number of rows (``None`` when read back from a run directory).
    rows: int | None = None

    @property
    def graph(self) -> Any:
        """The graph found as a ``networkx.DiGraph`` over every variable; each edge's
        ``kind`` attribute says ``directed``, ``undirected`` or ``bidirected`` (the last
        two appear in both directions)."""
        import networkx as nx

        graph = nx.DiGraph()
        graph.add_nodes_from(self.nodes)
        for kind in _MARKS:
            for u, v in self.edges.get(kind) or ():
                graph.add_edge(u, v, kind=kind)
                if kind != "directed":
                    graph.add_edge(v, u, kind=kind)
        return graph

    @property
    def adjacency(self) -> pd.DataFrame:
        """The binary adjacency (``A.loc[cause, effect] = 1``; an undirected or
        bidirected edge sets both entries), rows and columns in the data's order."""
        import networkx as nx

        matrix = nx.to_numpy_array(self.graph, nodelist=list(self.nodes), weight=None)
        return pd.DataFrame(matrix.astype(int), index=list(self.nodes), columns=list(self.nodes))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: exactly what ``silicolab discover ... --json`` prints."""
        return {
            "run_dir": str(self.run_dir),
            "status": self.status,
            "dataset": self.dataset,
            "method": self.method,
            "seed": self.seed,
            "edges": self.edges,
            "scores": self.scores,
            "fallback": self.fallback,
            "runtime_s": self.runtime_s,
            "usage": self.usage,
            "health": self.record.get("health"),
        }

    @classmethod
    def from_run(cls, path: str | Path) -> DiscoveryResult:
        """Read a finished ``discover`` run directory back (made by the command or
        Python)."""
        run, record = open_finished(path, "discover")
        return cls.of_record(record, run_dir=shown_run_dir(run.path), status=run.status,
                             method=run.config.get("method"))  # fmt: skip

    @classmethod
    def of_record(
        cls,
        record: Mapping[str, Any],
        *,
        run_dir: Path,
        status: str,
        method: str | None,
        rows: int | None = None,
    ) -> DiscoveryResult:
        """The result a discover run's ``record`` holds."""
        result = record.get("result") or {}
        usage = result.get("usage") or {}
        return cls(
            method=method or result.get("method", ""),
            dataset=record.get("dataset", ""),
            nodes=tuple(result.get("nodes") or ()),
            edges=result.get("edges") or {},
            scores=record.get("scores"),
            status=status,
            run_dir=run_dir,
            seed=record.get("seed"),
            fallback=record.get("fallback"),
            runtime_s=result.get("runtime_s", 0.0),
            usage=usage.get("total", usage),
            health=health_of(record.get("health")),
            record=dict(record),
            rows=rows,
        )

    def _headline(self) -> list[tuple[str, Any]]:
        scores = self.scores or {}
        picked = [(k, scores[k]) for k in ("shd", "nhd", "f1") if k in scores]
        counts = [(k, len(self.edges.get(k) or ())) for k in ("directed", "undirected")]
        facts: list[tuple[str, Any]] = [
            ("method", self.method),
            ("dataset", self.dataset),
            ("status", self.status),
        ]
        if self.fallback:
            facts.append(("fallback", self.fallback.get("algorithm")))
        return [*facts, *picked, *counts, ("run_dir", self.run_dir)]

    def _figure(self) -> Path | None:
        return first_figure(self.run_dir, ("graphs",))


def discover(
    data: str | Path | pd.DataFrame | None = None,
    method: str = "pc",
    *,
    dataset: str | None = None,
    truth: Any = None,
    params: Mapping[str, Any] | Sequence[str] | None = None,
    require: Iterable[Any] | None = None,
    forbid: Iterable[Any] | None = None,
    knowledge: Any = None,
    model: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    seed: int | None = None,
    runs_dir: str | Path | None = None,
    config: str | Path | None = None,
    resume: Resume = None,
    retry_failed: bool = False,
    explicit: Iterable[str] | None = None,
) -> DiscoveryResult:
    """Recover a causal graph from ``data`` with ``method`` and score it against the
    truth when one is known; writes the run directory ``silicolab discover`` writes.

    ``data``: a bundled dataset's name (``"auto_mpg"``, ``"dwd_climate"``, ``"sachs"``;
    or ``dataset=``), a numeric CSV file, or a pandas DataFrame. ``truth``: for your own
    data, the true graph as ``"cause->effect"`` strings, ``(cause, effect)`` pairs, a
    graph or an adjacency DataFrame (``A.loc[cause, effect] = 1``), or a ``cause,effect``
    CSV file. ``params``: the method's parameters (``{"alpha": 0.01}``). ``require`` /
    ``forbid``: edges the graph must / must not have; ``knowledge`` a
    :class:`~silicolab.discovery.Knowledge` (its tiers too). ``model``, ``base_url``,
    ``api_key_env``: the scientist model of the LLM methods (default: the configured
    one). ``seed`` seeds the methods that sample. ``resume`` (``True`` or a run
    directory) reruns an unfinished run with its stored settings (a DataFrame run needs
    its ``data`` again); ``retry_failed`` also asks the model anew. ``explicit`` names
    the options the caller chose (default: those not at their defaults). A degraded run
    is returned (``status == "degraded"``).
    """
    settings, frame = _settings(data, method, dataset, truth, params, require, forbid, knowledge)
    settings.update(model=model, base_url=base_url, api_key_env=api_key_env)
    if explicit is None:
        defaults = {"method": "pc", "param": [], "require": [], "forbid": []}
        # a DataFrame is checked against its stored hash when prepared, with a clearer message
        explicit = explicit_of({**settings, "seed": seed}, defaults) - {"frame", "truth"}
    cfg = None if config is None else Path(config)
    opened = open_checked_run(
        runs_root(runs_dir, config), "discover", settings, seed=seed, resume=resume,
        explicit=explicit, prepare=lambda s, seed: prepare(s, seed, cfg, frame),
        slug=lambda job: f"{job.ds.name}-{job.method}", retry_failed=retry_failed,
        failed=_result_failed,
    )  # fmt: skip
    job, run, seed = opened.job, opened.run, opened.seed
    with run:
        result, record, health = _discover(job, seed, run)
        status = finish_run(run, record, report(job.ds, result, record, health), health)
    return DiscoveryResult.of_record(
        run.read_record() or record,
        run_dir=shown_run_dir(run.path),
        status=status,
        method=opened.settings["method"],
        rows=len(job.ds.data),
    )


def _settings(
    data: Any,
    method: str,
    dataset: str | None,
    truth: Any,
    params: Any,
    require: Any,
    forbid: Any,
    knowledge: Any,
) -> tuple[dict[str, Any], pd.DataFrame | None]:
    """The run's settings in the command line's form, and the DataFrame when given."""
    frame = data if isinstance(data, pd.DataFrame) else None
    path = None
    if isinstance(data, str) and dataset is None and not _file_like(data):
        _check_dataset_name(data)
        dataset, data = data, None  # a bundled dataset's name
    elif data is not None and frame is None:
        path = str(data)
    named_file = isinstance(truth, Path) or (isinstance(truth, str) and _file_like(truth))
    truth_path = str(truth) if named_file else None
    if frame is not None and truth_path is not None:  # a DataFrame's truth is stored as edges
        from silicolab.discovery.datasets import _read_truth

        truth, truth_path = _read_truth(Path(truth_path), [str(c) for c in frame.columns]), None
    settings: dict[str, Any] = {
        "method": method,
        "dataset": dataset,
        "data": path,
        "truth_edges": truth_path,
        "param": param_items(params),
        "require": edge_items(getattr(knowledge, "required", None), "knowledge")
        + edge_items(require, "require"),
        "forbid": edge_items(getattr(knowledge, "forbidden", None), "knowledge")
        + edge_items(forbid, "forbid"),
    }
    if getattr(knowledge, "tiers", None):
        settings["tiers"] = [list(t) for t in knowledge.tiers]
    if frame is not None:
        settings["frame"] = frame_fingerprint(frame)
    if truth is not None and truth_path is None:
        if dataset is not None:
            raise InputError(
                f"truth= is for your own data; the dataset {dataset!r} comes with its truth",
                params=("truth",),
            )
        settings["truth"] = truth_edges_of(truth)
    return settings, frame


def _check_dataset_name(name: str) -> None:
    """Refuse a ``data=`` string that is neither a bundled dataset nor a CSV file's name."""
    from silicolab.discovery import datasets

    if name not in datasets.names():
        raise InputError(
            f"data={name!r} is neither a bundled dataset ({', '.join(datasets.names())}) nor "
            "a CSV file that exists; give one of those names, a CSV path or a DataFrame",
            params=("data",),
        )


def _file_like(text: str) -> bool:
    return Path(text).is_file() or text.lower().endswith(".csv")


def _result_failed(event: Mapping[str, Any]) -> bool:
    """``retry_failed``'s rule for the result unit: the method raised, or its debates
    were degraded (the judge's every decision failed on some question)."""
    return event.get("status") == "error" or bool((event.get("data") or {}).get("degraded"))


def _discover(job: Job, seed: int | None, run: Any) -> tuple[Any, dict[str, Any], Any]:
    """Run the job's method on its data: the result, the run's record and its health;
    the result is the run's one unit event (a retried one asks the model anew).

    A coding agent that failed every attempt and fell back to a statistical algorithm is
    never scored as the method: ``scores`` is then ``None`` and ``fallback`` names the
    algorithm and holds its scores (its health makes the run degraded)."""
    from silicolab.discovery import registry
    from silicolab.discovery.health import discovery_health
    from silicolab.discovery.mac.coding import fallback_of
    from silicolab.discovery.scoring import score
    from silicolab.runtime.progress import heartbeat

    ds = job.ds
    fresh = fresh_calls(RESULT in run.retried_units())  # a retry: not the cached replies
    with fresh, heartbeat(f"discover {job.method} on {ds.name}"):
        result = registry.discover(ds.data, job.method, knowledge=job.knowledge, **job.kwargs)
    scores = score(result, ds.truth) if ds.truth is not None else None
    health = discovery_health(result.raw)
    fell_back = fallback_of(result)
    fallback = None
    if fell_back is not None:
        fallback = {"algorithm": fell_back[0], "graph_is_fallback": fell_back[1]}
        if fell_back[1]:
            fallback["scores"], scores = scores, None
    record = {
        "dataset": ds.name,
        "seed": seed,
        "params": kwargs_for_record(job.kwargs),
        "result": result.to_dict(),
        "scores": scores,
        "fallback": fallback,
        "health": health.to_dict() if health else None,
        "truth": None if ds.truth is None else {"edges": [list(e) for e in ds.truth.edges]},
    }
    raw = result.raw if isinstance(result.raw, dict) else {}
    if raw.get("debates"):  # the MAC meta-debate's transcript, for the report
        record["debates"] = json.loads(dumps(raw["debates"]))
    degraded = bool(health is not None and health.degraded)
    run.append_event(RESULT, {"edges": record["result"]["edges"], "scores": scores,
                              "degraded": degraded})  # fmt: skip
    return result, record, health


def kwargs_for_record(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Parameters as plain data (a model object is recorded by its spec)."""
    return {
        k: (getattr(v, "spec", v) if k == "model" else v)
        for k, v in kwargs.items()
        if k not in ("description", "variables")
    }


def edge_lines(edges: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """``(cause, mark, effect)`` per edge: ``->`` directed, ``--`` undirected, ``<->``."""
    return [(a, mark, b) for kind, mark in _MARKS.items() for a, b in edges.get(kind, ())]


def scored(record: Mapping[str, Any], method: str) -> tuple[str, dict[str, Any] | None, str]:
    """What the edges and scores of a discover run are: a warning line when they are a
    fallback's (else ``""``), the scores shown and their heading."""
    fallback = record.get("fallback")
    if not fallback:
        return "", record["scores"], "against the ground truth"
    name = fallback["algorithm"]
    if not fallback["graph_is_fallback"]:
        warning = f"DEGRADED: every coding attempt failed; the evidence came from {name}"
        return warning, record["scores"], "against the ground truth"
    warning = (
        f"FALLBACK: every coding attempt failed; these edges and scores are the statistical "
        f"{name}'s, not {method}'s"
    )
    return warning, fallback.get("scores"), f"the fallback {name} (not {method}) against the truth"


def report(ds: Any, result: Any, record: dict[str, Any], health: Any = None) -> str:
    """The run's ``report.md``."""
    warning, scores, heading = scored(record, result.method)
    lines = [f"# {result.method} on {ds.name}", "", ds.description, ""]
    lines += [f"**{warning}**", ""] if warning else []
    lines += ["## Edges", ""]
    edges = result.to_dict()["edges"]
    lines += [f"- {a} {mark} {b}" for a, mark, b in edge_lines(edges)] or ["(none)"]
    if scores:
        lines += ["", f"## {heading.capitalize()}", "", "| metric | value |", "|---|---:|"]
        lines += [
            f"| {k} | {v:.3f} |" if isinstance(v, float) else f"| {k} | {v} |"
            for k, v in scores.items()
        ]
    lines += ["", f"Runtime: {result.runtime_s:.3f} s", ""]
    if health is not None:
        lines += [f"Model health: {health.summary_line()}", ""]
    lines += [f"Note: {n}" for n in result.notes]
    if result.usage:
        lines += ["", "## Language-model usage", "", "```", dumps(result.usage, indent=2), "```"]
    return "\n".join(lines) + "\n"


__all__ = ["FRAME_NAME", "DiscoveryResult", "discover", "edge_lines", "scored"]
