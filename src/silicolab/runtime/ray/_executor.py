"""The Ray executor: the same interface as the local executors, on a cluster.

:class:`RayExecutor` subclasses :class:`~silicolab.runtime.base.Executor`, so resume,
``events.jsonl`` (one event per finished unit, written by the driver as results arrive),
ordering, the error policy and the progress bar are the local ones. Only *how one call is
made* differs:

* a plain function runs as a Ray task of ``cpus_per_unit`` CPUs (CPU-bound units:
  reference scientists, discovery algorithms), spread over the nodes
  (:data:`TASK_STRATEGY`); a worker process killed mid-unit is retried by Ray up to
  ``max_retries`` times;
* a coroutine function runs on **unit runners**, one async actor per node, each with an
  event loop running its share of the ``concurrency`` units at once (LLM-bound units
  wait on the network, not on a CPU), fed in chunks (:mod:`silicolab.runtime.ray._runner`);
  a killed runner is restarted and its unfinished units are submitted again.

Tasks and runners get the ``runtime_env`` that puts a source tree on ``PYTHONPATH`` only
when a node's workers could not import this silicolab otherwise (:func:`runtime_env_for`).

The function is serialized once per batch, inside :func:`silicolab.core.remote.shipping`,
so a language model inside it ships as a worker-side client of services the driver owns
(one limiter, cache and ledger for the whole cluster: :mod:`silicolab.llm.ray._service`).
Ray is imported only here, when a command checks its executor
(:meth:`~silicolab.runtime.ExecutorChoice.check`) or a batch starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import math
import signal
import socket
import threading
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from silicolab.core.errors import InputError
from silicolab.core.remote import RemoteSession, shipping, worker_runtime_env
from silicolab.runtime.base import Executor, is_coroutine_function
from silicolab.runtime.ray._runner import Feeder, UnitRunner

INSTALL_HINT = "--executor ray needs Ray: install silicolab[ray] (pip install 'silicolab[ray]')"
#: Seconds to wait for a cluster address to accept a connection before giving up.
CONNECT_TIMEOUT_S = 5.0
#: Seconds to wait for every node to say where it imports silicolab from.
PROBE_TIMEOUT_S = 30.0
#: Functions already deserialized in this worker process, by object id (one per batch).
_FUNCTIONS: dict[str, Any] = {}
#: How Ray places plain-function tasks. Its default policy packs a driver's tasks on its
#: own node first and, on the two-node test cluster, often stopped handing units to the
#: other, idle node for the rest of a batch: one node ran 200 or more of 250 units in 4 of
#: 16 fresh drivers, and most batches of a long-lived driver were lopsided. "SPREAD"
#: places each lease on the next node with a free CPU: every batch even (docs/scale.md).
TASK_STRATEGY = "SPREAD"
#: Concurrent actor calls a unit runner serves (submits and collects of its feeders; the
#: units themselves are tasks on its event loop, as many as the driver gives it).
RUNNER_CALLS = 64
#: The runtime_env each job's tasks need, by job id (see :func:`runtime_env_for`).
_ENVS: dict[Any, dict[str, Any]] = {}
#: The ray module, once :func:`connect` has joined a cluster from this process.
_JOINED: list[Any] = []
#: The answers of :func:`warm_up`'s tasks not yet read, by job id.
_WARMING: dict[Any, list[Any]] = {}
#: The driver's unit runners, by job, nodes and options (reused by later batches).
_RUNNERS: dict[tuple[Any, ...], list[Any]] = {}


def import_ray() -> Any:
    """The ``ray`` module, or an :class:`InputError` saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise InputError(INSTALL_HINT) from exc
    return ray


def connect(ray: Any, address: str | None) -> None:
    """Join the cluster at ``address`` unless this process already has: ``None`` joins the
    cluster started on this machine with ``ray start --head`` (or ``RAY_ADDRESS``), else
    starts a private one. An address nobody answers at is one clear :class:`InputError`
    within :data:`CONNECT_TIMEOUT_S` (Ray itself would keep retrying for minutes)."""
    if ray.is_initialized():
        return
    if address not in (None, "auto", "local"):
        probe(address)
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if main else None
    try:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
        _JOINED.append(ray)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f" at {address}" if address else ""
        raise InputError(
            f"cannot reach the Ray cluster{where} ({str(exc).splitlines()[0][:160]}): start "
            "one with 'ray start --head' or check --ray-address (a cluster with token "
            "authentication also needs its token here: RAY_AUTH_TOKEN or ~/.ray/auth_token)"
        ) from exc
    finally:
        if previous is not None:  # keep the CLI's SIGTERM handling (interrupted + resume hint)
            signal.signal(signal.SIGTERM, previous)


