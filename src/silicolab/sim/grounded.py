"""Grounded variables: typed Python state that a game master keeps true.

Language agents only *describe* what they try to do; quantities that must stay consistent
(money, prices, votes, who is still in an auction) live here as ordinary Python values. Each
:class:`GroundedVariable` has a language rendering (for prompts and observations) and an
optional validator. :meth:`GroundedState.check` tests a whole batch of proposed updates
before any of them is applied, so an impossible action is rejected atomically, with a
message for the actor, and costs nothing: no state change and no language-model call.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from silicolab.core.errors import InputError

T = TypeVar("T")

#: A validator gets the proposed new value and the whole proposed state (name -> value)
#: and returns ``None`` when the value is possible, else a message for the actor.
Validator = Callable[[Any, Mapping[str, Any]], str | None]


@dataclass
class GroundedVariable(Generic[T]):
    """One typed variable of the world (e.g. ``price: float = 50``).

    ``kind`` is the Python type values must have (checked on every update; ``int`` is
    accepted where ``float`` is asked for). ``validator`` returns a rejection message or
    ``None``. ``render`` turns the value into language; the default is ``"name: value"``.
    """

    name: str
    value: T
    kind: type | tuple[type, ...] | None = None
    description: str = ""
    validator: Validator | None = None
    render: Callable[[T], str] | None = None

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise InputError("a grounded variable needs a non-empty string name")
        if self.kind is None:
            self.kind = type(self.value)
        message = self.check(self.value, {self.name: self.value})
        if message:
            raise InputError(f"initial value of {self.name!r} is invalid: {message}")

    def check(self, value: Any, proposed: Mapping[str, Any]) -> str | None:
        """``None`` if ``value`` is a possible value, else a message saying why not."""
        raw = self.kind if isinstance(self.kind, tuple) else (self.kind,)
        kinds = tuple(k for k in raw if k is not None)
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            pass
        elif not isinstance(value, kinds):
            names = "/".join(k.__name__ for k in kinds)
            return f"{self.name} must be a {names}, not {type(value).__name__}"
        return self.validator(value, proposed) if self.validator else None

    def text(self) -> str:
        """The variable in language, for prompts and observations."""
        if self.render is not None:
            return self.render(self.value)
        label = f"{self.name} ({self.description})" if self.description else self.name
        return f"{label}: {_show(self.value)}"


def _show(value: Any) -> str:
    if isinstance(value, (set, frozenset)):
        return ", ".join(sorted(map(str, value))) or "none"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "none"
    return "none" if value is None else str(value)


@dataclass(frozen=True)
class Change:
    """One applied update, kept in :attr:`GroundedState.history`."""

    step: int
    name: str
    old: Any
    new: Any
    cause: str = ""


@dataclass
class GroundedState:
    """A named collection of :class:`GroundedVariable` with atomic, validated updates."""

    variables: dict[str, GroundedVariable[Any]] = field(default_factory=dict)
    history: list[Change] = field(default_factory=list)

    @classmethod
    def of(cls, *variables: GroundedVariable[Any]) -> GroundedState:
        """Build a state from variables (names must be unique)."""
        state = cls()
        for var in variables:
            state.add(var)
        return state

    def add(self, var: GroundedVariable[Any]) -> None:
        """Register one more variable."""
        if var.name in self.variables:
            raise InputError(f"grounded variable {var.name!r} is defined twice")
        self.variables[var.name] = var

    def __getitem__(self, name: str) -> Any:
        return self._var(name).value

    def __contains__(self, name: object) -> bool:
        return name in self.variables

    def __iter__(self) -> Iterator[str]:
        return iter(self.variables)

    def _var(self, name: str) -> GroundedVariable[Any]:
        try:
            return self.variables[name]
        except KeyError:
            known = ", ".join(self.variables) or "none"
            raise InputError(f"no grounded variable {name!r} (known: {known})") from None

    def check(self, updates: Mapping[str, Any]) -> str | None:
        """Validate ``updates`` as one batch; ``None`` if all are possible, else a message.

        Validators see the state *as it would be* after the whole batch. Nothing changes.
        """
        unknown = [n for n in updates if n not in self.variables]
        if unknown:
            return f"unknown grounded variable(s): {', '.join(unknown)}"
        proposed = {n: v.value for n, v in self.variables.items()} | dict(updates)
        for name, value in updates.items():
            message = self.variables[name].check(value, proposed)
            if message:
                return message
        return None

    def apply(self, updates: Mapping[str, Any], *, step: int = 0, cause: str = "") -> None:
        """Check then apply ``updates`` atomically; raise :class:`InputError` if impossible."""
        message = self.check(updates)
        if message:
            raise InputError(message)
        for name, value in updates.items():
            var = self.variables[name]
            self.history.append(Change(step, name, var.value, value, cause))
            var.value = value

    def snapshot(self) -> dict[str, Any]:
        """A deep copy of every value (name -> value)."""
        return {n: copy.deepcopy(v.value) for n, v in self.variables.items()}

    def text(self, names: Iterable[str] | None = None) -> str:
        """The state in language, one variable per line (optionally only ``names``)."""
        chosen = list(self.variables) if names is None else list(names)
        return "\n".join(self._var(n).text() for n in chosen)

    def state_dict(self) -> dict[str, Any]:
        """JSON-ready state: every value and the change history (sets/tuples are tagged)."""
        return {
            "values": {n: encode_value(v.value) for n, v in self.variables.items()},
            "history": [
                [c.step, c.name, encode_value(c.old), encode_value(c.new), c.cause]
                for c in self.history
            ],
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict` output into a state built with the same variables."""
        values = state["values"]
        differ = set(values) ^ set(self.variables)
        if differ:
            raise InputError(f"state and grounded variables disagree on: {sorted(differ)}")
        for name, raw in values.items():
            self.variables[name].value = decode_value(raw)
        self.history = [
            Change(int(step), str(name), decode_value(old), decode_value(new), str(cause))
            for step, name, old, new, cause in state["history"]
        ]


