"""Structural causal models: sampling, single-instance evaluation and interventions.

Each node ``X`` has ``X = mechanism_X(parents) + U_X``. ``U_X`` is drawn from the node's
:class:`~silicolab.scm.mechanisms.Noise` or supplied per instance as a *base value*.
Three interventions are offered, because the sciences we reproduce use all three:

* :meth:`SCM.do` - hard intervention ``do(X = v)``: X's mechanism and noise are replaced by
  the constant ``v`` and its incoming edges disappear.
* :meth:`SCM.shift` - additive shift ``X = mechanism_X(parents) + U_X + delta``: the incoming
  influence stays.
* :meth:`SCM.set_now` - CausaLab's rule on one instance: X is set to ``v`` *now* by solving
  its base ``U_X = v - mechanism_X(current parents)``; the solved base persists, so a later
  change of X's parents moves X again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from silicolab.core.errors import InputError
from silicolab.core.records import SCHEMA_VERSION
from silicolab.core.seeding import rng
from silicolab.scm.graph import CausalGraph
from silicolab.scm.mechanisms import (
    ConstantMechanism,
    LinearMechanism,
    Mechanism,
    Noise,
    QuadraticMechanism,
    mechanism_from_dict,
    shifted,
)
from silicolab.scm.variables import Variable

if TYPE_CHECKING:  # only sample() builds a DataFrame; simulators never need pandas
    import pandas as pd

DEFAULT_NOISE = Noise.normal(0.0, 1.0)


class SCM:
    """A structural causal model over named variables.

    >>> scm = SCM({"x": LinearMechanism(), "y": LinearMechanism({"x": 2.0}, intercept=1.0)},
    ...           noise={"x": Noise.normal(0, 1), "y": Noise.normal(0, 0.5)})
    >>> scm.sample(3, seed=0).shape
    (3, 2)

    Nodes are the keys of ``equations`` plus any extra ``variables`` (which become roots
    with intercept 0). Nodes without an entry in ``noise`` get standard normal noise.
    ``round_to`` rounds every node to that many decimals right after its equation, before
    its children use it (CausaLab rounds to 2).
    """

    __slots__ = ("_graph", "_mechanisms", "_noise", "_order", "round_to")

    def __init__(
        self,
        equations: Mapping[str, Mechanism],
        noise: Mapping[str, Noise] | None = None,
        *,
        variables: Iterable[Variable] | None = None,
        round_to: int | None = None,
    ) -> None:
        declared = {v.name: v for v in variables or ()}
        names = list(dict.fromkeys([*declared, *equations]))
        mechanisms = {n: equations.get(n, LinearMechanism()) for n in names}
        for name, mechanism in mechanisms.items():
            if not callable(mechanism) or not hasattr(mechanism, "parents"):
                raise InputError(
                    f"the equation of {name!r} is {mechanism!r}; use LinearMechanism, "
                    "QuadraticMechanism, ConstantMechanism or CallableMechanism"
                )
        noise = dict(noise or {})
        for name in noise:
            if name not in mechanisms:
                raise InputError(f"noise is given for unknown variable {name!r}; nodes are {names}")
        edges = [(p, n) for n, m in mechanisms.items() for p in m.parents]
        self._graph = CausalGraph([declared.get(n, n) for n in names], edges)
        self._mechanisms = mechanisms
        self._noise = {n: noise.get(n, DEFAULT_NOISE) for n in names}
        self._order = self._graph.topological_order()
        if round_to is not None and (not isinstance(round_to, int) or round_to < 0):
            raise InputError(f"round_to must be a non-negative integer or None; got {round_to!r}")
        self.round_to = round_to

    # -- structure ----------------------------------------------------------------------

    @property
    def graph(self) -> CausalGraph:
        """The causal graph implied by the mechanisms' parents."""
        return self._graph

    @property
    def nodes(self) -> tuple[str, ...]:
        return self._graph.nodes

    @property
    def variables(self) -> tuple[Variable, ...]:
        return self._graph.variables

    def mechanism(self, name: str) -> Mechanism:
        self._graph.variable(name)
        return self._mechanisms[name]

    def noise(self, name: str) -> Noise:
        self._graph.variable(name)
        return self._noise[name]

    def coefficients(self) -> dict[tuple[str, str], float]:
        """Linear coefficients ``{(parent, child): weight}`` (the linear term of quadratic
        mechanisms; callable mechanisms contribute nothing)."""
        found: dict[tuple[str, str], float] = {}
        for child, mechanism in self._mechanisms.items():
            if isinstance(mechanism, LinearMechanism):
                found.update({(p, child): w for p, w in mechanism.weights.items()})
            elif isinstance(mechanism, QuadraticMechanism):
                found.update({(p, child): mechanism.linear.get(p, 0.0) for p in mechanism.parents})
        return found

    def _replace(self, mechanisms: Mapping[str, Mechanism], noise: Mapping[str, Noise]) -> SCM:
        return SCM(mechanisms, noise, variables=self.variables, round_to=self.round_to)

    # -- computation --------------------------------------------------------------------

    def _exogenous(
        self, size: int, seed: int | None, bases: Mapping[str, Any] | None
    ) -> dict[str, np.ndarray]:
        bases = dict(bases or {})
        for name in bases:
            self._graph.variable(name)
        terms = {}
        for name in self.nodes:
            if name in bases:
                value = np.asarray(bases[name], dtype=float)
                if value.ndim > 1 or (value.ndim == 1 and len(value) != size):
                    raise InputError(
                        f"base values of {name!r} must be one number or {size} numbers; "
                        f"got shape {value.shape}"
                    )
                terms[name] = np.broadcast_to(value, (size,))
            else:
                terms[name] = self._noise[name].draw(rng(seed, "scm-exogenous", name), size)
        return terms

    def _propagate(self, exogenous: Mapping[str, np.ndarray], size: int) -> dict[str, np.ndarray]:
        values: dict[str, np.ndarray] = {}
        for name in self._order:
            column = np.asarray(self._mechanisms[name](values), dtype=float) + exogenous[name]
            column = np.broadcast_to(column, (size,))
            values[name] = np.round(column, self.round_to) if self.round_to is not None else column
        return values

    def sample(
        self, n: int, seed: int | None = None, *, bases: Mapping[str, Any] | None = None
    ) -> pd.DataFrame:
        """``n`` independent draws as a DataFrame (columns in node order).

        ``bases`` fixes the exogenous term of some nodes (a number or ``n`` numbers each);
        the others are drawn from their noise. Each node's noise comes from a generator
        derived from ``seed`` and the node's name, so adding a node leaves the others' draws
        unchanged.
        """
        if not isinstance(n, int | np.integer) or n < 0:
            raise InputError(f"n must be a non-negative integer; got {n!r}")
        import pandas as pd

        values = self._propagate(self._exogenous(int(n), seed, bases), int(n))
        return pd.DataFrame({name: values[name] for name in self.nodes})

    def evaluate(
        self, bases: Mapping[str, float] | None = None, *, seed: int | None = None
    ) -> dict[str, float]:
        """Values of one instance, in topological order. Nodes missing from ``bases`` draw
        their exogenous term from their noise (a constant noise makes that deterministic)."""
        values = self._propagate(self._exogenous(1, seed, bases), 1)
        return {name: float(values[name][0]) for name in self._order}

    # -- interventions ------------------------------------------------------------------

    def do(self, assignments: Mapping[str, float]) -> SCM:
        """Hard intervention: each ``X`` in ``assignments`` becomes the constant value and
        loses its incoming edges; e.g. ``scm.do({"x": 3.0})`` for ``do(x = 3)``."""
        mechanisms, noise = dict(self._mechanisms), dict(self._noise)
        for name, value in assignments.items():
            self._graph.variable(name)
            mechanisms[name] = ConstantMechanism(value)
            noise[name] = Noise.constant(0.0)
        return self._replace(mechanisms, noise)

    def shift(self, deltas: Mapping[str, float]) -> SCM:
        """Additive intervention: ``X = mechanism_X(parents) + U_X + delta``; X keeps its
        parents."""
        mechanisms = dict(self._mechanisms)
        for name, delta in deltas.items():
            self._graph.variable(name)
            mechanisms[name] = shifted(mechanisms[name], delta)
        return self._replace(mechanisms, self._noise)

    def set_now(self, bases: Mapping[str, float], node: str, value: float) -> dict[str, float]:
        """CausaLab's intervention on one instance: set ``node`` to ``value`` now and keep
        the solved base.

        ``bases`` gives the instance's exogenous terms (nodes with constant noise may be
        left out). Returns the new bases: ``node``'s base becomes
        ``value - mechanism(current parents)`` (rounded like the values), so
        ``evaluate(new_bases)[node] == value`` and a later change to ``node``'s parents still
        moves it. Chain calls to replay a sequence of interventions.
        """
        self._graph.variable(node)
        try:
            value = float(value)
        except (TypeError, ValueError) as exc:
            raise InputError(f"the value for {node!r} must be a number; got {value!r}") from exc
        full = self._instance_bases(bases)
        current = self._propagate({k: np.array([v]) for k, v in full.items()}, 1)
        contribution = float(
            np.asarray(self._mechanisms[node](current), dtype=float).reshape(-1)[0]
        )
        new_base = value - contribution
        if self.round_to is not None:
            new_base = round(new_base, self.round_to)
        return {**full, node: new_base}

    def _instance_bases(self, bases: Mapping[str, float]) -> dict[str, float]:
        full = {}
        for name in self.nodes:
            if name in bases:
                full[name] = float(bases[name])
            elif self._noise[name].kind == "constant":
                full[name] = self._noise[name].a
            else:
                raise InputError(
                    f"the instance has no base value for {name!r}, whose noise is random; give "
                    "every node with random noise a base (set_now needs one fixed instance)"
                )
        return full

    # -- comparison and serialization ----------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SCM):
            return NotImplemented
        return (
            self.variables == other.variables
            and self._graph == other._graph
            and self._mechanisms == other._mechanisms
            and self._noise == other._noise
            and self.round_to == other.round_to
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SCM(nodes={list(self.nodes)}, edges={len(self._graph.edges)})"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with ``schema_version``. Raises :class:`InputError` if a
        mechanism is a Python callable."""
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": "scm",
            "round_to": self.round_to,
            "variables": [v.to_dict() for v in self.variables],
            "nodes": [
                {
                    "name": name,
                    "mechanism": self._mechanisms[name].to_dict(),
                    "noise": self._noise[name].to_dict(),
                }
                for name in self.nodes
            ],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SCM:
        """Rebuild an SCM written by :meth:`to_dict`."""
        if data.get("kind") != "scm" or "nodes" not in data:
            raise InputError("not an SCM record: expected kind 'scm' as written by SCM.to_dict()")
        return cls(
            {n["name"]: mechanism_from_dict(n["mechanism"]) for n in data["nodes"]},
            {n["name"]: Noise.from_dict(n["noise"]) for n in data["nodes"]},
            variables=[Variable.from_dict(v) for v in data.get("variables", [])],
            round_to=data.get("round_to"),
        )
