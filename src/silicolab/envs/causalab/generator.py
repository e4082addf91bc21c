"""New CausaLab suites with the statistics of the released ones (spec §3.5-§3.7).

The released suites ship without their generator; :func:`silicolab.scm.random_dag` and
:func:`silicolab.scm.random_scm` with :meth:`RandomSCMSpec.causalab` reproduce its
distribution (edge count uniform on ``k-1 .. min(C(k,2), 2k)``, the target a sink with a
first parent chosen before the other edges, the others added as random ordered pairs that
keep the graph acyclic, which matches the released roots, v-structures and MEC sizes
better than a random node order does; weights in {1, 2, 3}, integer ``base_freq`` in
[15, 25]). This module draws the property names, writes each graph as a record in the
released JSON schema (so generated suites can be saved with :func:`write_suite` and loaded
back with :func:`~silicolab.envs.causalab.suite.load_suite_file`) and adds the variant
blocks: hidden disturbance H, frequency as a parent, hard-quadratic presets, and Golden
bootstrap chains that cycle through the properties alphabetically until every property was
intervened on (which drives the interventional MEC to 1; checked for every chain).

Every draw comes from ``seed`` and the graph's identity (suite name, index).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from silicolab.core.errors import InputError
from silicolab.core.seeding import child_seed, rng
from silicolab.envs.causalab.suite import (
    DISPLAY_NAMES,
    PROPERTY_POOL,
    TARGET,
    GraphConfig,
    config_from_dict,
    short_name,
)
from silicolab.scm import (
    LinearMechanism,
    QuadraticMechanism,
    RandomSCMSpec,
    imec_size,
    random_dag,
    random_scm,
)

Family = Literal["linear", "quadratic", "quadratic_hard", "quadratic_easy"]
GOLDEN_STEPS = 6
_SPEC_FAMILY = {
    "linear": "linear",
    "quadratic": "quadratic_hard",
    "quadratic_hard": "quadratic_hard",
    "quadratic_easy": "quadratic_easy",
}


def suite_name(
    k: int,
    *,
    family: Family = "linear",
    seed: int = 0,
    hidden: bool | int = False,
    frequency_can_be_parent: bool = False,
    golden: bool = False,
) -> str:
    """The default name of a generated suite, e.g. ``"4nodes_hidden_n1_gen0"``."""
    parts = [f"{k}nodes"]
    if family != "linear":
        parts.append("quad_easy" if family == "quadratic_easy" else "quad_hard")
    if hidden:
        parts.append(f"hidden_n{int(hidden)}")
    if frequency_can_be_parent:
        parts.append("freqparent")
    if golden:
        parts.append("golden")
    return "_".join(parts) + f"_gen{seed}"


def generate_suite(k: int, n: int, **options: Any) -> list[GraphConfig]:
    """``n`` new graph configs with ``k`` nodes (target included): graphs ``0..n-1`` of
    :func:`generate_config` with the same ``options``.

    ``family``: ``"linear"``, ``"quadratic"`` (= the paper's hard quadratic) or
    ``"quadratic_easy"``. ``hidden``: ``True`` or the number of nodes H affects (a direct
    parent of the target first); ``hidden_hits_target`` puts the target first in that list
    (the "freqnode" suites). ``golden`` adds a bootstrap chain and sets the budget to 0.
    ``seed``, ``frequency_can_be_parent``, ``hidden_values`` and ``suite`` (the name,
    default :func:`suite_name`) as in :func:`generate_config`.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise InputError(f"n must be a non-negative integer; got {n!r}")
    return [generate_config(k, index=i, **options) for i in range(n)]


def generate_config(
    k: int,
    *,
    index: int = 0,
    seed: int = 0,
    family: Family = "linear",
    hidden: bool | int = False,
    frequency_can_be_parent: bool = False,
    golden: bool = False,
    hidden_values: tuple[float, ...] = (-5.0, 0.0, 5.0),
    hidden_hits_target: bool = False,
    suite: str | None = None,
) -> GraphConfig:
    """Graph ``index`` of a generated suite (see :func:`generate_suite`)."""
    if isinstance(k, bool) or not isinstance(k, int) or not 2 <= k <= len(PROPERTY_POOL) + 1:
        raise InputError(f"k must be an integer from 2 to {len(PROPERTY_POOL) + 1}; got {k!r}")
    if family not in _SPEC_FAMILY:
        raise InputError(f"unknown family {family!r}; use {sorted(_SPEC_FAMILY)}")
    n_hidden = int(hidden)
    if not 0 <= n_hidden <= k - 1 + hidden_hits_target:
        raise InputError(f"hidden must affect between 0 and {k - 1} nodes; got {hidden!r}")
    name = suite or suite_name(
        k,
        family=family,
        seed=seed,
        hidden=hidden,
        frequency_can_be_parent=frequency_can_be_parent,
        golden=golden,
    )
    gen = rng(seed, "causalab-generate", name, index)
    props = [PROPERTY_POOL[i] for i in gen.choice(len(PROPERTY_POOL), k - 1, replace=False)]
    spec = RandomSCMSpec.causalab(
        k,
        family=_SPEC_FAMILY[family],  # type: ignore[arg-type]
        target=TARGET,
        names=tuple(props),
        target_can_be_parent=frequency_can_be_parent,
    )
    graph_seed = child_seed(seed, "causalab-graph", name, index)
    graph = random_dag(spec, seed=graph_seed)
    scm = random_scm(spec, seed=graph_seed)
    # the released files list one edge into the target first, then the rest in random order
    into = [e for e in graph.edges if e[1] == TARGET]
    first = into[int(gen.integers(len(into)))]
    rest = [e for e in graph.edges if e != first]
    edges = [first] + [rest[i] for i in gen.permutation(len(rest))]
    quadratic = family != "linear"
    params, nodes = _equations([TARGET, *props], edges, scm, gen, quadratic)
    raw: dict[str, Any] = {
        "graph_id": f"{name}_{index}",
        "description": f"Causal graph with {k} nodes and {len(edges)} edges",
        "nodes": nodes,
        "edges": [{"from": a, "to": b} for a, b in edges],
        "params": params,
        "budget": 4 * (k - 1),
    }
    if quadratic:
        raw["equation_family"] = "quadratic"
        if family != "quadratic_easy":
            raw["quadratic_mode"] = "hard"
            raw["quadratic_metadata"] = _quadratic_metadata(props, edges, params, gen)
    if frequency_can_be_parent:
        raw["frequency_can_be_parent"] = True
        raw.setdefault("equation_family", "linear")
    if n_hidden:
        raw["hidden_variable"] = _hidden_block(
            props, edges, n_hidden, hidden_values, hidden_hits_target, gen
        )
    config = config_from_dict(raw, suite=name)
    if golden:
        raw["bootstrap_past_data"] = _golden_chain(config, gen)
        config = config_from_dict(raw, suite=name)
    return config


def _equations(
    nodes_order: list[str], edges: list[tuple[str, str]], scm: Any, gen: Any, quadratic: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The released files' ``params`` and ``nodes`` blocks for the SCM's mechanisms (base
    values drawn from ``gen``, in node order)."""
    params: dict[str, Any] = {}
    nodes: dict[str, Any] = {}
    for node in nodes_order:
        parents = [p for p, c in edges if c == node]
        mechanism = scm.mechanism(node)
        base_key = "base_freq" if node == TARGET else f"base_{node}"
        if node == TARGET:
            params[base_key] = float(mechanism.intercept)
        else:
            params[base_key] = float(gen.integers(15, 26)) if parents else 20.0
        terms = [base_key]
        for parent in parents:
            stem = f"{short_name(parent)}_{short_name(node)}"
            if quadratic:
                assert isinstance(mechanism, QuadraticMechanism)
                params[f"coeff2_{stem}"] = mechanism.quadratic[parent]
                params[f"coeff1_{stem}"] = round(mechanism.linear[parent], 6)
                terms += [f"coeff2_{stem} * ({parent} ^ 2)", f"coeff1_{stem} * {parent}"]
            else:
                assert isinstance(mechanism, LinearMechanism)
                weight = mechanism.weights[parent]
                params[f"coeff_{stem}"] = int(weight) if float(weight).is_integer() else weight
                terms.append(f"coeff_{stem} * {parent}")
        nodes[node] = {
            "is_controllable": node != TARGET,
            "observable": True,
            "property_name": node,
            "display_name": DISPLAY_NAMES[node],
            "base_value": {"type": "uniform", "min": 15.0, "max": 45.0},
        }
        if parents:
            nodes[node]["computation"] = " + ".join(terms)
    return params, nodes


def _quadratic_metadata(
    props: list[str], edges: list[tuple[str, str]], params: dict[str, Any], gen: Any
) -> dict[str, Any]:
    def preset() -> dict[str, float]:
        return {p: float(gen.integers(0, 101)) for p in props}

    axes = {}
    for parent, child in edges:
        stem = f"{short_name(parent)}_{short_name(child)}"
        u, w = params[f"coeff2_{stem}"], params[f"coeff1_{stem}"]
        axes[f"{parent}->{child}"] = round(-w / (2 * u), 6)
    return {
        "controllable_node_order": list(props),
        "edge_axis_by_name": axes,
        "observation_presets": [preset(), preset()],
        "property_manipulator": preset(),
        "reactor": preset(),
    }


def _hidden_block(
    props: list[str],
    edges: list[tuple[str, str]],
    count: int,
    values: tuple[float, ...],
    hits_target: bool,
    gen: Any,
) -> dict[str, Any]:
    freq_parents = [p for p in props if (p, TARGET) in edges]
    others = [p for p in props if p not in freq_parents]
    ranked = [freq_parents[i] for i in gen.permutation(len(freq_parents))]
    ranked += [others[i] for i in gen.permutation(len(others))]
    affected = [TARGET, *ranked][:count] if hits_target else ranked[:count]
    return {
        "enabled": True,
        "name": "h",
        "observable": False,
        "is_controllable": False,
        "initial_value": 0,
        "value_space": [float(v) for v in values],
        "edge_weight": 1,
        "affected_nodes": affected,
        "edges": [{"from": "h", "to": node, "weight": 1} for node in affected],
    }


def _golden_chain(config: GraphConfig, gen: Any) -> list[dict[str, Any]]:
    """Two observations with U(15, 45) bases, then interventions on the properties in
    alphabetical order (integer targets 0..100) applied to the first one's crystal."""

    def entry(i: int, values: dict[str, Any], step: tuple[str, float] | None) -> dict[str, Any]:
        record: dict[str, Any] = {
            "id": f"{i}/bootstrap",
            "props": {n: float(v) for n, v in values.items() if n != TARGET},
            "freq": float(values[TARGET]),
        }
        if step is not None:
            record["intervention"] = {"target_prop": step[0], "target_value": step[1]}
        return record

    starts = [
        {n: round(float(gen.uniform(15, 45)), 2) for n in config.controllable} for _ in range(2)
    ]
    entries = [entry(i, config.evaluate(b), None) for i, b in enumerate(starts)]
    ordered = sorted(config.controllable)
    length = max(GOLDEN_STEPS, len(ordered))
    bases = dict(starts[0])
    targets = []
    for i in range(length):
        prop, value = ordered[i % len(ordered)], float(gen.integers(0, 101))
        bases[prop] = config.set_now(bases, prop, value)
        targets.append(prop)
        entries.append(entry(len(entries), config.evaluate(bases), (prop, value)))
    if imec_size(config.graph, targets) != 1:  # cannot happen: every property is a target
        raise AssertionError(f"the Golden chain of {config.graph_id} leaves IMEC > 1")
    return entries


def write_suite(configs: list[GraphConfig], path: str | Path) -> Path:
    """Write configs as JSONL in the released schema (one ``raw`` record per line)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(target.suffix + ".tmp")
    tmp.write_text("".join(json.dumps(c.raw) + "\n" for c in configs), encoding="utf-8")
    tmp.replace(target)
    return target