def encode_value(value: Any) -> Any:
    """A JSON-ready form of ``value``: sets, frozensets and tuples become tagged objects,
    and so do non-finite floats (``{"__float__": "inf"}``): strict JSON has no infinity,
    and a state such as an opening ask of ``inf`` must come back from a checkpoint as it was."""
    if isinstance(value, float) and not math.isfinite(value):
        return {"__float__": repr(value)}
    if isinstance(value, (set, frozenset)):
        tag = "__frozenset__" if isinstance(value, frozenset) else "__set__"
        return {tag: [encode_value(v) for v in sorted(value, key=repr)]}
    if isinstance(value, tuple):
        return {"__tuple__": [encode_value(v) for v in value]}
    if isinstance(value, list):
        return [encode_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode_value(v) for k, v in value.items()}
    return value


def decode_value(raw: Any) -> Any:
    """The inverse of :func:`encode_value`."""
    if isinstance(raw, list):
        return [decode_value(v) for v in raw]
    if isinstance(raw, dict):
        if len(raw) == 1:
            ((tag, items),) = raw.items()
            kinds = {"__set__": set, "__frozenset__": frozenset, "__tuple__": tuple}
            if tag == "__float__" and items in ("inf", "-inf", "nan"):
                return float(items)
            if tag in kinds:
                return kinds[tag](decode_value(v) for v in items)
        return {k: decode_value(v) for k, v in raw.items()}
    return raw


def at_least(bound: float, what: str = "") -> Validator:
    """A validator rejecting values below ``bound`` (e.g. money that cannot go negative)."""

    def check(value: Any, _proposed: Mapping[str, Any]) -> str | None:
        if value < bound:
            return f"{what or 'the value'} cannot go below {bound} (it would be {value})"
        return None

    return check
