"""Random DAGs and random SCMs, including the distribution of CausaLab's released suites.

The graph sampler follows the generator reconstructed in the CausaLab spec (§3.5): a random
node order, an edge count drawn uniformly from a range (CausaLab: ``k-1 .. min(C(k,2),
2k)``) or independent edges at a given density, and an optional *target* node that always
has a parent (CausaLab's ``resonanceFreq``), is a sink unless allowed otherwise, and whose
first incoming edge is listed first. Parameters follow §3.6: integer weights in {1, 2, 3},
an integer target intercept in [15, 25], and per-instance integer bases in [0, 100].

All randomness comes from ``seed`` through :func:`silicolab.core.seeding.rng`.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, model_validator

from silicolab.core.errors import InputError
from silicolab.core.records import SCHEMA_VERSION, model_from_record
from silicolab.core.seeding import rng
from silicolab.scm.graph import CausalGraph, Edge
from silicolab.scm.mechanisms import LinearMechanism, Mechanism, Noise, QuadraticMechanism
from silicolab.scm.model import SCM


class RandomSCMSpec(BaseModel):
    """What a random SCM looks like (graph size, edges, family, coefficient ranges).

    Exactly one of ``n_edges`` (a count or an inclusive ``(low, high)`` range drawn
    uniformly) and ``edge_density`` (each forward pair independently with that probability)
    may be set; with neither, the CausaLab range ``(k-1, min(C(k,2), 2k))`` is used.
    With a count, ``edge_sampling`` says how the edges are placed: ``"order"`` draws a random
    node order and picks forward pairs (every DAG weighted by its number of topological
    orders, which favours many roots and v-structures); ``"pairs"`` adds uniformly drawn
    ordered pairs one at a time, skipping any that repeats, reverses or closes a cycle
    (CausaLab's released suites: their roots, v-structures, target in-degree and MEC sizes).
    Weights are drawn uniformly from the discrete ``weights`` set, or, if ``weight_range``
    is set, uniformly from that interval (with a random sign if ``negative_weights``).
    The quadratic family draws ``u`` from ``quadratic_coefficients`` and, with
    ``vertex_range``, sets the linear term to ``-2 u a`` so the parabola's vertex ``a``
    falls in that range (CausaLab's hard-quadratic suite).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_nodes: int
    n_edges: int | tuple[int, int] | None = None
    edge_density: float | None = None
    names: tuple[str, ...] | None = None
    target: str | None = None
    target_can_be_parent: bool = False
    target_edge_weight: float = 1.0
    edge_sampling: Literal["order", "pairs"] = "order"
    family: Literal["linear", "quadratic"] = "linear"
    weights: tuple[float, ...] = (1.0, 2.0, 3.0)
    weight_range: tuple[float, float] | None = None
    negative_weights: bool = False
    quadratic_coefficients: tuple[float, ...] = (0.008, 0.012, 0.016)
    vertex_range: tuple[float, float] | None = (35.2, 64.9)
    target_intercept: tuple[float, float] = (0.0, 0.0)
    integer_target_intercept: bool = False
    noise: Noise = Noise.normal(0.0, 1.0)
    target_noise: Noise = Noise.normal(0.0, 1.0)
    round_to: int | None = None

    @model_validator(mode="after")
    def _consistent(self) -> RandomSCMSpec:
        k = self.n_nodes
        if k < 2:
            raise ValueError(f"n_nodes must be at least 2; got {k}")
        if self.n_edges is not None and self.edge_density is not None:
            raise ValueError("set n_edges or edge_density, not both")
        low, high = self.edge_range()
        if not 0 <= low <= high <= k * (k - 1) // 2:
            raise ValueError(
                f"edge range ({low}, {high}) is impossible for {k} nodes (0 .. {k * (k - 1) // 2})"
            )
        if self.target is not None and self.edge_density is None and high < 1:
            raise ValueError("a target needs at least one edge")
        if self.edge_density is not None and not 0 <= self.edge_density <= 1:
            raise ValueError(f"edge_density must be in [0, 1]; got {self.edge_density}")
        if self.names is not None and len(self.names) != k - (self.target is not None):
            raise ValueError(
                f"names must list {k - (self.target is not None)} non-target nodes; "
                f"got {len(self.names)}"
            )
        if not self.weights and self.weight_range is None:
            raise ValueError("give weights (a non-empty set) or weight_range")
        return self

    def edge_range(self) -> tuple[int, int]:
        """The inclusive range of the edge count (CausaLab's when ``n_edges`` is unset)."""
        k = self.n_nodes
        if isinstance(self.n_edges, int):
            return self.n_edges, self.n_edges
        if self.n_edges is not None:
            return self.n_edges
        return k - 1, min(k * (k - 1) // 2, 2 * k)

    def node_names(self) -> list[str]:
        """Non-target node names (default ``x1 .. x{k-1}``, or ``x0 ..`` without a target)."""
        if self.names is not None:
            return list(self.names)
        count = self.n_nodes - (self.target is not None)
        start = 1 if self.target is not None else 0
        return [f"x{i}" for i in range(start, start + count)]

    @classmethod
    def causalab(
        cls,
        n_nodes: int,
        *,
        family: Literal["linear", "quadratic_hard", "quadratic_easy"] = "linear",
        target_can_be_parent: bool = False,
        target: str = "y",
        names: tuple[str, ...] | None = None,
    ) -> RandomSCMSpec:
        """The distribution of CausaLab's released suites for ``n_nodes`` (3..7 released).

        Per-instance bases are integers in [0, 100], values are rounded to 2 decimals, and
        edges are added as random ordered pairs (``edge_sampling="pairs"``): the spec's
        random-order sampler (§3.5) gives 7-node graphs with 2.1 roots, 4.1 v-structures and
        a mean MEC of 7.5 against the released 1.68, 2.92 and 16.9, and needs a 0.7
        down-weight on edges into the target that the pair sampler does not.
        """
        options: dict[str, Any] = {
            "n_nodes": n_nodes,
            "names": names,
            "target": target,
            "target_can_be_parent": target_can_be_parent,
            "edge_sampling": "pairs",
            "noise": Noise.integers(0, 100),
            "target_noise": Noise.constant(0.0),
            "round_to": 2,
        }
        if family == "linear":
            options |= {"target_intercept": (15, 25), "integer_target_intercept": True}
        elif family == "quadratic_hard":
            options |= {"family": "quadratic", "target_intercept": (52.7, 190.7)}
        elif family == "quadratic_easy":
            options |= {
                "family": "quadratic",
                "weights": (-0.5, -0.2, 0.2, 0.5),
                "quadratic_coefficients": (0.001, 0.002, 0.005),
                "vertex_range": None,
                "target_intercept": (15, 25),
                "integer_target_intercept": True,
            }
        else:
            raise InputError(
                f"unknown CausaLab family {family!r}; use linear, quadratic_hard or quadratic_easy"
            )
        return cls(**options)

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, **self.model_dump(mode="json")}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RandomSCMSpec:
        return model_from_record(cls, data, "random SCM spec record")


def _spec(spec: RandomSCMSpec | int, options: dict[str, Any]) -> RandomSCMSpec:
    try:
        if isinstance(spec, RandomSCMSpec):
            return RandomSCMSpec.model_validate({**spec.model_dump(), **options})
        return RandomSCMSpec(n_nodes=spec, **options)
    except ValueError as exc:
        raise InputError(f"invalid random SCM settings: {exc}") from exc


def random_dag(
    spec: RandomSCMSpec | int, *, seed: int | None = None, **options: Any
) -> CausalGraph:
    """A random DAG drawn from ``spec`` (or from ``RandomSCMSpec(n_nodes=spec, **options)``).

    Nodes are declared target first, then ``spec.node_names()``; the causal order among
    them is random.
    """
    spec = _spec(spec, options)
    gen = rng(seed, "random-dag")
    names = spec.node_names()
    declared = ([spec.target] if spec.target is not None else []) + names
    order = [names[i] for i in gen.permutation(len(names))]
    if spec.target is not None:
        position = len(order)
        if spec.target_can_be_parent:
            position = int(gen.integers(1, len(order) + 1))
        order.insert(position, spec.target)
    forward = [(order[i], order[j]) for i in range(len(order)) for j in range(i + 1, len(order))]
    if spec.edge_density is not None:
        chosen = [pair for pair in forward if gen.random() < spec.edge_density]
        if spec.target is not None and not any(b == spec.target for _, b in chosen):
            chosen.insert(0, _target_edge(order, spec.target, gen))
        return CausalGraph(declared, _first_then_shuffled(chosen, spec.target, gen))
    low, high = spec.edge_range()
    n_edges = int(gen.integers(low, high + 1))
    if spec.edge_sampling == "pairs":
        return CausalGraph(declared, _pair_edges(spec, order, n_edges, gen))
    edges: list[Edge] = []
    if spec.target is not None:
        edges.append(_target_edge(order, spec.target, gen))
    pool = [pair for pair in forward if pair not in edges]
    weights = np.array([spec.target_edge_weight if b == spec.target else 1.0 for _, b in pool])
    extra = n_edges - len(edges)
    if extra > 0:
        picks = gen.choice(len(pool), size=extra, replace=False, p=weights / weights.sum())
        others = [pool[i] for i in picks]
        edges += [others[i] for i in gen.permutation(len(others))]
    return CausalGraph(declared, edges)


def _pair_edges(
    spec: RandomSCMSpec, order: list[str], n_edges: int, gen: np.random.Generator
) -> list[Edge]:
    """``n_edges`` edges added one at a time, each uniform over the ordered pairs that keep
    the graph a DAG (no repeated or reversed edge, no cycle, the target a sink unless it may
    be a parent); a target's first parent is drawn before the rest (listed first).

    Choosing uniformly among the valid pairs is the same draw as rejection sampling of
    ordered pairs, without an unbounded loop. ``order`` only fixes the candidate listing
    (and with it determinism); it does not constrain the edges.
    """
    edges: list[Edge] = []
    ancestors: dict[str, set[str]] = {node: set() for node in order}
    if spec.target is not None:
        edges.append(_target_edge(order, spec.target, gen))
    for parent, child in edges:
        _link(ancestors, parent, child)
    while len(edges) < n_edges:
        taken = {frozenset(e) for e in edges}
        valid = [
            (a, b)
            for a in order
            for b in order
            if a != b
            and frozenset((a, b)) not in taken
            and b not in ancestors[a]
            and (a != spec.target or spec.target_can_be_parent)
        ]
        parent, child = valid[int(gen.integers(len(valid)))]
        edges.append((parent, child))
        _link(ancestors, parent, child)
    return edges


def _link(ancestors: dict[str, set[str]], parent: str, child: str) -> None:
    """Record ``parent -> child`` in the ancestor sets (the child and its descendants gain
    ``parent`` and its ancestors)."""
    gained = ancestors[parent] | {parent}
    for node, above in ancestors.items():
        if node == child or child in above:
            above |= gained


def _target_edge(order: list[str], target: str, gen: np.random.Generator) -> Edge:
    before = order[: order.index(target)]
    return before[int(gen.integers(len(before)))], target


def _first_then_shuffled(
    edges: list[Edge], target: str | None, gen: np.random.Generator
) -> list[Edge]:
    if target is None or not edges:
        return [edges[i] for i in gen.permutation(len(edges))]
    first = next(i for i, e in enumerate(edges) if e[1] == target)
    rest = edges[:first] + edges[first + 1 :]
    return [edges[first]] + [rest[i] for i in gen.permutation(len(rest))]


def _weight(spec: RandomSCMSpec, gen: np.random.Generator) -> float:
    if spec.weight_range is not None:
        value = float(gen.uniform(*spec.weight_range))
    else:
        value = float(spec.weights[int(gen.integers(len(spec.weights)))])
    if spec.negative_weights and gen.random() < 0.5:
        value = -value
    return value


def _mechanism(
    spec: RandomSCMSpec, parents: tuple[str, ...], intercept: float, gen: np.random.Generator
) -> Mechanism:
    if spec.family == "linear":
        return LinearMechanism({p: _weight(spec, gen) for p in parents}, intercept)
    quadratic, linear = {}, {}
    for parent in parents:
        u = float(spec.quadratic_coefficients[int(gen.integers(len(spec.quadratic_coefficients)))])
        quadratic[parent] = u
        if spec.vertex_range is not None:
            linear[parent] = -2.0 * u * float(gen.uniform(*spec.vertex_range))
        else:
            linear[parent] = _weight(spec, gen)
    return QuadraticMechanism(linear, quadratic, intercept)


def random_scm(spec: RandomSCMSpec | int, *, seed: int | None = None, **options: Any) -> SCM:
    """A random SCM: a :func:`random_dag` plus mechanisms and noise drawn from ``spec``.

    >>> scm = random_scm(RandomSCMSpec.causalab(4), seed=1)
    >>> scm.graph.parents("y") != ()
    True
    """
    spec = _spec(spec, options)
    graph = random_dag(spec, seed=seed)
    gen = rng(seed, "random-scm-parameters")
    equations: dict[str, Mechanism] = {}
    noise: dict[str, Noise] = {}
    for name in graph.nodes:
        intercept = 0.0
        if name == spec.target:
            low, high = spec.target_intercept
            intercept = (
                float(gen.integers(math.ceil(low), math.floor(high) + 1))
                if spec.integer_target_intercept
                else float(gen.uniform(low, high))
            )
        equations[name] = _mechanism(spec, graph.parents(name), intercept, gen)
        noise[name] = spec.target_noise if name == spec.target else spec.noise
    return SCM(equations, noise, round_to=spec.round_to)
