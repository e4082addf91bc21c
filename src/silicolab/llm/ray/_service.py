"""One limiter, one cache and one ledger for every worker of a Ray cluster.

When a :class:`~silicolab.runtime.RayExecutor` ships a function holding a model loaded by
:func:`~silicolab.llm.load_model` (ledger → cache → limits → retry → backend), the model
does not travel as it is: :meth:`MeteredModel.__reduce_ex__` calls :func:`ship`, which

* starts one :class:`LLMService` per model and batch, an async Ray actor pinned to the
  driver's node that owns what must be global: the concurrency slots and the
  requests/tokens-per-minute buckets (the same settings as the driver's
  :class:`~silicolab.llm.limits.LimitedModel`), the SQLite cache file (one writer, on the
  driver's disk) with the in-flight sharing of identical requests, and the ledger;
* ships instead a :class:`ServiceModel`: on the worker it keeps the retry layer and the
  backend (each worker sends its own HTTP requests) and asks the service before and after
  each call: ``begin`` (a cache hit, or a slot and the budget) and ``end`` (release the
  slot, correct the token budget, store the answer, count it). A worker's begins and
  ends travel batched (:mod:`silicolab.llm.ray._channel`, :meth:`LLMService.exchange`).

When a batch ends the calls the service counted are moved to the driver's model's ledger,
so ``model.ledger.summary()`` counts the calls of every worker; the service stays with
the model for its next batches (its per-minute budgets carry over, as locally) and Ray
stops it with the model or the driver. When a unit runner dies, the driver
tells the service (:meth:`LLMService.forget`), which closes that process's calls at once;
a slot whose holder died unnoticed is reclaimed after ``lease_s`` seconds: twice the
longest a call can last with its retries (:func:`lease_for`; 22 min for a 60 s timeout
and 5 retries of at most 60 s waits).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from typing import Any

from silicolab.core.errors import LLMError
from silicolab.core.fresh import wants_fresh
from silicolab.core.remote import RemoteSession
from silicolab.llm.base import LanguageModel, ModelWrapper, PerLoop
from silicolab.llm.cache import CachedModel, SQLiteCache, _as_hit, cache_key
from silicolab.llm.ledger import Ledger, MeteredModel, Prices
from silicolab.llm.limits import LimitedModel, TokenBucket
from silicolab.llm.ray._channel import Channel
from silicolab.llm.types import Completion, Request

#: How long a concurrency slot may be held before the service takes it back (its worker
#: is presumed dead), when the model does not say how long its longest call can take.
DEFAULT_LEASE_S = 1800.0
#: The longest a poll of a worker's channel waits for a grant before answering (empty).
POLL_S = 1.0


def lease_for(transport: LanguageModel) -> float:
    """Twice the longest a call through ``transport`` (retry layer and backend) can hold
    its slot: every attempt timing out, every retry waiting the longest backoff."""
    retries = getattr(transport, "max_retries", None)
    timeout = getattr(transport, "timeout_s", None)
    if not isinstance(retries, int) or not isinstance(timeout, int | float):
        return DEFAULT_LEASE_S
    wait = max(getattr(transport, "max_wait_s", 0.0), getattr(transport, "max_backoff_s", 0.0))
    return 2.0 * ((retries + 1) * timeout + retries * wait)


class _Slots:
    """At most ``limit`` leases at once; a lease older than ``lease_s`` is reclaimed."""

    def __init__(self, limit: int, lease_s: float):
        self.limit, self.lease_s = limit, lease_s
        self._leases: dict[int, float] = {}
        self._ids = itertools.count(1)
        self._freed = asyncio.Event()
        self.max_held = 0

    async def acquire(self) -> int:
        while len(self._leases) >= self.limit:
            now = time.monotonic()
            for lease, since in list(self._leases.items()):
                if now - since > self.lease_s:
                    del self._leases[lease]
            if len(self._leases) < self.limit:
                break
            self._freed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._freed.wait(), timeout=min(self.lease_s, 5.0))
        lease = next(self._ids)
        self._leases[lease] = time.monotonic()
        self.max_held = max(self.max_held, len(self._leases))
        return lease

    def release(self, lease: int | None) -> None:
        if lease is not None and self._leases.pop(lease, None) is not None:
            self._freed.set()


class LLMService:
    """The driver-side half of a shipped model (a Ray async actor; module docstring)."""

    def __init__(
        self,
        *,
        cache_path: str | None,
        max_concurrency: int | None,
        requests_per_minute: float | None,
        tokens_per_minute: float | None,
        prices: Prices,
        lease_s: float = DEFAULT_LEASE_S,
    ):
        self.cache = SQLiteCache(cache_path) if cache_path else None
        self.slots = _Slots(max_concurrency, lease_s) if max_concurrency else None
        self.requests = TokenBucket(requests_per_minute) if requests_per_minute else None
        self.tokens = TokenBucket(tokens_per_minute) if tokens_per_minute else None
        self.ledger = Ledger(prices=prices)
        self.lease_s = lease_s
        self._inflight: dict[str, asyncio.Future[Completion]] = {}
        self._parked: dict[str, dict[int, tuple[asyncio.Task[Any], str]]] = {}
        self._open: dict[str, dict[Any, str]] = {}  # client -> lease -> key, calls on the wire
        #: Messages received from channels (for benchmarks).
        self.messages = 0

    async def exchange(
        self, client: str, begins: list[tuple[Any, ...]], ends: list[Any], wait: bool
    ) -> list[tuple[int, Any, Any, BaseException | None]]:
        """One message of a worker's :class:`~silicolab.llm.ray._channel.Channel`: apply
        ``ends`` (freeing their slots), start ``begins`` (``(id, key, tag, reserve)``, plus
        ``True`` for a fresh call that skips the cache), and
        answer with this client's begins granted so far as ``(id, hit, lease, error)``.
        With ``wait`` (a poll), first wait up to :data:`POLL_S` for one to be granted."""
        self.messages += 1
        for end in ends:
            self._open.get(client, {}).pop(end[2], None)
            self.end(*end)
        parked = self._parked.setdefault(client, {})
        for ident, key, tag, reserve, *fresh in begins:
            begin = self.begin(key, tag, reserve, fresh=bool(fresh and fresh[0]))
            parked[ident] = (asyncio.ensure_future(begin), key)
        if parked:
            for _ in range(2):  # begins that need not wait complete within two steps
                await asyncio.sleep(0)
            if wait and not any(task.done() for task, _ in parked.values()):
                tasks = [task for task, _ in parked.values()]
                await asyncio.wait(tasks, timeout=POLL_S, return_when=asyncio.FIRST_COMPLETED)
        return self._collect(client)

    def _collect(self, client: str) -> list[tuple[int, Any, Any, BaseException | None]]:
        parked = self._parked.get(client, {})
        granted = []
        for ident in [i for i, (task, _) in parked.items() if task.done()]:
            task, key = parked.pop(ident)
            error = task.exception() if not task.cancelled() else asyncio.CancelledError()
            hit, lease = (None, None) if error is not None else task.result()
            if error is None and hit is None:
                self._open.setdefault(client, {})[lease] = key
            granted.append((ident, hit, lease, error))
        if not parked:
            self._parked.pop(client, None)
        return granted

    def _drop(self, task: asyncio.Task[Any], key: str) -> None:
        """A begin nobody will collect: cancel it (it gives back what it held), or free
        the slot it was granted, now or when it completes after all."""

        def free(done: asyncio.Task[Any]) -> None:
            if not done.cancelled() and done.exception() is None and done.result()[0] is None:
                self.end(key, "", done.result()[1], 0, None, None)

        if task.done():
            free(task)
        else:
            task.cancel()
            task.add_done_callback(free)  # a cancellation can lose a race with the grant

    async def forget(self, process: str) -> int:
        """The worker process ``process`` died: free at once the slots of its calls on the
        wire and of its begins granted but never collected, cancel its waiting begins, and
        let identical requests that waited for its calls make their own. Returns how
        many calls on the wire were closed (none counted: the server may have seen them)."""
        closed = 0
        clients = set(self._parked) | set(self._open)
        for client in [c for c in clients if c.split(":")[0] == process]:
            for task, key in self._parked.pop(client, {}).values():
                self._drop(task, key)
            for lease, key in self._open.pop(client, {}).items():
                self.end(key, "", lease, 0, None, None)
                closed += 1
        return closed

    async def begin(
        self, key: str, tag: str, reserve: int, fresh: bool = False
    ) -> tuple[Completion | None, Any]:
        """``(hit, None)`` for an answer already known, else ``(None, lease)`` once a slot
        and the per-minute budgets allow the call; a ``fresh`` call (a unit that
        ``--retry-failed`` reruns) is never answered from the cache, and its answer
        replaces the cached one."""
        if self.cache is not None:
            hit = None if fresh else self.cache.get(key) or await self._shared(key)
            if hit is not None:
                self.ledger.record(tag, hit)
                return hit, None
            self._inflight.setdefault(key, asyncio.get_running_loop().create_future())
        lease = None
        try:
            lease = await self.slots.acquire() if self.slots is not None else None
            if self.requests is not None:
                await self.requests.acquire(1)
            if self.tokens is not None:
                await self.tokens.acquire(reserve)
        except BaseException:  # cancelled (its worker died): give back what it held
            self.end(key, tag, lease, reserve, None, None)
            raise
        return None, lease

    async def _shared(self, key: str) -> Completion | None:
        """The answer of an identical call in flight, once it arrives (None if it fails)."""
        pending = self._inflight.get(key)
        if pending is None:
            return None
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(pending), timeout=self.lease_s)
        if pending.done() and not pending.cancelled() and pending.exception() is None:
            return _as_hit(pending.result())
        return None

    def end(
        self,
        key: str,
        tag: str,
        lease: Any,
        reserve: int,
        completion: Completion | None,
        attempts: int | None,
    ) -> None:
        """Close a call: free its slot; on success correct the token budget, store and
        count the answer; on a final failure (``attempts`` given) count the error."""
        if self.slots is not None:
            self.slots.release(lease)
        future = self._inflight.pop(key, None)
        if completion is None:
            if attempts is not None:
                self.ledger.record_error(tag, attempts)
            if future is not None and not future.done():
                future.cancel()
            return
        if self.tokens is not None:
            self.tokens.adjust(completion.usage.total_tokens - reserve)
        if self.cache is not None:
            self.cache.put(key, completion)
        self.ledger.record(tag, completion)
        if future is not None and not future.done():
            future.set_result(completion)

    async def drain(self) -> dict[str, Any]:
        """The ledger's summary since the last drain, which starts a new one."""
        summary = self.ledger.summary()
        self.ledger.reset()
        return summary

    async def summary(self) -> dict[str, Any]:
        """The ledger's summary, plus the most slots ever held at once."""
        max_held = self.slots.max_held if self.slots is not None else None
        held = len(self.slots._leases) if self.slots is not None else None
        return {
            **self.ledger.summary(),
            "max_concurrent_calls": max_held,
            "slots_held": held,
            "messages": self.messages,
        }


