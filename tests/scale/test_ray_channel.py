"""The batched connection between a worker and the LLM service (no cluster needed): the
service's ``exchange`` and the worker's :class:`Channel` keep one global limit, an exact
ledger and the cache, however requests are batched, cancelled or abandoned."""

from __future__ import annotations

import asyncio
from typing import Any

from silicolab.llm.base import LanguageModel
from silicolab.llm.ledger import Prices
from silicolab.llm.ray._channel import Channel
from silicolab.llm.ray._service import LLMService, ServiceModel
from silicolab.llm.types import Completion, Request, Usage


class _Method:
    """``handle.method.remote(...)`` as a Ray actor handle has it, run on this loop."""

    def __init__(self, owner: _Handle, name: str):
        self.owner, self.name = owner, name

    def remote(self, *args: Any) -> asyncio.Task[Any]:
        self.owner.calls += 1
        return asyncio.ensure_future(getattr(self.owner.service, self.name)(*args))


class _Handle:
    """An in-process stand-in for the service's actor handle, counting messages."""

    def __init__(self, service: LLMService):
        self.service, self.calls = service, 0

    def __getattr__(self, name: str) -> _Method:
        return _Method(self, name)


class _Backend(LanguageModel):
    """A backend answering after ``latency`` seconds, recording how many calls overlap."""

    def __init__(self, latency: float = 0.01):
        self.latency, self.now, self.most, self.calls = latency, 0, 0, 0

    def identity(self) -> str:
        return "test-backend"

    async def acomplete(self, request: Request) -> Completion:
        self.now += 1
        self.calls += 1
        self.most = max(self.most, self.now)
        try:
            await asyncio.sleep(self.latency)
        finally:
            self.now -= 1
        return Completion(f"answer to {request.messages[-1]['content']}", Usage(5, 2))


def _service(limit: int, *, cache: str | None = None, lease_s: float = 60.0) -> LLMService:
    return LLMService(cache_path=cache, max_concurrency=limit, requests_per_minute=None,
                      tokens_per_minute=1e6, prices=Prices(), lease_s=lease_s)  # fmt: skip


def test_batched_calls_keep_the_limit_and_an_exact_ledger(tmp_path: Any) -> None:
    async def scenario() -> None:
        service = _service(3, cache=str(tmp_path / "c.sqlite"))
        handle, backend = _Handle(service), _Backend()
        workers = [ServiceModel(backend, handle, prices=Prices(), tokens=True) for _ in range(2)]
        prompts = [f"q{i % 40}" for i in range(100)]  # 40 distinct prompts, 60 repeats
        answers = await asyncio.gather(
            *(workers[i % 2].agenerate(p, tag="t") for i, p in enumerate(prompts))
        )
        assert [a.text for a in answers] == [f"answer to {p}" for p in prompts]
        assert 1 <= backend.most <= 3  # one limit for both workers' 100 calls
        assert backend.calls == 40  # repeats were answered by the cache or shared
        summary = await service.summary()
        assert (summary["calls"], summary["cache_hits"]) == (100, 60)
        assert summary["max_concurrent_calls"] <= 3 and not service.slots._leases
        assert handle.calls < 2 * len(prompts)  # batched: fewer messages than begin + end

    asyncio.run(scenario())


def test_a_grant_for_a_cancelled_call_is_given_back() -> None:
    async def scenario() -> None:
        service = _service(1)
        channel = Channel(_Handle(service))
        _, lease = await channel.begin("a", "t", 0)
        waiter = asyncio.create_task(channel.begin("b", "t", 0))
        await asyncio.sleep(0.05)
        waiter.cancel()  # the unit is cancelled while it waits for the one slot
        await channel.end("a", "t", lease, 0, Completion("x", Usage(1, 1)), None)
        hit, third = await asyncio.wait_for(channel.begin("c", "t", 0), timeout=5)
        assert hit is None and third is not None  # "b"'s grant came back, "c" got a slot
        await channel.end("c", "t", third, 0, Completion("y", Usage(1, 1)), None)
        for _ in range(20):
            await asyncio.sleep(0.01)
        assert not service.slots._leases and service.slots.max_held == 1
        assert (await service.summary())["calls"] == 2

    asyncio.run(scenario())


def test_slots_granted_to_a_dead_worker_come_back_after_the_lease() -> None:
    async def scenario() -> None:
        service = _service(2, lease_s=0.2)
        # a worker sends two begins, is granted both slots, then dies before ending them
        granted = await service.exchange("dead", [(1, "a", "t", 0), (2, "b", "t", 0)], [], False)
        assert sorted(g[0] for g in granted) == [1, 2] and all(g[2] for g in granted)
        alive = Channel(_Handle(service))
        leases = await asyncio.wait_for(
            asyncio.gather(alive.begin("c", "t", 0), alive.begin("d", "t", 0)), timeout=15
        )
        assert all(hit is None and lease is not None for hit, lease in leases)
        assert service.slots.max_held == 2  # never more than the limit, even while reclaiming

    asyncio.run(scenario())


def test_an_error_while_waiting_reaches_the_caller() -> None:
    async def scenario() -> None:
        class Broken:
            async def exchange(self, *args: Any) -> Any:
                raise ConnectionError("service gone")

        channel = Channel(_Handle(Broken()))  # type: ignore[arg-type]
        try:
            await asyncio.wait_for(channel.begin("a", "t", 0), timeout=5)
        except ConnectionError as exc:
            assert "service gone" in str(exc)
        else:  # pragma: no cover
            raise AssertionError("the begin should have failed")

    asyncio.run(scenario())


def test_a_dead_process_calls_are_closed_at_once() -> None:
    async def scenario() -> None:
        service = _service(2, cache=None, lease_s=600.0)
        dead, alive = "deadbeef", "cafe"
        # the dead process: a call on the wire from each of its two channels
        first = await service.exchange(f"{dead}:a", [(1, "k1", "t", 0)], [], False)
        await service.exchange(f"{dead}:b", [(2, "k2", "t", 0)], [], False)
        waiting = asyncio.ensure_future(
            service.exchange(f"{alive}:c", [(3, "k3", "t", 0)], [], True)
        )
        await asyncio.sleep(0.05)
        assert first[0][2] is not None and not waiting.done()  # both slots taken
        assert await service.forget(dead) == 2
        granted = await asyncio.wait_for(waiting, timeout=5)
        assert granted and granted[0][0] == 3 and granted[0][2] is not None
        summary = await service.summary()
        assert summary["slots_held"] == 1 and summary["max_concurrent_calls"] == 2
        assert summary["calls"] == 0  # closed, not counted
        assert await service.forget(dead) == 0  # idempotent

    asyncio.run(scenario())
