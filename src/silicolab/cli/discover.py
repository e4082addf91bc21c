"""``silicolab discover``: one causal-discovery method on a bundled dataset or a CSV."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import typer

from silicolab.core.config import load_settings
from silicolab.core.errors import InputError

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


def llm_model(
    model: str | None, base_url: str | None, api_key_env: str | None, config: Path | None
) -> Any:
    """The scientist-role model, with command-line overrides."""
    from silicolab.llm.roles import model_for_role

    overrides: dict[str, Any] = {}
    if model:
        overrides["spec"] = model
    if base_url:
        overrides["base_url"] = base_url
    if api_key_env:
        overrides["api_key_env"] = api_key_env
    return model_for_role("scientist", load_settings(config), **overrides)


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
    runs_dir: Path | None,
    config: Path | None,
    json_out: bool,
) -> dict[str, Any]:
    """Run the method, score it when a truth is known, write a run directory, print."""
    from silicolab.discovery import datasets, registry
    from silicolab.discovery.knowledge import Knowledge
    from silicolab.discovery.scoring import score
    from silicolab.runs import Run

    if (dataset is None) == (data is None):
        raise InputError("give exactly one of --dataset NAME or --data PATH.csv")
    ds = datasets.load(dataset) if dataset else datasets.load_csv(data, truth_edges=truth_edges)
    kwargs = parse_params(params)
    knowledge = None
    if require or forbid:
        knowledge = Knowledge(
            required=parse_edges(require, "--require"), forbidden=parse_edges(forbid, "--forbid")
        )
        knowledge.validate(list(ds.data.columns))
    registry.get(method)  # an unknown name fails here, listing the available ones
    if method in registry.available("llm"):
        kwargs.update(
            model=llm_model(model, base_url, api_key_env, config),
            description=ds.description,
            variables=ds.variables,
        )
    elif model:
        raise InputError(f"--model applies to LLM methods only; {method!r} is statistical")
    settings = load_settings(config)
    run = Run.create(
        runs_dir or Path(settings.runs_dir),
        kind="discover",
        slug=f"{ds.name}-{method}",
        config={
            "dataset": ds.name,
            "method": method,
            "params": kwargs_for_record(kwargs),
            "knowledge": None
            if knowledge is None
            else {"required": knowledge.required, "forbidden": knowledge.forbidden},
        },
    )
    with run:
        result = registry.discover(ds.data, method, knowledge=knowledge, **kwargs)
        scores = score(result, ds.truth) if ds.truth is not None else None
        record = {"dataset": ds.name, "result": result.to_dict(), "scores": scores}
        run.write_record(record)
        run.write_report(_report(ds, result, scores))
    out = {
        "run_dir": str(run.path),
        "dataset": ds.name,
        "method": method,
        "edges": record["result"].get("edges"),
        "scores": scores,
        "runtime_s": result.runtime_s,
        "usage": result.usage.get("total", result.usage),
    }
    if json_out:
        typer.echo(json.dumps(out, default=str))
    else:
        _print(ds, result, scores, run.path)
    return out


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


def _report(ds: Any, result: Any, scores: dict[str, Any] | None) -> str:
    lines = [f"# {result.method} on {ds.name}", "", ds.description, "", "## Edges", ""]
    lines += [f"- {e}" for e in _edge_lines(result)] or ["(none)"]
    if scores:
        lines += ["", "## Against the ground truth", "", "| metric | value |", "|---|---:|"]
        lines += [
            f"| {k} | {v:.3f} |" if isinstance(v, float) else f"| {k} | {v} |"
            for k, v in scores.items()
        ]
    lines += ["", f"Runtime: {result.runtime_s:.3f} s", ""]
    lines += [f"Note: {n}" for n in result.notes]
    if result.usage:
        lines += [
            "",
            "## Language-model usage",
            "",
            "```",
            json.dumps(result.usage, indent=2),
            "```",
        ]
    return "\n".join(lines) + "\n"


def _print(ds: Any, result: Any, scores: dict[str, Any] | None, path: Path) -> None:
    from rich.console import Console

    console = Console()
    console.print(
        f"[bold]{result.method}[/bold] on {ds.name} ({len(ds.data)} rows, "
        f"{ds.data.shape[1]} variables) in {result.runtime_s:.3f} s"
    )
    for line in _edge_lines(result):
        console.print(f"  {line}")
    if scores:
        console.print(
            f"SHD {scores['shd']}  NHD {scores['nhd_truncated']}  F1 {scores['f1']:.3f}  "
            f"(precision {scores['precision']:.3f}, recall {scores['recall']:.3f})"
        )
    for note in result.notes:
        console.print(f"note: {note}")
    console.print(f"run directory: {path}")
