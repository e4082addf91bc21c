"""CausaLab suites: the released graph configs (package data) and their JSONL schema.

One JSONL line of a suite is one *graph config* (:class:`GraphConfig`): the crystal
properties (nodes), the hidden DAG, the coefficients and the intervention budget, plus
optional variant blocks (hidden disturbance H, frequency-as-parent, Golden bootstrap chain,
hard-quadratic presets). The released suites ship unchanged as package data (Apache-2.0,
see ``data/README.md`` and ``data/LICENSE-Apache-2.0.txt``). Malformed lines are reported
with the file, the line number and what is wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any, Literal

from silicolab.core.errors import InputError
from silicolab.envs.causalab.graph_config import (
    DISPLAY_NAMES,
    PROPERTY_POOL,
    SHORT_NAMES,
    TARGET,
    GoldenStep,
    GraphConfig,
    HiddenSpec,
    Number,
    short_name,
)

_LINEAR_TERM = re.compile(r"^(coeff[1]?_\w+)\s*\*\s*(\w+)$")
_SQUARE_TERM = re.compile(r"^(coeff2_\w+)\s*\*\s*\(\s*(\w+)\s*\^\s*2\s*\)$")
_BASE_TERM = re.compile(r"^base_\w+$")


def suite_names() -> tuple[str, ...]:
    """The names of the bundled suites (``"3nodes"`` .. ``"7nodes"`` and the variants)."""
    folder = resources.files("silicolab.envs.causalab") / "data"
    return tuple(
        sorted(p.name[: -len(".jsonl")] for p in folder.iterdir() if p.name.endswith(".jsonl"))
    )


def load_suite(name: str) -> list[GraphConfig]:
    """The 50 graph configs of a bundled suite, e.g. ``load_suite("4nodes")``.

    Raises :class:`InputError` for an unknown name (listing the known ones) or a malformed
    line (naming the file, the line number and the problem).
    """
    names = suite_names()
    if name not in names:
        raise InputError(f"unknown CausaLab suite {name!r}; bundled suites are {list(names)}")
    return list(_bundled(name))


@cache
def _bundled(name: str) -> tuple[GraphConfig, ...]:
    # cached: a benchmark makes one lab per (graph, seed) and the configs memoise their plans
    path = resources.files("silicolab.envs.causalab") / "data" / f"{name}.jsonl"
    text = path.read_text(encoding="utf-8")
    return tuple(parse_suite(text, suite=name, source=f"{name}.jsonl"))


def load_suite_file(path: str, *, suite: str | None = None) -> list[GraphConfig]:
    """Graph configs from any JSONL file in the released schema (e.g. a generated suite)."""
    from pathlib import Path

    from silicolab.core.files import read_user_text

    file = Path(path)
    text = read_user_text(file, what="CausaLab suite file")
    return parse_suite(text, suite=suite or file.stem, source=str(file))


def parse_suite(text: str, *, suite: str, source: str) -> list[GraphConfig]:
    """Parse JSONL ``text``; every error names ``source`` and the 1-based line number."""
    configs = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{source}, line {number}: not valid JSON ({exc.msg})") from exc
        try:
            configs.append(config_from_dict(data, suite=suite))
        except InputError as exc:
            raise InputError(f"{source}, line {number}: {exc}") from exc
    if not configs:
        raise InputError(f"{source}: the suite file holds no graph configs")
    return configs


def _number(value: Any, what: str) -> Number:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"{what} must be a number; got {value!r}")
    return value


def _parse_terms(
    node: str, computation: str, params: Mapping[str, Any]
) -> list[tuple[str, str, Number]]:
    """``[(kind, parent, coefficient)]`` with kind ``"w"`` (linear) or ``"u"`` (squared)."""
    terms = []
    for raw_term in computation.split("+"):
        term = raw_term.strip()
        if _BASE_TERM.match(term):
            continue
        match = _SQUARE_TERM.match(term) or _LINEAR_TERM.match(term)
        if match is None:
            raise InputError(
                f"node {node!r}: cannot read the term {term!r} of its computation; terms are "
                "'base_<node>', 'coeff_<p>_<c> * <parent>' or 'coeff2_<p>_<c> * (<parent> ^ 2)'"
            )
        key, parent = match.groups()
        if key not in params:
            raise InputError(f"node {node!r}: parameter {key!r} is missing from params")
        kind = "u" if match.re is _SQUARE_TERM else "w"
        terms.append((kind, parent, _number(params[key], f"parameter {key!r}")))
    return terms


def config_from_dict(data: Any, *, suite: str) -> GraphConfig:
    """Build a :class:`GraphConfig` from one record in the released JSON schema (spec §3.4)."""
    if not isinstance(data, dict):
        raise InputError("a graph config must be a JSON object")
    for key in ("graph_id", "nodes", "edges", "params", "budget"):
        if key not in data:
            raise InputError(f"the key {key!r} is missing")
    raw_nodes, params = data["nodes"], data["params"]
    if not isinstance(raw_nodes, dict) or TARGET not in raw_nodes:
        raise InputError(f"'nodes' must be an object that includes {TARGET!r}")
    if not isinstance(params, dict):
        raise InputError("'params' must be an object")
    nodes = tuple(raw_nodes)
    try:
        edges = tuple((str(e["from"]), str(e["to"])) for e in data["edges"])
    except (KeyError, TypeError) as exc:
        raise InputError("every edge must be an object with 'from' and 'to'") from exc
    for cause, effect in edges:
        for end in (cause, effect):
            if end not in raw_nodes:
                raise InputError(f"edge {cause} -> {effect} names unknown node {end!r}")
    family: Literal["linear", "quadratic"] = (
        "quadratic" if data.get("equation_family") == "quadratic" else "linear"
    )
    weights: dict[tuple[str, str], Number] = {}
    quad: dict[tuple[str, str], Number] = {}
    for node, spec in raw_nodes.items():
        if not isinstance(spec, dict):
            raise InputError(f"node {node!r} must be an object")
        computation = spec.get("computation")
        if not computation:
            continue
        for kind, parent, coefficient in _parse_terms(node, str(computation), params):
            (quad if kind == "u" else weights)[(parent, node)] = coefficient
        for parent, child in list(quad):
            weights.setdefault((parent, child), 0)
    if set(weights) != set(edges):
        raise InputError(
            f"the computations name the edges {sorted(weights)} but 'edges' lists {sorted(edges)}"
        )
    if "base_freq" not in params:
        raise InputError("parameter 'base_freq' is missing")
    controllable = tuple(
        n for n, s in raw_nodes.items() if s.get("is_controllable") and n != TARGET
    )
    golden_obs, golden_chain = _golden(data.get("bootstrap_past_data"))
    budget = data["budget"]
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise InputError(f"'budget' must be a non-negative integer; got {budget!r}")
    config = GraphConfig(
        graph_id=str(data["graph_id"]),
        suite=suite,
        nodes=nodes,
        controllable=controllable,
        display_names={n: str(s.get("display_name", n)) for n, s in raw_nodes.items()},
        edges=edges,
        family=family,
        weights=weights,
        quad_weights=quad,
        base_freq=_number(params["base_freq"], "parameter 'base_freq'"),
        budget=0 if "bootstrap_past_data" in data else budget,
        hidden=_hidden(data.get("hidden_variable"), nodes),
        frequency_can_be_parent=bool(data.get("frequency_can_be_parent", False)),
        golden_chain=golden_chain,
        raw=data,
        golden_observations=golden_obs,
        presets=_presets(data.get("quadratic_metadata"), controllable),
        description=str(data.get("description", "")),
    )
    try:
        config.graph  # noqa: B018 - builds the DAG now so a cycle is reported at load time
    except InputError as exc:
        raise InputError(f"the edges do not form a DAG: {exc}") from exc
    return config


def _hidden(block: Any, nodes: tuple[str, ...]) -> HiddenSpec | None:
    if not block or not block.get("enabled", True):
        return None
    affected = tuple(block.get("affected_nodes", ()))
    for name in affected:
        if name not in nodes:
            raise InputError(f"hidden_variable affects unknown node {name!r}")
    space = tuple(float(_number(v, "hidden value")) for v in block.get("value_space", ()))
    if not space:
        raise InputError("hidden_variable.value_space must list at least one value")
    return HiddenSpec(
        affected_nodes=affected,
        value_space=space,
        edge_weight=float(_number(block.get("edge_weight", 1), "hidden edge_weight")),
        initial_value=float(_number(block.get("initial_value", 0), "hidden initial_value")),
    )


def _golden(entries: Any) -> tuple[tuple[GoldenStep, ...], tuple[GoldenStep, ...]]:
    if not entries:
        return (), ()
    observations, chain = [], []
    for entry in entries:
        try:
            props = {str(k): v for k, v in entry["props"].items()}
            freq = entry["freq"]
            step = entry.get("intervention")
        except (KeyError, TypeError, AttributeError) as exc:
            raise InputError("every bootstrap_past_data entry needs 'props' and 'freq'") from exc
        if step:
            chain.append(GoldenStep(step["target_prop"], step["target_value"], props, freq))
        else:
            observations.append(GoldenStep(None, None, props, freq))
    return tuple(observations), tuple(chain)


def _presets(meta: Any, controllable: tuple[str, ...]) -> dict[str, Any] | None:
    if not meta:
        return None
    try:
        presets = {
            "observations": [dict(p) for p in meta["observation_presets"]],
            "manipulator": dict(meta["property_manipulator"]),
            "reactor": dict(meta["reactor"]),
        }
    except (KeyError, TypeError) as exc:
        raise InputError(
            "quadratic_metadata needs observation_presets, property_manipulator and reactor"
        ) from exc
    for vector in [*presets["observations"], presets["manipulator"], presets["reactor"]]:
        missing = set(controllable) - set(vector)
        if missing:
            raise InputError(f"a quadratic_metadata preset has no base for {sorted(missing)}")
    return presets


__all__ = [
    "DISPLAY_NAMES",
    "PROPERTY_POOL",
    "SHORT_NAMES",
    "TARGET",
    "GoldenStep",
    "GraphConfig",
    "HiddenSpec",
    "config_from_dict",
    "load_suite",
    "load_suite_file",
    "parse_suite",
    "short_name",
    "suite_names",
]
