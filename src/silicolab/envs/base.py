"""What every environment shares: the protocol, its registration record and its vocabulary.

An environment family (CausaLab's crystal lab, BoxingGym's ten simulators, a toy of your
own) implements :class:`Env` and registers each id once with :func:`silicolab.envs.register`
and an :class:`EnvSpec`. The spec carries the facts a benchmark needs without building the
environment: its family, its goals (:class:`GoalSpec`: the metric's kind, the paper's label,
whether it runs with the prior only), whether its simulated participants speak, and the
lazy path of the family's scientists (``"module:attribute"`` of a
:class:`silicolab.scientists.Family`), so ``envs`` never imports ``scientists``.

This module is tiny and imports nothing heavy: ``silicolab.envs`` re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from silicolab.core import records
from silicolab.core.errors import InputError
from silicolab.envs.errors import InvalidAction

#: ``"fixed"`` (default): upstream bugs fixed; ``"faithful"``: the published behaviour.
Fidelity = Literal["fixed", "faithful"]
FIDELITIES: tuple[str, ...] = ("fixed", "faithful")
#: How a goal is scored: a mean error (lower is better) or an accuracy / success rate.
GoalKind = Literal["error", "accuracy"]
#: The ``schema_version`` of every record written by envs, scientists and benches: the
#: first schema's version as a string, the form these records have always had on disk.
SCHEMA_VERSION = str(records.SCHEMA_VERSION)


def check_fidelity(fidelity: Any) -> Fidelity:
    """``fidelity`` if it is one of :data:`FIDELITIES`, else an :class:`InputError`."""
    if fidelity not in FIDELITIES:
        raise InputError(f"fidelity must be one of {list(FIDELITIES)}; got {fidelity!r}")
    return fidelity  # type: ignore[no-any-return]


@dataclass(frozen=True, kw_only=True)
class GoalSpec:
    """One goal of an environment: ``kind`` of metric, the paper's ``label`` for it, and
    ``prior_only`` for parameter-estimation goals that run only with the prior."""

    name: str
    kind: GoalKind = "error"
    label: str = ""
    prior_only: bool = False


@dataclass(frozen=True, kw_only=True)
class EnvSpec:
    """The registration record of one environment id (see the module docstring).

    ``factory`` is a callable or a lazy ``"module:function"`` path taking keyword options;
    ``scientists`` the lazy path of the family's :class:`~silicolab.scientists.Family`;
    ``kwargs`` the options an instance was made with (set by :func:`make` on the copy it
    attaches to the instance as ``env.spec``), so it can be rebuilt with :func:`remake`.
    """

    id: str
    factory: Any
    family: str
    title: str = ""
    goals: tuple[GoalSpec, ...] = (GoalSpec(name="direct"),)
    participants_speak: bool = False
    scientists: str = ""
    kwargs: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def name(self) -> str:
        """The id without its family prefix (``"boxinggym/dugongs"`` -> ``"dugongs"``)."""
        return self.id.rpartition("/")[2]

    def goal(self, name: str) -> GoalSpec:
        """The goal called ``name`` (an :class:`InputError` naming the goals otherwise)."""
        for goal in self.goals:
            if goal.name == name:
                return goal
        raise InputError(f"{self.id} has goals {[g.name for g in self.goals]}; got {name!r}")


def env_repr(env: Any, env_id: str, **settings: Any) -> str:
    """A short ``repr`` of an environment: its class, id and key ``settings`` (never its
    hidden truth), e.g. ``CrystalLab(id='causalab', graph='4nodes_0', seed=1)``."""
    made = getattr(env, "spec", None)
    shown = {"id": made.id if isinstance(made, EnvSpec) else env_id, **settings}
    return f"{type(env).__name__}({', '.join(f'{k}={v!r}' for k, v in shown.items())})"


@runtime_checkable
class Env(Protocol):
    """What every environment offers, whatever its family.

    ``spec`` is set by :func:`silicolab.envs.make`; ``reset(seed)`` starts the episode
    again (same seed, same instance); ``describe()`` is the task text a scientist starts
    from; actions are the family's typed methods, and an action the environment refuses
    raises :class:`InvalidAction` (the message is what the agent sees) without consuming
    budget; ``to_record()`` is a JSON-ready description (truth included) for records.
    """

    fidelity: str
    seed: int | None

    def reset(self, seed: int | None = None) -> None: ...

    def describe(self) -> str: ...

    def to_record(self) -> dict[str, Any]: ...


__all__ = [
    "FIDELITIES",
    "SCHEMA_VERSION",
    "Env",
    "EnvSpec",
    "Fidelity",
    "GoalKind",
    "GoalSpec",
    "InvalidAction",
    "check_fidelity",
    "env_repr",
]
