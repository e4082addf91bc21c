"""Prices: unknown is not free, the built-in dated table, and a budget that holds.

Before, ``Prices()`` meant 0/0, unknown and free at once, no model had a built-in price,
and nothing watched the actual spend.
"""

from __future__ import annotations

import pickle
import threading
from pathlib import Path

import pytest

from silicolab.core.errors import BudgetReached, ConfigError, InputError
from silicolab.llm import Prices, load_model
from silicolab.llm.budget import Budget
from silicolab.llm.prices import BUILT_IN, builtin_prices, resolve_prices


def test_unknown_prices_are_not_free() -> None:
    for unknown in (Prices(), Prices.parse(None)):
        assert not unknown.known and not unknown.free
        assert unknown.cost(1000, 1000) is None  # never a silent $0
    free = Prices(0.0, 0.0)
    assert free.known and free.free and free.cost(1000, 1000) == 0.0
    paid = Prices.parse({"input": 0.15, "output": 0.6})
    assert paid.known and not paid.free and paid.source == "config"
    assert paid.cost(1_000_000, 1_000_000) == pytest.approx(0.75)
    assert paid == Prices(0.15, 0.6, source="elsewhere")  # the source takes no part
    assert Prices.parse({"input": 2}) == Prices(2.0, 0.0)  # a missing key is 0, as before
    for bad in ({"input": -1, "output": 1}, {"input": "cheap", "output": 1}):
        with pytest.raises(ConfigError, match="not numbers >= 0"):
            Prices.parse(bad)


def test_the_built_in_table_knows_common_models_with_a_date() -> None:
    mini = builtin_prices("openai:gpt-4o-mini")
    assert mini == Prices(0.15, 0.6) and mini.source.startswith("built-in, as of 20")
    assert builtin_prices("openai:gpt-4o-mini-2024-07-18") == mini  # a dated snapshot
    assert builtin_prices("openai:gpt-4o") == Prices(2.5, 10.0)
    assert builtin_prices("openai:gpt-4o-2024-05-13") == Prices(5.0, 15.0)  # its own price
    assert builtin_prices("anthropic:claude-3-5-haiku-latest") == Prices(0.8, 4.0)
    assert builtin_prices("anthropic:claude-sonnet-4-5-20250929") == Prices(3.0, 15.0)
    for family in ("gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "o3-mini"):
        assert builtin_prices(f"openai:{family}") is not None, family
    # another model that merely starts with a family's name is not that family
    for unknown in ("openai:gpt-4o-audio-preview", "openai:fake", "groq:llama-3.1-8b", "bad"):
        assert builtin_prices(unknown) is None, unknown
    for free in ("scripted", "scripted:world", "local", "local:smollm2", "ollama:llama3",
                 "llamacpp:m", "lmstudio:m", "vllm:m"):  # fmt: skip
        assert builtin_prices(free).free, free
    assert all(len(entry.as_of) == 10 for entry in BUILT_IN.values())


def test_configured_prices_win_and_another_server_is_not_the_providers() -> None:
    assert resolve_prices("openai:gpt-4o-mini", {"input": 1, "output": 2}) == Prices(1.0, 2.0)
    assert resolve_prices("openai:gpt-4o-mini") == Prices(0.15, 0.6)
    proxy = resolve_prices("openai:gpt-4o-mini", base_url="http://127.0.0.1:9/v1")
    assert not proxy.known  # a server of your own may bill differently
    assert resolve_prices("ollama:m", base_url="http://gpu-box:11434/v1").free


def test_load_model_bills_at_the_resolved_prices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    assert load_model("openai:gpt-4o-mini").ledger.prices == Prices(0.15, 0.6)
    assert load_model("scripted").ledger.prices.free
    fake = load_model("openai:fake", base_url="http://127.0.0.1:9/v1")
    assert not fake.ledger.prices.known


def _paid(budget: Budget, tmp_path: Path, name: str = "m") -> object:
    """A scripted model whose every answer ("a b c") costs $3: 3 output tokens at $1M."""
    return load_model(
        f"scripted:{name}", default="a b c", prices={"input": 0, "output": 1e6},
        cache_path=tmp_path / "cache.sqlite", budget=budget,
    )  # fmt: skip


def test_a_budget_stops_new_paid_calls_but_not_cache_hits(tmp_path: Path) -> None:
    budget = Budget(5.0)
    model = _paid(budget, tmp_path)
    model.generate("one")
    model.generate("two")  # $6 spent: the limit is reached
    assert budget.reached and budget.spent_usd == pytest.approx(6.0)
    with pytest.raises(BudgetReached, match=r"spending limit \$5 reached \(\$6.0000 spent\)"):
        model.generate("three")
    assert model.generate("one").cached  # a cache hit is free and allowed
    summary = model.ledger.summary()
    assert (summary["calls"], summary["cache_hits"], summary["cost"]) == (3, 1, 6.0)
    # one budget for every model of a run, counting what earlier processes spent
    shared = Budget(10.0, spent_usd=8.0)
    first, second = _paid(shared, tmp_path, "x"), _paid(shared, tmp_path, "y")
    first.generate("fresh")
    with pytest.raises(BudgetReached) as stop:
        second.generate("fresh")
    assert stop.value.exit_code == 4 and stop.value.reason.startswith("spending limit $10 ")


def test_free_models_are_never_refused_and_unknown_prices_cannot_be_limited() -> None:
    # a spent budget of $0: the free scripted model still answers
    spent = Budget(0.0)
    assert load_model("scripted", default="ok", budget=spent).generate("hi").text == "ok"
    unknown = load_model("scripted", default="ok", prices=Prices(), budget=spent)
    assert unknown.ledger.prices.free  # unknown given prices: the table's, free
    assert unknown.generate("hello").text == "ok"
    model = load_model(
        "openai:fake", base_url="http://127.0.0.1:9/v1", budget=Budget(100.0), max_retries=0
    )
    with pytest.raises(ConfigError, match="the price of openai:fake is unknown"):
        model.generate("hi")


def test_budget_counts_from_many_threads_and_stays_on_this_machine() -> None:
    budget = Budget(1e9)

    def spend() -> None:
        for _ in range(1000):
            budget.add(0.001)

    threads = [threading.Thread(target=spend) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert budget.spent_usd == pytest.approx(8.0)
    with pytest.raises(InputError, match="holds on this machine only"):
        pickle.dumps(budget)
    with pytest.raises(InputError, match="amounts >= 0"):
        Budget(-1)
    again = pickle.loads(pickle.dumps(BudgetReached(2.0, 3.0)))
    assert (again.limit_usd, again.spent_usd, again.reason) == (2.0, 3.0, again.reason)
