"""Metering: count every call's tokens, cost, cache hits and retries, per ``tag``.

The ledger is the outermost wrapper, so it sees cache hits (which cost nothing) as well
as network calls. ``model.ledger.summary()`` is what reports print and what a study's
record stores.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from silicolab.core.errors import ConfigError, LLMError
from silicolab.llm.base import LanguageModel, ModelWrapper
from silicolab.llm.types import Completion, Request


@dataclass(frozen=True)
class Prices:
    """Prices in US dollars per million tokens, and where they come from.

    A price is *unknown* (``None``, the default: ``Prices()``) or *known*; known prices of
    zero are *free* (a model on this machine, the scripted test double). The difference
    matters to a spending limit: a free model's calls are never refused, a model whose
    price is unknown cannot be held to a limit at all. ``source`` says where the prices
    come from (``"config"``, ``"built-in, as of 2025-08-07"``, ``"--price-in/--price-out"``)
    and takes no part in comparisons.
    """

    input_per_mtok: float | None = None
    output_per_mtok: float | None = None
    source: str = field(default="", compare=False)

    @classmethod
    def parse(
        cls, prices: Prices | Mapping[str, float] | None, *, source: str = "config"
    ) -> Prices:
        """Accept ``Prices``, ``{"input": 0.15, "output": 0.6}`` (per million tokens; a
        missing key is 0) or None (unknown)."""
        if prices is None:
            return cls()
        if isinstance(prices, Prices):
            return prices
        unknown = set(prices) - {"input", "output"}
        if unknown:
            raise ConfigError(
                f"unknown price keys {sorted(unknown)}: give prices as "
                "{'input': <USD per 1M input tokens>, 'output': <USD per 1M output tokens>}"
            )
        values = [prices.get(name, 0.0) for name in ("input", "output")]
        if not all(_is_price(v) for v in values):
            raise ConfigError(
                f"prices {dict(prices)} are not numbers >= 0: give prices as "
                "{'input': <USD per 1M input tokens>, 'output': <USD per 1M output tokens>}"
            )
        return cls(float(values[0]), float(values[1]), source=source)

    @property
    def known(self) -> bool:
        """Whether both prices are known (zero included)."""
        return self.input_per_mtok is not None and self.output_per_mtok is not None

    @property
    def free(self) -> bool:
        """Whether the prices are known to be zero: calls that cost nothing."""
        return self.known and not (self.input_per_mtok or self.output_per_mtok)

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        """The USD cost of a call with these token counts; ``None`` when the price is
        unknown (never a silent 0)."""
        if self.input_per_mtok is None or self.output_per_mtok is None:
            return None
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


def _is_price(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


@dataclass
class _Tally:
    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    retries: int = 0
    errors: int = 0
    latency_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": round(self.cost, 8),
            "retries": self.retries,
            "errors": self.errors,
            "latency_s": round(self.latency_s, 6),
        }


@dataclass
class Ledger:
    """Thread-safe running totals of a model's usage.

    ``input_tokens``/``output_tokens``/``cost`` count only calls that reached the server
    (billed work); cache hits are counted in ``cache_hits`` and cost nothing.
    """

    prices: Prices = field(default_factory=Prices)
    _total: _Tally = field(default_factory=_Tally)
    _by_tag: dict[str, _Tally] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, tag: str, completion: Completion) -> None:
        """Add one finished call."""
        # a call at an unknown price is counted as 0 here: ``prices.known`` says so
        usage = completion.usage
        billed = self.prices.cost(usage.input_tokens, usage.output_tokens)
        cost = 0.0 if completion.cached or billed is None else billed
        with self._lock:
            for tally in (self._total, self._by_tag.setdefault(tag, _Tally())):
                tally.calls += 1
                tally.latency_s += completion.latency_s
                if completion.cached:
                    tally.cache_hits += 1
                    continue
                tally.input_tokens += completion.usage.input_tokens
                tally.output_tokens += completion.usage.output_tokens
                tally.cost += cost
                tally.retries += max(0, completion.attempts - 1)

    def record_error(self, tag: str, attempts: int) -> None:
        """Add one call that failed for good."""
        with self._lock:
            for tally in (self._total, self._by_tag.setdefault(tag, _Tally())):
                tally.calls += 1
                tally.errors += 1
                tally.retries += max(0, attempts - 1)

    def summary(self) -> dict[str, Any]:
        """Totals and a ``by_tag`` breakdown as plain JSON-ready data."""
        with self._lock:
            out = self._total.as_dict()
            out["by_tag"] = {tag: t.as_dict() for tag, t in sorted(self._by_tag.items())}
        return out

    def absorb(self, summary: Mapping[str, Any]) -> None:
        """Add another ledger's :meth:`summary` (e.g. a cluster's workers') to this one."""
        with self._lock:
            for tally, numbers in [
                (self._total, summary),
                *((self._by_tag.setdefault(t, _Tally()), n) for t, n in summary["by_tag"].items()),
            ]:
                for name in _Tally.__dataclass_fields__:
                    setattr(tally, name, getattr(tally, name) + numbers.get(name, 0))

    def reset(self) -> None:
        with self._lock:
            self._total = _Tally()
            self._by_tag = {}


class MeteredModel(ModelWrapper):
    """The outermost wrapper: records every call (hit, miss or failure) in a :class:`Ledger`."""

    def __init__(self, inner: LanguageModel, prices: Prices | Mapping[str, float] | None = None):
        super().__init__(inner)
        self._ledger = Ledger(prices=Prices.parse(prices))

    @property
    def ledger(self) -> Ledger:
        return self._ledger

    def __reduce_ex__(self, protocol: Any) -> Any:
        # Shipped to a cluster's workers, the model becomes a client of services the
        # driver owns, so limits, cache and ledger stay global (silicolab.llm.ray).
        from silicolab.core.remote import current_session

        session = current_session()
        if session is None:
            return super().__reduce_ex__(protocol)
        from silicolab.llm.ray import ship

        return ship(self, session)

    async def acomplete(self, request: Request) -> Completion:
        try:
            completion = await self.inner.acomplete(request)
        except LLMError as err:
            self._ledger.record_error(request.tag, err.attempts)
            raise
        self._ledger.record(request.tag, completion)
        return completion
