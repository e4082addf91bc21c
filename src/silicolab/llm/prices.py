"""Built-in, dated prices of common hosted models, and which price a model is billed at.

A spending limit (``study run --max-cost``) can only hold when every paid model's price
is known. :func:`resolve_prices` decides it, first match wins:

1. prices given with the model (``prices:`` of its role in ``silicolab.yaml``, the
   command line's ``--price-in/--price-out``, ``load_model(prices=...)``);
2. free: the scripted test double and servers on this machine (``local``, ``llamacpp:``,
   ``ollama:``, ``lmstudio:``, ``vllm:``: the providers that need no key);
3. this table, for OpenAI's and Anthropic's own APIs (no ``base_url`` of your own: a
   proxy or another server may bill differently);
4. otherwise unknown.

The table holds list prices in US dollars per million input and output tokens as
published on the date of each entry (``as_of``). Providers change prices: when yours
differ, give them in ``silicolab.yaml`` (they override the table). Batch, cached-input
and long-context rates are not modelled: the table prices every call at the standard rate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from silicolab.llm.ledger import Prices

#: Where free prices come from, as :attr:`Prices.source` says it.
FREE_SOURCE = "free: scripted or on this machine"


@dataclass(frozen=True)
class PriceEntry:
    """One model family's standard prices (USD per 1M tokens) on the date ``as_of``."""

    input: float
    output: float
    as_of: str

    def prices(self) -> Prices:
        return Prices(self.input, self.output, source=f"built-in, as of {self.as_of}")


_OPENAI_DAY = "2025-11-24"
_ANTHROPIC_DAY = "2025-11-24"

#: (provider, model family) -> prices. A model id matches its family exactly, or with a
#: dated snapshot (``-2024-07-18``, ``-20241022``), ``-latest`` or ``-0`` after it; an
#: exact snapshot entry (``gpt-4o-2024-05-13``) wins over its family's.
BUILT_IN: dict[tuple[str, str], PriceEntry] = {
    ("openai", "gpt-5"): PriceEntry(1.25, 10.00, _OPENAI_DAY),
    ("openai", "gpt-5-mini"): PriceEntry(0.25, 2.00, _OPENAI_DAY),
    ("openai", "gpt-5-nano"): PriceEntry(0.05, 0.40, _OPENAI_DAY),
    ("openai", "gpt-4.1"): PriceEntry(2.00, 8.00, _OPENAI_DAY),
    ("openai", "gpt-4.1-mini"): PriceEntry(0.40, 1.60, _OPENAI_DAY),
    ("openai", "gpt-4.1-nano"): PriceEntry(0.10, 0.40, _OPENAI_DAY),
    ("openai", "gpt-4o"): PriceEntry(2.50, 10.00, _OPENAI_DAY),
    ("openai", "gpt-4o-2024-05-13"): PriceEntry(5.00, 15.00, _OPENAI_DAY),
    ("openai", "gpt-4o-mini"): PriceEntry(0.15, 0.60, _OPENAI_DAY),
    ("openai", "o1"): PriceEntry(15.00, 60.00, _OPENAI_DAY),
    ("openai", "o3"): PriceEntry(2.00, 8.00, _OPENAI_DAY),
    ("openai", "o3-mini"): PriceEntry(1.10, 4.40, _OPENAI_DAY),
    ("openai", "o4-mini"): PriceEntry(1.10, 4.40, _OPENAI_DAY),
    ("openai", "gpt-4-turbo"): PriceEntry(10.00, 30.00, _OPENAI_DAY),
    ("openai", "gpt-3.5-turbo"): PriceEntry(0.50, 1.50, _OPENAI_DAY),
    ("anthropic", "claude-opus-4-5"): PriceEntry(5.00, 25.00, _ANTHROPIC_DAY),
    ("anthropic", "claude-opus-4-1"): PriceEntry(15.00, 75.00, _ANTHROPIC_DAY),
    ("anthropic", "claude-opus-4"): PriceEntry(15.00, 75.00, _ANTHROPIC_DAY),
    ("anthropic", "claude-sonnet-4-5"): PriceEntry(3.00, 15.00, _ANTHROPIC_DAY),
    ("anthropic", "claude-sonnet-4"): PriceEntry(3.00, 15.00, _ANTHROPIC_DAY),
    ("anthropic", "claude-haiku-4-5"): PriceEntry(1.00, 5.00, _ANTHROPIC_DAY),
    ("anthropic", "claude-3-7-sonnet"): PriceEntry(3.00, 15.00, _ANTHROPIC_DAY),
    ("anthropic", "claude-3-5-sonnet"): PriceEntry(3.00, 15.00, _ANTHROPIC_DAY),
    ("anthropic", "claude-3-5-haiku"): PriceEntry(0.80, 4.00, _ANTHROPIC_DAY),
    ("anthropic", "claude-3-opus"): PriceEntry(15.00, 75.00, _ANTHROPIC_DAY),
    ("anthropic", "claude-3-haiku"): PriceEntry(0.25, 1.25, _ANTHROPIC_DAY),
}
_SNAPSHOT = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest|-0)?")


def _provider_and_model(spec: str) -> tuple[str, str] | None:
    from silicolab.core.errors import ConfigError
    from silicolab.llm.factory import parse_spec

    try:
        return parse_spec(spec)
    except ConfigError:
        return None


def is_free_provider(provider: str) -> bool:
    """Whether calls to ``provider``'s models cost nothing per token: the scripted test
    double and the servers on this machine (the providers that need no key)."""
    from silicolab.llm.factory import PROVIDERS

    if provider == "scripted":
        return True
    known = PROVIDERS.get(provider)
    return known is not None and known.key_env is None


def builtin_prices(spec: str) -> Prices | None:
    """The table's prices of ``spec`` (``"openai:gpt-4o-mini"``,
    ``"anthropic:claude-3-5-haiku-latest"``), known-free prices for scripted and local
    specs, or ``None`` when the price is unknown."""
    found = _provider_and_model(spec)
    if found is None:
        return None
    provider, model = found
    if is_free_provider(provider):
        return Prices(0.0, 0.0, source=FREE_SOURCE)
    exact = BUILT_IN.get((provider, model))
    if exact is not None:
        return exact.prices()
    for (owner, family), entry in BUILT_IN.items():
        rest = model[len(family) :]
        if owner == provider and model.startswith(family) and _SNAPSHOT.fullmatch(rest):
            return entry.prices()
    return None


def resolve_prices(
    spec: str,
    given: Prices | Mapping[str, float] | None = None,
    *,
    base_url: str | None = None,
) -> Prices:
    """The prices a call to ``spec`` is billed at: ``given`` when it is known, else the
    built-in table's (free for scripted and local specs; for OpenAI and Anthropic only
    without a ``base_url`` of your own), else unknown (``Prices()``)."""
    prices = Prices.parse(given)
    if prices.known:
        return prices
    found = builtin_prices(spec)
    if found is None:
        return prices
    provider = (_provider_and_model(spec) or ("", ""))[0]
    if base_url and not is_free_provider(provider):
        return prices  # another server than the provider's own: its price is not ours
    return found


__all__ = [
    "BUILT_IN",
    "FREE_SOURCE",
    "PriceEntry",
    "builtin_prices",
    "is_free_provider",
    "resolve_prices",
]
