"""``silicolab discover``: one causal-discovery method on a bundled dataset or a CSV."""

from __future__ import annotations

import inspect
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from silicolab.cli.flow import (
    emit,
    open_checked_run,
    runs_root,
    shown_run_dir,
    write_html_report,
)
from silicolab.core.config import load_settings
from silicolab.core.errors import InputError
from silicolab.core.files import dumps
from silicolab.core.fresh import fresh_calls

#: The unit key of the discovery's result in the run's events.jsonl.
RESULT = "result"
_EDGE = re.compile(r"^\s*([^-<>\s][^<>]*?)\s*->\s*([^-<>\s].*?)\s*$")


def parse_params(items: list[str]) -> dict[str, Any]:
    """``["alpha=0.01", "stable=false"]`` -> ``{"alpha": 0.01, "stable": False}`` (JSON
    values where they parse, strings otherwise)."""
    params: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--param {item!r} must look like name=value, e.g. --param alpha=0.01")
        try:
            params[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            params[key.strip()] = value
    return params


def parse_edges(items: list[str], flag: str) -> tuple[tuple[str, str], ...]:
    """``["a->b"]`` -> ``(("a", "b"),)``; a clear error for anything else."""
    edges = []
    for item in items:
        match = _EDGE.match(item)
        if not match:
            raise InputError(
                f"{flag} {item!r} must look like cause->effect, e.g. {flag} Weight->Mpg"
            )
        edges.append((match.group(1), match.group(2)))
    return tuple(edges)


def scientist_model(
    model: str | None, base_url: str | None, api_key_env: str | None, config: Path | None
) -> Any:
    """The scientist-role model (the one discovery methods play), with the command-line
    overrides that were given."""
    from silicolab.llm.roles import role_model

    return role_model(
        "scientist", load_settings(config), spec=model, base_url=base_url, api_key_env=api_key_env
    )


def _text(path: Path | None) -> str | None:
    return None if path is None else str(path)


def run_discover(
    *,
    dataset: str | None,
    data: Path | None,
    truth_edges: Path | None,
    method: str,
    params: list[str],
    require: list[str],
    forbid: list[str],
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    seed: int | None = None,
    resume: bool = False,
    explicit: set[str] | frozenset[str] = frozenset(),
    runs_dir: Path | None,
    config: Path | None,
    json_out: bool,
    retry_failed: bool = False,
) -> dict[str, Any]:
    """Run the method, score it when a truth is known, write a run directory, print.

    Every input is checked before the run directory is created. ``resume`` reopens the
    latest unfinished discover run and runs it again with its stored settings (an LLM
    method's answers already received come from the cache); options in ``explicit``
    that contradict the stored settings are refused. ``retry_failed`` resumes too and,
    when the run was degraded, asks the model anew instead of the cache.
    """
    settings: dict[str, Any] = {
        "method": method,
        "dataset": dataset,
        "data": _text(data),
        "truth_edges": _text(truth_edges),
        "param": list(params),
        "require": list(require),
        "forbid": list(forbid),
        "model": model,
        "base_url": base_url,
        "api_key_env": api_key_env,
    }
    opened = open_checked_run(
        runs_root(runs_dir, config),
        "discover",
        settings,
        seed=seed,
        resume=resume,
        explicit=explicit,
        prepare=lambda s, seed: _prepare(s, seed, config),
        slug=lambda job: f"{job.ds.name}-{method}",
        retry_failed=retry_failed,
        failed=_result_failed,
    )
    job, run, seed = opened.job, opened.run, opened.seed
    ds, method = job.ds, opened.settings["method"]
    with run:
        result, record, health = _discover(job, seed, run)
        run.write_record(record)
        run.write_report(_report(ds, result, record, health))
        status = run.finish(health)
        write_html_report(run)
    out = {
        "run_dir": str(shown_run_dir(run.path)),
        "status": status,
        "dataset": ds.name,
        "method": method,
        "seed": seed,
        "edges": record["result"].get("edges"),
        "scores": record["scores"],
        "fallback": record["fallback"],
        "runtime_s": result.runtime_s,
        "usage": result.usage.get("total", result.usage),
        "health": record["health"],
    }
    show = lambda: _print(ds, result, record, shown_run_dir(run.path), health)  # noqa: E731
    emit(out, json_out=json_out, show=show, status=status, health=health)
    return out


def _result_failed(event: dict[str, Any]) -> bool:
    """``--retry-failed``'s rule for the result unit: the method raised, or its debates
    were degraded (the judge's every decision failed on some question)."""
    return event.get("status") == "error" or bool((event.get("data") or {}).get("degraded"))


def _discover(job: _Job, seed: int | None, run: Any) -> tuple[Any, dict[str, Any], Any]:
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


@dataclass(frozen=True)
class _Job:
    """Everything a discover run needs, checked: the method, dataset, knowledge and the
    method's keyword arguments."""

    method: str
    ds: Any
    knowledge: Any
    kwargs: dict[str, Any]


def _prepare(settings: dict[str, Any], seed: int | None, config: Path | None) -> _Job:
    """Load and check every input of a discover run (no run directory yet)."""
    from silicolab.discovery import datasets, registry
    from silicolab.discovery.knowledge import Knowledge

    dataset, data, method = settings["dataset"], settings["data"], settings["method"]
    if seed is not None and seed < 0:
        raise InputError(f"--seed {seed} must be 0 or more")
    if (dataset is None) == (data is None):
        raise InputError("give exactly one of --dataset NAME or --data PATH.csv")
    truth = settings["truth_edges"]
    ds = datasets.load(dataset) if dataset else datasets.load_csv(data, truth_edges=truth)
    kwargs = parse_params(settings["param"])
    knowledge = None
    if settings["require"] or settings["forbid"]:
        knowledge = Knowledge(
            required=parse_edges(settings["require"], "--require"),
            forbidden=parse_edges(settings["forbid"], "--forbid"),
        )
        knowledge.validate(list(ds.data.columns))
    # An unknown name fails here, listing the available ones.
    takes = inspect.signature(registry.get(method)).parameters
    if seed is not None:
        for name in ("seed", "random_state"):
            if name in takes and name not in kwargs:
                kwargs[name] = seed
    registry.check_params(method, kwargs)
    if method in registry.available("llm"):
        kwargs.update(
            model=scientist_model(
                settings["model"], settings["base_url"], settings["api_key_env"], config
            ),
            description=ds.description,
            variables=ds.variables,
        )
    elif settings["model"]:
        raise InputError(f"--model applies to LLM methods only; {method!r} is statistical")
    return _Job(method, ds, knowledge, kwargs)


def kwargs_for_record(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Parameters as plain data (a model object is recorded by its spec)."""
    return {
        k: (getattr(v, "spec", v) if k == "model" else v)
        for k, v in kwargs.items()
        if k not in ("description", "variables")
    }


def _edge_lines(result: Any) -> list[str]:
    edges = result.to_dict()["edges"]
    marks = {"directed": "->", "undirected": "--", "bidirected": "<->"}
    return [f"{a} {mark} {b}" for kind, mark in marks.items() for a, b in edges.get(kind, ())]


def _scored(record: dict[str, Any], method: str) -> tuple[str, dict[str, Any] | None, str]:
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


def _report(ds: Any, result: Any, record: dict[str, Any], health: Any = None) -> str:
    warning, scores, heading = _scored(record, result.method)
    lines = [f"# {result.method} on {ds.name}", "", ds.description, ""]
    lines += [f"**{warning}**", ""] if warning else []
    lines += ["## Edges", ""]
    lines += [f"- {e}" for e in _edge_lines(result)] or ["(none)"]
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
        lines += [
            "",
            "## Language-model usage",
            "",
            "```",
            dumps(result.usage, indent=2),
            "```",
        ]
    return "\n".join(lines) + "\n"


def _print(ds: Any, result: Any, record: dict[str, Any], path: Path, health: Any = None) -> None:
    from silicolab.report import print_lines, print_table

    warning, scores, heading = _scored(record, result.method)
    print_lines(
        [
            f"{result.method} on {ds.name} ({len(ds.data)} rows, {ds.data.shape[1]} variables) "
            f"in {result.runtime_s:.3f} s",
            *([warning] if warning else []),
        ]
    )
    marks = {"directed": "->", "undirected": "--", "bidirected": "<->"}
    edges = result.to_dict()["edges"]
    rows = [
        {"cause": a, "edge": mark, "effect": b}
        for kind, mark in marks.items()
        for a, b in edges.get(kind, ())
    ]
    print_table(rows, [("cause", "cause"), ("edge", "edge"), ("effect", "effect")], title="edges")
    if scores:
        print_table(
            [{"metric": k, "value": v} for k, v in scores.items()],
            [("metric", "metric"), ("value", "value")],
            title=heading,
        )
    footer = [f"note: {note}" for note in result.notes]
    if health is not None:
        footer.append(f"model health: {health.summary_line()}")
    print_lines([*footer, f"run directory: {path}"])
