"""A spending limit that holds during a run: :class:`Budget` and :class:`BudgetedModel`.

One :class:`Budget` is shared by every model of a run (scientist, subjects, coordinator).
``load_model(..., budget=b)`` puts a :class:`BudgetedModel` in the model's stack where a
network call is made, below the cache and the concurrency limits::

    ledger -> cache -> limits -> budget -> retry -> backend

so cache hits stay free and allowed, and a call that waited for a free slot is checked
when it gets one, not before. Once the actual spend (each answer's usage at the model's
prices, plus what earlier processes of the run spent) reaches the limit, every new paid
call raises :class:`~silicolab.core.errors.BudgetReached`; the calls already on the wire
finish and are counted, so the spend can pass the limit by at most the calls in flight.
A free model's calls (scripted, local) are never refused.

The budget lives in this process: a model with one cannot be shipped to a Ray cluster's
workers (pickling it raises a one-line :class:`~silicolab.core.errors.InputError`).
"""

from __future__ import annotations

import threading
from typing import Any

from silicolab.core.errors import BudgetReached, ConfigError, InputError
from silicolab.llm.base import LanguageModel, ModelWrapper
from silicolab.llm.ledger import Prices
from silicolab.llm.types import Completion, Request


class Budget:
    """A spending limit of ``limit_usd`` US dollars, ``spent_usd`` of it already spent
    (by earlier processes of a resumed run). Thread-safe."""

    def __init__(self, limit_usd: float, *, spent_usd: float = 0.0):
        if not _amount(limit_usd) or not _amount(spent_usd):
            raise InputError(
                f"a spending limit needs amounts >= 0 in USD, got limit {limit_usd!r} and "
                f"spent {spent_usd!r}"
            )
        self.limit_usd = float(limit_usd)
        self._spent = float(spent_usd)
        self._lock = threading.Lock()

    @property
    def spent_usd(self) -> float:
        """What the run has spent so far, in USD."""
        with self._lock:
            return self._spent

    @property
    def reached(self) -> bool:
        return self.spent_usd >= self.limit_usd

    def check(self) -> None:
        """Raise :class:`BudgetReached` once the spend has reached the limit."""
        spent = self.spent_usd
        if spent >= self.limit_usd:
            raise BudgetReached(self.limit_usd, spent)

    def add(self, usd: float) -> None:
        """Count ``usd`` more spent."""
        with self._lock:
            self._spent += usd

    def __repr__(self) -> str:
        return f"Budget(limit_usd={self.limit_usd:g}, spent_usd={self.spent_usd:.6f})"

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise InputError(
            "a spending limit holds on this machine only: a model with a budget cannot be "
            "shipped to a Ray cluster; run with --executor local, or without --max-cost"
        )


def _amount(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


class BudgetedModel(ModelWrapper):
    """Refuses a paid call once ``budget`` is spent, and counts each answer's cost at
    ``prices`` into it (module docstring). A model whose price is unknown cannot be held to
    a limit: its calls are refused with a :class:`ConfigError` naming the fix."""

    def __init__(self, inner: LanguageModel, budget: Budget, prices: Prices):
        super().__init__(inner)
        self.budget = budget
        self.prices = prices

    async def acomplete(self, request: Request) -> Completion:
        if self.prices.free:
            return await self.inner.acomplete(request)
        if not self.prices.known:
            raise ConfigError(
                f"the price of {self.spec} is unknown, so a spending limit cannot hold: "
                "give its prices (load_model(prices={'input': ..., 'output': ...}), or "
                "prices: in silicolab.yaml)"
            )
        self.budget.check()
        completion = await self.inner.acomplete(request)
        usage = completion.usage
        self.budget.add(self.prices.cost(usage.input_tokens, usage.output_tokens) or 0.0)
        return completion


__all__ = ["Budget", "BudgetedModel"]
