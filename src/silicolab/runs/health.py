"""How well a run's model behaved: counts that keep a failing model from looking like success.

Every unit of work (an episode, a condition, a debate question) reports a
:class:`UnitHealth`: how many steps it took and how many of them ended in a parse
failure, an invalid action, a skipped step or a model error, with one sample reply. A
:class:`RunHealth` adds them up, names the worst unit, and decides whether the run is
**degraded**: by default, when any unit had steps and every one of them failed. A
degraded run ends with status ``"degraded"`` and a nonzero exit (:data:`DEGRADED_EXIT`),
never ``"finished"`` with exit 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

#: The exit code of a command whose run ended degraded (2 is bad input, 1 a crash).
DEGRADED_EXIT = 3
#: The counters a unit reports, in the order they are shown.
COUNTERS = ("parse_failures", "invalid_actions", "skipped_steps", "model_errors")
_SAMPLE_CHARS = 160


@dataclass(kw_only=True)
class UnitHealth:
    """The counters of one unit of work. ``steps`` counts every step the model was asked
    to take; each failure counter counts steps that ended that way (a step counts once,
    under its final outcome)."""

    unit: str
    steps: int = 0
    parse_failures: int = 0
    invalid_actions: int = 0
    skipped_steps: int = 0
    model_errors: int = 0
    sample_reply: str = ""
    #: Set when the unit produced no usable result at all (e.g. a conversation that ended
    #: in an error, or a survey whose every answer was unusable), whatever its counts.
    unusable: bool = False

    @property
    def failed_steps(self) -> int:
        return sum(getattr(self, name) for name in COUNTERS)

    @property
    def all_failed(self) -> bool:
        """True when the unit is unusable or took steps and none of them succeeded."""
        return self.unusable or (self.steps > 0 and self.failed_steps >= self.steps)

    def note_failure(self, counter: str, reply: str | None = None) -> None:
        """Count one failed step under ``counter`` and keep the first sample reply."""
        if counter not in COUNTERS:
            raise ValueError(f"unknown health counter {counter!r}; use one of {COUNTERS}")
        setattr(self, counter, getattr(self, counter) + 1)
        if reply and not self.sample_reply:
            self.sample_reply = cut(reply)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UnitHealth:
        known = {"unit", "steps", "sample_reply", "unusable", *COUNTERS}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class RunHealth:
    """The health of a whole run: per-unit counters, totals and the degraded verdict."""

    units: list[UnitHealth] = field(default_factory=list)
    #: A run is degraded when more than this fraction of its units failed every step
    #: (the default 0.0 means: any such unit).
    max_failed_unit_fraction: float = 0.0

    @classmethod
    def of(cls, units: Iterable[UnitHealth], **options: Any) -> RunHealth:
        return cls(list(units), **options)

    def totals(self) -> dict[str, int]:
        out = {"units": len(self.units), "steps": sum(u.steps for u in self.units)}
        for name in COUNTERS:
            out[name] = sum(getattr(u, name) for u in self.units)
        out["failed_units"] = sum(u.all_failed for u in self.units)
        return out

    @property
    def worst(self) -> UnitHealth | None:
        """The unit with the largest share of failed steps (ties: the most failures)."""
        scored = [u for u in self.units if u.failed_steps]
        if not scored:
            return None
        return max(scored, key=lambda u: (u.failed_steps / max(u.steps, 1), u.failed_steps))

    @property
    def degraded(self) -> bool:
        failed = sum(u.all_failed for u in self.units)
        return bool(self.units) and failed / len(self.units) > self.max_failed_unit_fraction

    def summary_line(self) -> str:
        """One line for the console: totals, and when degraded the worst unit and a reply."""
        totals = self.totals()
        counts = ", ".join(f"{totals[n]} {n.replace('_', ' ')}" for n in COUNTERS)
        line = f"{totals['steps']} model steps in {totals['units']} units: {counts}"
        worst = self.worst
        if self.degraded and worst is not None:
            line = (
                f"DEGRADED: {totals['failed_units']} of {totals['units']} units failed every "
                f"step ({counts}); worst unit {worst.unit}: {worst.failed_steps}/{worst.steps} "
                f"steps failed, sample reply {worst.sample_reply!r}"
            )
        return line

    def to_dict(self) -> dict[str, Any]:
        return {
            "degraded": self.degraded,
            "totals": self.totals(),
            "worst_unit": self.worst.unit if self.worst else None,
            "units": [u.to_dict() for u in self.units],
        }


def cut(text: str, limit: int = _SAMPLE_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


__all__ = ["COUNTERS", "DEGRADED_EXIT", "RunHealth", "UnitHealth", "cut"]