class ServiceModel(ModelWrapper):
    """The worker-side half: retry and backend local, limits, cache and ledger through
    the :class:`LLMService` (module docstring). Its own :attr:`ledger` counts this
    worker's calls (for per-unit usage); the service's counts everyone's."""

    def __init__(self, inner: LanguageModel, service: Any, *, prices: Prices, tokens: bool):
        super().__init__(inner)
        self.service = service
        self.tokens = tokens
        self._ledger = Ledger(prices=prices)
        self._channel = PerLoop(lambda: Channel(service))

    @property
    def ledger(self) -> Ledger:
        return self._ledger

    @property
    def channel(self) -> Channel:
        """This event loop's batched connection to the service."""
        return self._channel.get()

    async def acomplete(self, request: Request) -> Completion:
        key = cache_key(self.inner.identity(), request)
        reserve = (request.prompt_chars() + 3) // 4 + (request.max_tokens or 256)
        reserve = reserve if self.tokens else 0
        channel = self.channel
        hit, lease = await channel.begin(key, request.tag, reserve, wants_fresh())
        if hit is not None:
            self._ledger.record(request.tag, hit)
            return hit
        try:
            completion = await self.inner.acomplete(request)
        except LLMError as err:
            await channel.end(key, request.tag, lease, reserve, None, err.attempts)
            self._ledger.record_error(request.tag, err.attempts)
            raise
        except BaseException:
            channel.end_now(key, request.tag, lease, reserve, None, None)  # free the slot
            raise
        await channel.end(key, request.tag, lease, reserve, completion, None)
        self._ledger.record(request.tag, completion)
        return completion


