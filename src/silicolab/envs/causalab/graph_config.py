"""A CausaLab graph config: the hidden SCM of one episode family and its evaluation.

Equations are held as numbers (read from the published ``computation`` strings by
:mod:`.suite`, never ``eval``-ed) and evaluated in pure Python, because the crystal lab
evaluates a graph after every intervention and a benchmark runs thousands of episodes
(spec §3.3):

* nodes are visited in config order, each node's parents first (depth-first, memoised), and
  that *recursion order* is also the display order;
* a root takes its per-instance base; a node with parents takes ``intercept + sum(terms)``
  where the intercept is the per-instance base for a controllable node and ``base_freq``
  for the target; every value is rounded to 2 decimals before its children use it;
* Python number types are kept (integer bases times integer weights stay ``int``), so the
  records print exactly as the published ones (``{'density': 14, ..., 'resonanceFreq': 42.0}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from silicolab.scm import SCM, CausalGraph, LinearMechanism, Noise, QuadraticMechanism

TARGET = "resonanceFreq"
#: Short names used in the parameter keys (``coeff_temp_freq``); other nodes use their name.
SHORT_NAMES = {TARGET: "freq", "temperatureC": "temp"}
#: Display names of the variable pool (spec §3.1).
DISPLAY_NAMES = {
    TARGET: "Resonance Frequency (Hz)",
    "temperatureC": "Temperature (°C)",
    "moisture": "Moisture",
    "density": "Density",
    "quantumSize": "Quantum Size",
    "radiation": "Radiation",
    "pressure": "Pressure",
    "ph": "pH",
    "conductivity": "Conductivity",
}
PROPERTY_POOL = tuple(name for name in DISPLAY_NAMES if name != TARGET)
Number = int | float


@dataclass(frozen=True)
class HiddenSpec:
    """The hidden disturbance H of the hidden suites (spec §3.7.1): after every intervention
    H is redrawn uniformly from ``value_space``; ``edge_weight * H`` is added to each affected
    node right after its equation, so the shift propagates to descendants."""

    affected_nodes: tuple[str, ...]
    value_space: tuple[float, ...] = (-5.0, 0.0, 5.0)
    edge_weight: float = 1.0
    initial_value: float = 0.0


@dataclass(frozen=True)
class GoldenStep:
    """One Golden bootstrap entry: an intervention ``prop := value`` (both ``None`` for the
    two plain observations) and the record observed afterwards (``props`` without the target,
    ``freq`` the target's value)."""

    prop: str | None
    value: float | None
    props: dict[str, float]
    freq: float

    def record(self) -> dict[str, Any]:
        """The entry as the lab's ``golden_records`` show it."""
        out: dict[str, Any] = {}
        if self.prop is not None:
            out["intervention"] = {"target_prop": self.prop, "target_value": self.value}
        out["props"] = dict(self.props)
        out["freq"] = self.freq
        return out


@dataclass(frozen=True, eq=False)
class GraphConfig:
    """One episode family: the hidden SCM over ``resonanceFreq`` and k-1 crystal properties.

    ``weights`` holds the linear coefficient of every edge (the linear term in the quadratic
    family), ``quad_weights`` the squared-term coefficient (``{}`` for linear). Their insertion
    order is the order of the terms in the equation, which fixes the evaluation order.
    """

    graph_id: str
    suite: str
    nodes: tuple[str, ...]
    controllable: tuple[str, ...]
    display_names: dict[str, str]
    edges: tuple[tuple[str, str], ...]
    family: Literal["linear", "quadratic"]
    weights: dict[tuple[str, str], float]
    quad_weights: dict[tuple[str, str], float]
    base_freq: float
    budget: int
    hidden: HiddenSpec | None
    frequency_can_be_parent: bool
    golden_chain: tuple[GoldenStep, ...]
    raw: dict
    #: the two plain Golden observations (``prop is None``); ``()`` outside Golden suites
    golden_observations: tuple[GoldenStep, ...] = ()
    #: hard-quadratic presets: ``{"observations": [..], "manipulator": {..}, "reactor": {..}}``
    presets: dict[str, Any] | None = None
    description: str = ""

    # -- structure ---------------------------------------------------------------------

    @cached_property
    def graph(self) -> CausalGraph:
        """The true DAG (nodes in config order)."""
        return CausalGraph(self.nodes, self.edges)

    @cached_property
    def parents(self) -> dict[str, tuple[str, ...]]:
        """Each node's parents in equation-term order."""
        found: dict[str, list[str]] = {n: [] for n in self.nodes}
        for parent, child in self.weights:
            found[child].append(parent)
        return {n: tuple(p) for n, p in found.items()}

    @cached_property
    def recursion_order(self) -> tuple[str, ...]:
        """Config order with each node's parents visited first: the evaluation and display
        order of every record and panel."""
        order: list[str] = []
        seen: set[str] = set()

        def visit(node: str) -> None:
            if node in seen:
                return
            seen.add(node)
            for parent in self.parents[node]:
                visit(parent)
            order.append(node)

        for node in self.nodes:
            visit(node)
        return tuple(order)

    @cached_property
    def _plan(self) -> tuple[tuple[str, bool, tuple[tuple[str, float, float], ...]], ...]:
        plan = []
        for node in self.recursion_order:
            terms = tuple(
                (p, self.weights[(p, node)], self.quad_weights.get((p, node), 0))
                for p in self.parents[node]
            )
            plan.append((node, node in self.controllable, terms))
        return tuple(plan)

    def freq_weights(self) -> dict[str, float]:
        """The true linear weight of each direct parent of the target."""
        return {p: self.weights[(p, TARGET)] for p in self.parents[TARGET]}

    def roots_of_target(self) -> set[str]:
        """Ancestors of the target that have no parents (spec §6.6)."""
        return {a for a in self.graph.ancestors(TARGET) if not self.parents[a]}

    @cached_property
    def scm(self) -> SCM:
        """The same model as a :class:`silicolab.scm.SCM` (bases are the exogenous terms of
        the properties; the target's intercept is ``base_freq``). The lab evaluates with
        :meth:`evaluate` and solves interventions with :meth:`set_now`, which follow the
        published equation strings' order and rounding exactly."""
        equations: dict[str, LinearMechanism | QuadraticMechanism] = {}
        noise = {}
        for node in self.nodes:
            intercept = float(self.base_freq) if node == TARGET else 0.0
            linear = {p: float(self.weights[(p, node)]) for p in self.parents[node]}
            if self.family == "quadratic":
                quad = {p: float(self.quad_weights.get((p, node), 0)) for p in self.parents[node]}
                equations[node] = QuadraticMechanism(linear, quad, intercept)
            else:
                equations[node] = LinearMechanism(linear, intercept)
            noise[node] = Noise.constant(0.0) if node == TARGET else Noise.integers(0, 100)
        return SCM(equations, noise, round_to=2)

    # -- evaluation --------------------------------------------------------------------

    def evaluate(self, bases: Mapping[str, Number], *, hidden_shift: float = 0.0) -> dict[str, Any]:
        """Every node's value for one crystal with per-instance ``bases`` (one per controllable
        node), in recursion order, each rounded to 2 decimals before its children use it.

        ``hidden_shift`` is the current H: ``edge_weight * H`` is added to each affected node
        after its equation (hidden suites only; ignored otherwise).
        """
        shifted: frozenset[str] = frozenset()
        delta = 0.0
        if self.hidden is not None and hidden_shift:
            shifted = frozenset(self.hidden.affected_nodes)
            delta = self.hidden.edge_weight * hidden_shift
        values: dict[str, Any] = {}
        quadratic = self.family == "quadratic"
        for node, controllable, terms in self._plan:
            total = bases[node] if controllable else self.base_freq
            for parent, w, u in terms:
                x = values[parent]
                # the published strings read "u * (p ^ 2) + w * p": same order of operations
                total = total + u * (x**2) + w * x if quadratic else total + w * x
            if node in shifted:
                total = total + delta
            values[node] = round(total, 2)
        return values

    def set_now(self, bases: Mapping[str, Number], node: str, value: float) -> float:
        """The base the Property Manipulator gives ``node`` so that it shows ``value`` now
        (spec §4.2, the coded rule), with upstream's arithmetic to the last digit.

        A node without parents takes ``round(value, 2)``. Otherwise the parents' part is
        read off the crystal as upstream reads it, the value shown now (rounded to 2
        decimals, without H) minus the current base, and the new base is
        ``round(value - part, 2)``. Solving with the unrounded mechanism instead (as
        :meth:`silicolab.scm.SCM.set_now` does) drifts by 0.01 in the quadratic family,
        which the squared terms carry into the children.
        """
        if not self.parents[node]:
            return round(float(value), 2)
        part = self.evaluate(bases)[node] - bases[node]
        return round(float(value) - part, 2)


def short_name(node: str) -> str:
    """The name a node has inside parameter keys (``temperatureC`` -> ``temp``)."""
    return SHORT_NAMES.get(node, node)
