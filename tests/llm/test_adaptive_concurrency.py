"""Adaptive concurrency (issue 28): the window halves on 429s and timeouts, grows back by
one per window of successes, and never leaves [1, max_concurrency].

Measured at the real :class:`FakeLLMServer` on 127.0.0.1: each answered request records
how many requests the server held at that moment. Counts only, no timing asserts."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from tests.support.openai_server import Fault

from silicolab.llm import load_model
from silicolab.llm.limits import AdaptiveConcurrency


def recording(server_box: list[Any], readings: list[int]) -> Any:
    """A reply callable that notes the server's in-flight count when it answers."""

    def reply(body: dict[str, Any]) -> str:
        readings.append(server_box[0].stats.in_flight)
        return "ok"

    return reply


async def calls(model: Any, label: str, n: int) -> None:
    await asyncio.gather(*(model.agenerate(f"{label} {i}") for i in range(n)))


def test_the_window_halves_once_per_window_and_grows_back_by_one() -> None:
    window = AdaptiveConcurrency(8)
    sent = window.epoch
    for _ in range(5):  # five calls of the same window meet the same overload
        window.congested(sent, "HTTP 429")
    assert window.limit == 4
    window.congested(window.epoch, "HTTP 429")
    window.congested(window.epoch, "a timeout")
    window.congested(window.epoch, "a timeout")
    assert window.limit == 1
    window.congested(window.epoch, "a timeout")
    assert window.limit == 1  # never below one
    grown = []
    for _ in range(100):
        window.succeeded()
        grown.append(window.limit)
    assert max(grown) == 8 and grown[-1] == 8  # never above the configured limit
    # +1 after `limit` successes: 1 -> 2 after 1, -> 3 after 2 more, ... -> 8 after 28
    assert grown.index(8) + 1 == sum(range(1, 8))
    assert [(c.old, c.new) for c in window.changes[:5]] == [(8, 4), (4, 2), (2, 1), (1, 2), (2, 3)]
    fixed = AdaptiveConcurrency(8, adaptive=False)
    fixed.congested(fixed.epoch, "HTTP 429")
    assert fixed.limit == 8 and not fixed.changes


async def test_in_flight_drops_after_429s_and_recovers(llm_server_factory, caplog) -> None:
    box: list[Any] = []
    readings: list[int] = []
    server = llm_server_factory(latency_s=0.2, reply=recording(box, readings))
    box.append(server)
    model = load_model("openai:fake-model", base_url=server.base_url, max_concurrency=8)

    await calls(model, "warm", 16)
    assert max(readings) == 8 and server.stats.max_in_flight == 8
    readings.clear()
    server.script_faults([Fault("429", retry_after=0)] * 8)  # the next window all refused
    with caplog.at_level(logging.INFO, logger="silicolab.llm"):
        await calls(model, "after", 60)

    assert server.stats.faults_by_kind == {"429": 8}
    window = model.concurrency
    assert [(c.old, c.new) for c in window.changes] == [(8, 4), (4, 5), (5, 6), (6, 7), (7, 8)]
    assert window.changes[0].reason == "after HTTP 429"
    assert "concurrency 8 -> 4 after HTTP 429" in caplog.text
    # the first answers after the refusals were served under the halved window ...
    assert max(readings[:4]) <= 4
    # ... which grew back: 4 + 5 + 6 + 7 successes later the full window was allowed again
    assert window.limit == 8
    assert max(readings) <= 8 and server.stats.max_in_flight <= 8
    readings.clear()
    await calls(model, "recovered", 16)
    assert max(readings) == 8
    assert model.ledger.summary()["errors"] == 0
    assert model.ledger.summary()["retries"] == 8


async def test_timeouts_halve_the_window_and_other_faults_do_not(llm_server_factory) -> None:
    server = llm_server_factory(latency_s=0.05, timeout_hang_s=5.0)
    model = load_model(
        "openai:fake-model", base_url=server.base_url, max_concurrency=4, timeout_s=0.5
    )
    server.script_faults(["500", "malformed"])
    await calls(model, "faulty", 4)
    assert model.concurrency.changes == []  # a server error is not overload
    server.script_faults([Fault("timeout", hang_s=5.0)])
    await calls(model, "slow", 4)
    change = model.concurrency.changes[0]
    assert (change.old, change.new, change.reason) == (4, 2, "after a timeout")
    assert server.stats.max_in_flight <= 4


async def test_a_fixed_window_stays_at_the_limit(llm_server_factory) -> None:
    server = llm_server_factory(latency_s=0.05, faults=[Fault("429", retry_after=0)] * 4)
    model = load_model(
        "openai:fake-model",
        base_url=server.base_url,
        max_concurrency=4,
        adaptive_concurrency=False,
    )
    await calls(model, "fixed", 8)
    assert model.concurrency.limit == 4 and model.concurrency.changes == []
    assert model.ledger.summary()["retries"] == 4


@pytest.mark.parametrize("max_concurrency", [None])
async def test_no_limit_means_no_window(llm_server, max_concurrency) -> None:
    model = load_model(
        "openai:fake-model", base_url=llm_server.base_url, max_concurrency=max_concurrency
    )
    await calls(model, "free", 3)
    assert model.concurrency is None