def leave_cluster() -> None:
    """Disconnect now if :func:`connect` joined a cluster in this process (a command calls
    it when it is done). Ray's own exit hook would do it too, but first sleeps 0.5 s so
    that workers' log lines finish printing, and a silicolab driver forwards none
    (``log_to_driver=False``)."""
    while _JOINED:
        ray = _JOINED.pop()
        if ray.is_initialized():
            ray.shutdown()


def probe(address: str) -> None:
    """An :class:`InputError` unless something accepts connections at ``address``."""
    parts = urlsplit(address if "://" in address else f"ray://{address}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host or not port:
        raise InputError(f"--ray-address {address!r}: write it as HOST:PORT, e.g. 10.0.0.5:6379")
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise InputError(
            f"cannot reach the Ray cluster at {address} ({exc.strerror or exc}): start one "
            "with 'ray start --head --port PORT' or check --ray-address"
        ) from exc


def silicolab_path() -> str:
    """Where this process imports silicolab from (run on every node by :func:`runtime_env_for`)."""
    import silicolab

    return str(silicolab.__file__)


def warm_up(ray: Any) -> None:
    """Start one worker process on every alive node now, without waiting: a small task each
    that imports silicolab and says from where. Called by
    :meth:`~silicolab.runtime.ExecutorChoice.check` as soon as a command has joined the
    cluster, so the workers start (a process, Ray and silicolab imported: about 0.7 s here)
    while the driver prepares its run; the batch's first units reuse them, and
    :func:`runtime_env_for` reads their answers. Once per job."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    job = ray.get_runtime_context().get_job_id()
    if job in _ENVS or job in _WARMING:
        return
    probe = ray.remote(silicolab_path)
    nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive")]
    _WARMING[job] = [
        probe.options(
            num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(n, soft=False)
        ).remote()
        for n in nodes
    ]


def runtime_env_for(ray: Any) -> dict[str, Any]:
    """The ``runtime_env`` this job's tasks and actors need: none when the worker processes
    every alive node starts already import this same silicolab (an installed package, or
    nodes started with it on ``PYTHONPATH``), else :func:`worker_runtime_env`.

    Decided once per job from the answers of :func:`warm_up`'s tasks (started here if no
    one has yet), unless this silicolab is an installed package, which needs no
    ``runtime_env`` whatever the answers. The batch's first units reuse the worker
    processes those tasks started (a task with a ``runtime_env`` of its own could not:
    Ray starts new processes for it, a second or more each)."""
    job = ray.get_runtime_context().get_job_id()
    if job not in _ENVS:
        warm_up(ray)
        refs = _WARMING.pop(job)
        needed = worker_runtime_env()  # empty for an installed silicolab: no need to wait
        _ENVS[job] = needed and _env_from_answers(ray, refs, needed)
    return _ENVS[job]


def _env_from_answers(ray: Any, refs: list[Any], needed: dict[str, Any]) -> dict[str, Any]:
    """None needed when every node's worker imports silicolab from the driver's path."""
    try:
        found = ray.get(refs, timeout=PROBE_TIMEOUT_S)
    except Exception:  # a worker that cannot import silicolab at all, or no answer
        return needed
    here = silicolab_path()
    return {} if found and all(path == here for path in found) else needed


def _function(box: list[Any]) -> Any:
    """The batch's function from its boxed object ref (deserialized once per process)."""
    import ray

    ref = box[0]
    key = ref.hex()
    if key not in _FUNCTIONS:
        _FUNCTIONS.clear()  # one batch at a time per process: drop the previous function
        _FUNCTIONS[key] = ray.get(ref)
    return _FUNCTIONS[key]


def run_unit_task(box: list[Any], item: Any) -> Any:
    """The Ray task of a plain function: ``fn(item)`` (a coroutine is run to its end)."""
    value = _function(box)(item)
    if inspect.isawaitable(value):
        value = asyncio.run(_awaited(value))
    return value


async def _awaited(value: Any) -> Any:
    return await value


@dataclass
class _Batch:
    """What one ``amap`` holds on the cluster: the shipped function, how units are
    submitted, the runners and their load, and the refs in flight (cancelled on error)."""

    box: list[Any]
    task: Any = None
    slots: int = 0
    runners: list[Any] = field(default_factory=list)
    feeders: list[Feeder] = field(default_factory=list)
    load: list[int] = field(default_factory=list)
    inflight: set[Any] = field(default_factory=set)


