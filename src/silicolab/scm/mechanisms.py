"""Structural mechanisms and exogenous terms of an SCM.

A node's value is ``mechanism(parents) + exogenous``, where the mechanism includes its own
``intercept`` and the exogenous term is either drawn from the node's :class:`Noise` or
given per instance as a *base value* (CausaLab's per-crystal bases). Mechanisms work on
whole NumPy columns, so sampling a million rows costs one vectorised pass per node.

Mechanisms are frozen dataclasses; all but :class:`CallableMechanism` serialize to JSON.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from silicolab.core.errors import InputError

Values = Mapping[str, np.ndarray | float]
NoiseKind = Literal["normal", "uniform", "integers", "constant"]


def _finite(value: Any, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what} must be a number; got {value!r}") from exc
    if not math.isfinite(number):
        raise InputError(f"{what} must be finite; got {value!r}")
    return number


@dataclass(frozen=True)
class Noise:
    """The distribution of a node's exogenous term.

    ``normal``: mean ``a``, standard deviation ``b``; ``uniform``: on ``[a, b)``;
    ``integers``: uniform integers in ``[a, b]`` inclusive (CausaLab's ``randint(0, 100)``);
    ``constant``: always ``a``.
    """

    kind: NoiseKind = "normal"
    a: float = 0.0
    b: float = 1.0

    def __post_init__(self) -> None:
        if self.kind not in ("normal", "uniform", "integers", "constant"):
            raise InputError(
                f"unknown noise kind {self.kind!r}; use normal, uniform, integers or constant"
            )
        object.__setattr__(self, "a", _finite(self.a, "noise parameter a"))
        object.__setattr__(self, "b", _finite(self.b, "noise parameter b"))
        if self.kind == "normal" and self.b < 0:
            raise InputError(f"normal noise needs a standard deviation >= 0; got {self.b}")
        if self.kind in ("uniform", "integers") and self.b < self.a:
            raise InputError(f"{self.kind} noise needs low <= high; got [{self.a}, {self.b}]")

    @classmethod
    def normal(cls, mean: float = 0.0, sd: float = 1.0) -> Noise:
        """Gaussian noise."""
        return cls("normal", mean, sd)

    @classmethod
    def uniform(cls, low: float, high: float) -> Noise:
        """Continuous uniform noise on ``[low, high)``."""
        return cls("uniform", low, high)

    @classmethod
    def integers(cls, low: int, high: int) -> Noise:
        """Uniform integers in ``[low, high]`` (both ends included)."""
        return cls("integers", low, high)

    @classmethod
    def constant(cls, value: float = 0.0) -> Noise:
        """No randomness: the exogenous term is always ``value``."""
        return cls("constant", value, value)

    def draw(self, generator: np.random.Generator, size: int) -> np.ndarray:
        """``size`` independent draws as float64."""
        if self.kind == "normal":
            return generator.normal(self.a, self.b, size)
        if self.kind == "uniform":
            return generator.uniform(self.a, self.b, size)
        if self.kind == "integers":
            return generator.integers(int(self.a), int(self.b), size, endpoint=True).astype(float)
        return np.full(size, self.a)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "a": self.a, "b": self.b}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Noise:
        return cls(data["kind"], data["a"], data["b"])


def _weights(mapping: Mapping[str, Any], what: str) -> dict[str, float]:
    return {str(k): _finite(v, f"{what} of {k!r}") for k, v in mapping.items()}


@dataclass(frozen=True)
class LinearMechanism:
    """``intercept + sum(weights[p] * p)``."""

    weights: Mapping[str, float] = field(default_factory=dict)
    intercept: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", _weights(self.weights, "the weight"))
        object.__setattr__(self, "intercept", _finite(self.intercept, "the intercept"))

    @property
    def parents(self) -> tuple[str, ...]:
        return tuple(self.weights)

    def __call__(self, values: Values) -> np.ndarray | float:
        total: np.ndarray | float = self.intercept
        for parent, weight in self.weights.items():
            total = total + weight * values[parent]
        return total

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "linear", "weights": dict(self.weights), "intercept": self.intercept}


@dataclass(frozen=True)
class QuadraticMechanism:
    """``intercept + sum(quadratic[p] * p**2 + linear[p] * p)`` (CausaLab's quadratic family;
    a parent may appear in either mapping or both)."""

    linear: Mapping[str, float] = field(default_factory=dict)
    quadratic: Mapping[str, float] = field(default_factory=dict)
    intercept: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "linear", _weights(self.linear, "the linear coefficient"))
        object.__setattr__(self, "quadratic", _weights(self.quadratic, "the quadratic coefficient"))
        object.__setattr__(self, "intercept", _finite(self.intercept, "the intercept"))

    @property
    def parents(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*self.linear, *self.quadratic]))

    def __call__(self, values: Values) -> np.ndarray | float:
        total: np.ndarray | float = self.intercept
        for parent in self.parents:
            x = values[parent]
            total = (
                total + self.quadratic.get(parent, 0.0) * x * x + self.linear.get(parent, 0.0) * x
            )
        return total

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "quadratic",
            "linear": dict(self.linear),
            "quadratic": dict(self.quadratic),
            "intercept": self.intercept,
        }


@dataclass(frozen=True)
class ConstantMechanism:
    """Always ``intercept`` (what a hard ``do`` leaves behind)."""

    intercept: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "intercept", _finite(self.intercept, "the value"))

    @property
    def parents(self) -> tuple[str, ...]:
        return ()

    def __call__(self, values: Values) -> float:
        return self.intercept

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "constant", "intercept": self.intercept}


@dataclass(frozen=True)
class CallableMechanism:
    """``intercept + func(values)`` for any Python function.

    ``func`` receives a mapping from each parent name to its column (a NumPy array; of
    length one when evaluating a single instance) and must return an array of the same
    length or a scalar. It cannot be written to JSON (a function is code, not data).

    >>> m = CallableMechanism(lambda v: v["x"] * v["z"], parents=("x", "z"))
    """

    func: Callable[[Values], Any]
    parents: tuple[str, ...] = ()
    intercept: float = 0.0
    label: str = ""

    def __post_init__(self) -> None:
        if not callable(self.func):
            raise InputError(f"CallableMechanism needs a function; got {self.func!r}")
        object.__setattr__(self, "parents", tuple(str(p) for p in self.parents))
        object.__setattr__(self, "intercept", _finite(self.intercept, "the intercept"))

    def __call__(self, values: Values) -> np.ndarray | float:
        return self.intercept + self.func({p: values[p] for p in self.parents})

    def to_dict(self) -> dict[str, Any]:
        name = self.label or getattr(self.func, "__name__", "function")
        raise InputError(
            f"the callable mechanism {name!r} cannot be serialized to JSON; replace it with a "
            "LinearMechanism or QuadraticMechanism, or keep the SCM in Python (pickle it) instead"
        )


Mechanism = LinearMechanism | QuadraticMechanism | ConstantMechanism | CallableMechanism


def shifted(mechanism: Mechanism, delta: float) -> Mechanism:
    """The same mechanism with ``delta`` added to its output (via its intercept)."""
    return replace(mechanism, intercept=mechanism.intercept + _finite(delta, "the shift"))


def mechanism_from_dict(data: Mapping[str, Any]) -> Mechanism:
    """Rebuild a mechanism written by its ``to_dict``."""
    kind = data.get("kind")
    if kind == "linear":
        return LinearMechanism(data.get("weights", {}), data.get("intercept", 0.0))
    if kind == "quadratic":
        return QuadraticMechanism(
            data.get("linear", {}), data.get("quadratic", {}), data.get("intercept", 0.0)
        )
    if kind == "constant":
        return ConstantMechanism(data.get("intercept", 0.0))
    raise InputError(
        f"unknown mechanism kind {kind!r}; serialized mechanisms are linear, quadratic or constant"
    )