def _layers(model: MeteredModel) -> tuple[SQLiteCache | None, LimitedModel | None, LanguageModel]:
    """The cache, the limits and what lies below them (retry and backend) of ``model``."""
    cache, limited, node = None, None, model.inner
    while isinstance(node, CachedModel | LimitedModel):
        if isinstance(node, CachedModel):
            cache = node.cache
        else:
            limited = node
        node = node.inner
    return cache, limited, node


def ship(model: MeteredModel, session: RemoteSession) -> tuple[Any, tuple[Any, ...]]:
    """The pickle reduction of ``model`` for ``session``'s workers: a :class:`ServiceModel`
    over the batch's :class:`LLMService` for this model (started on first use)."""
    _, limited, transport = _layers(model)
    service = session.service(("llm", id(model)), lambda: _start(model, session))
    tokens = limited is not None and limited._tokens is not None
    return _rebuild, (transport, service, model.ledger.prices, tokens)


def _rebuild(transport: LanguageModel, service: Any, prices: Prices, tokens: bool) -> ServiceModel:
    return ServiceModel(transport, service, prices=prices, tokens=tokens)


def _start(model: MeteredModel, session: RemoteSession) -> Any:
    """``model``'s service on the driver's node, started on first use and kept on the
    model for its later batches (Ray stops it with the model or the driver); when a batch
    ends, the calls it counted are moved to ``model.ledger``."""
    import ray

    job = ray.get_runtime_context().get_job_id()
    kept = getattr(model, "_ray_service", None)
    actor = kept[1] if kept is not None and kept[0] == job else _new_service(model, session)
    model._ray_service = (job, actor)  # type: ignore[attr-defined]

    def close() -> None:
        model.ledger.absorb(ray.get(actor.drain.remote()))

    session.on_close(close)
    session.on_worker_death(lambda process: actor.forget.remote(process))
    return actor


def _new_service(model: MeteredModel, session: RemoteSession) -> Any:
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    cache, limited, transport = _layers(model)
    config = {
        "lease_s": lease_for(transport),
        "cache_path": None if cache is None else str(cache.path.resolve()),
        "max_concurrency": None if limited is None else limited.max_concurrency,
        "requests_per_minute": _per_minute(limited, "_requests"),
        "tokens_per_minute": _per_minute(limited, "_tokens"),
        "prices": model.ledger.prices,
    }
    here = ray.get_runtime_context().get_node_id()
    return (
        ray.remote(LLMService)
        .options(
            name=f"{session.name}-llm-{id(model):x}",
            num_cpus=0,
            max_concurrency=10_000,
            scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False),
            runtime_env=session.runtime_env,
        )
        .remote(**config)
    )


def _per_minute(limited: LimitedModel | None, bucket: str) -> float | None:
    found = getattr(limited, bucket, None) if limited is not None else None
    return None if found is None else found.capacity


__all__ = ["DEFAULT_LEASE_S", "POLL_S", "LLMService", "ServiceModel", "ship"]