class RayExecutor(Executor):
    """Run ``fn(item)`` on a Ray cluster, at most ``concurrency`` units in flight.

    ``address`` is the cluster (``None``: the one started on this machine with ``ray
    start --head``, or a private one); ``max_retries`` bounds how often a unit whose
    worker died is run again; ``cpus_per_unit`` is what a plain-function unit reserves.
    ``fn`` and ``items`` must be serializable (cloudpickle); see the module docstring.

    >>> executor = RayExecutor(8, address="127.0.0.1:6379")  # doctest: +SKIP
    >>> [r.value for r in executor.map(abs, [-1, -2])]  # doctest: +SKIP
    [1, 2]
    """

    def __init__(
        self,
        concurrency: int = 64,
        *,
        address: str | None = None,
        max_retries: int = 3,
        cpus_per_unit: float = 1.0,
        progress: bool | None = None,
        description: str = "",
    ):
        super().__init__(concurrency, progress=progress, description=description)
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise InputError(f"max_retries must be a non-negative integer, got {max_retries!r}")
        if not cpus_per_unit > 0:
            raise InputError(f"cpus_per_unit must be positive, got {cpus_per_unit!r}")
        self.address = address
        self.max_retries = max_retries
        self.cpus_per_unit = cpus_per_unit

    @contextlib.asynccontextmanager
    async def _session(self, fn: Callable[[Any], Any]) -> AsyncIterator[_Batch]:
        ray = import_ray()
        connect(ray, self.address)  # on the main thread: ray.init installs signal handlers
        env = await asyncio.to_thread(runtime_env_for, ray)
        remote = RemoteSession(f"silicolab-{uuid.uuid4().hex[:12]}", runtime_env=env)
        try:
            with shipping(remote):
                batch = _Batch(box=[ray.put(fn)])
            if is_coroutine_function(fn):
                self._start_runners(ray, batch, remote)
            else:
                options = {
                    "num_cpus": self.cpus_per_unit,
                    "max_retries": self.max_retries,
                    "scheduling_strategy": TASK_STRATEGY,
                }
                batch.task = ray.remote(run_unit_task).options(
                    runtime_env=remote.runtime_env, **options
                )
                batch.slots = int(ray.cluster_resources().get("CPU", 0) // self.cpus_per_unit)
            failed = False
            try:
                yield batch
            except BaseException:
                failed = True
                for ref in list(batch.inflight):
                    with contextlib.suppress(Exception):
                        ray.cancel(ref, force=True)
                raise
            finally:
                for feeder in batch.feeders:
                    with contextlib.suppress(Exception):
                        feeder.close(cancel=failed)
        finally:
            await asyncio.to_thread(remote.close)

    def _in_flight(self, session: _Batch) -> int:
        """Tasks: when ``concurrency`` reaches the CPU slots of the cluster (Ray then bounds
        how many run at once), twice the slots, so each leased worker has its next unit
        queued and Ray hands it over without a new lease; else ``concurrency``."""
        if session.task is not None and session.slots and self.concurrency >= session.slots:
            return 2 * session.slots
        return self.concurrency

    def _start_runners(self, ray: Any, batch: _Batch, remote: RemoteSession) -> None:
        """One unit runner per alive node (at most ``concurrency``), sharing the units.
        Runners are kept for the later batches of this driver (Ray stops them with it):
        starting one costs a worker process, about a second."""

        nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive")] or [None]
        nodes = nodes[: self.concurrency]
        per_runner = math.ceil(self.concurrency / len(nodes))
        job = ray.get_runtime_context().get_job_id()
        key = (job, tuple(nodes), per_runner, self.max_retries, repr(remote.runtime_env))
        if key not in _RUNNERS:
            _RUNNERS[key] = self._new_runners(ray, nodes, per_runner, remote)
        batch.runners = _RUNNERS[key]
        batch.feeders = [
            Feeder(r, batch.box, self.max_retries, on_death=remote.worker_died)
            for r in batch.runners
        ]
        batch.load = [0] * len(batch.runners)

    def _new_runners(
        self, ray: Any, nodes: list[Any], per_runner: int, remote: RemoteSession
    ) -> list[Any]:
        """Start one unit runner on each of ``nodes`` (soft affinity: if a node dies, its
        runner restarts elsewhere)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        runners = []
        actor = ray.remote(UnitRunner)
        for node in nodes:
            strategy = None if node is None else NodeAffinitySchedulingStrategy(node, soft=True)
            runners.append(
                actor.options(
                    num_cpus=0,
                    max_concurrency=RUNNER_CALLS,
                    max_restarts=self.max_retries,
                    max_task_retries=self.max_retries,
                    scheduling_strategy=strategy,
                    runtime_env=remote.runtime_env,
                ).remote()
            )
        return runners

    async def _call(self, fn: Callable[[Any], Any], item: Any, session: _Batch) -> Any:
        import ray

        if session.task is None:
            index = min(range(len(session.load)), key=session.load.__getitem__)
            session.load[index] += 1
            try:
                return await session.feeders[index].call(item)
            finally:
                session.load[index] -= 1
        ref = session.task.remote(session.box, item)
        session.inflight.add(ref)
        try:
            return await ref
        except ray.exceptions.RayTaskError as err:
            cause = getattr(err, "cause", None)
            if isinstance(cause, Exception):  # the unit's own error, as it was raised
                raise cause from None
            raise
        finally:
            session.inflight.discard(ref)


__all__ = ["INSTALL_HINT", "RayExecutor", "connect", "import_ray", "leave_cluster", "warm_up"]
