"""Scoring and selection of programs: PSIS-LOO first, failures last (spec §14)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from silicolab.scientists.boxinggym.apprentice.execute import ProgramRun


@dataclass
class Candidate:
    """One proposed program after its repairs: the final ``program`` text (None if the
    reply held no code), its last ``run``, the ``errors`` (sandbox reports) of the versions
    that failed before it, and the raw ``replies``."""

    program: str | None
    run: ProgramRun | None
    errors: list[str] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the final version ran."""
        return self.program is not None and self.run is not None and self.run.ok

    @property
    def elpd_loo(self) -> float:
        """The PSIS-LOO score; WAIC's where PSIS-LOO is undefined (a log-likelihood that
        does not vary over the draws gives NaN); ``-inf`` for a program that never ran or
        was not scored."""
        if not self.ok or self.run is None:
            return -math.inf
        for value in (self.run.elpd_loo, self.run.elpd_waic):
            if value is not None and math.isfinite(value):
                return float(value)
        return -math.inf

    def score_text(self) -> str:
        """The score as shown to the statistician and the critic."""
        if not self.ok or self.run is None:
            return "did not run"
        if self.run.elpd_loo is None:
            return "ran (prior predictive, no score)"
        waic = self.run.elpd_waic
        extra = "" if waic is None else f", WAIC elpd {waic:.2f}"
        return f"elpd_loo {self.run.elpd_loo:.2f} (se {self.run.loo_se or 0:.2f}){extra}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready record."""
        return {
            "program": self.program,
            "ok": self.ok,
            "errors": list(self.errors),
            "run": None if self.run is None else self.run.to_dict(),
        }


def rank(candidates: list[Candidate]) -> list[Candidate]:
    """Best first: programs that ran, by ``elpd_loo`` descending (stable for ties), then
    the ones that did not."""
    return sorted(candidates, key=lambda c: (not c.ok, -c.elpd_loo))


def best(candidates: list[Candidate]) -> Candidate | None:
    """The best program that ran, or None."""
    ranked = rank(candidates)
    return ranked[0] if ranked and ranked[0].ok else None
