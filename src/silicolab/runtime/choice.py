"""Which executor runs a batch: a frozen, picklable choice that benches and studies carry.

The choice says *how* units run, never *what* they compute (per-unit seeds come from each
unit's identity), so it is not part of a run's stored settings and a run started on one
executor may be resumed on another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from silicolab.core.errors import InputError
from silicolab.runtime.base import Executor

EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class ExecutorChoice:
    """``kind="local"`` (the event loop or a process pool on this machine) or ``"ray"`` (a
    Ray cluster at ``address``; ``None``: the one started on this machine, see
    ``docs/scale.md``)."""

    kind: Literal["local", "ray"] = "local"
    address: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in EXECUTORS:
            raise InputError(
                f"executor={self.kind!r}: use one of {', '.join(EXECUTORS)}",
                params=("executor",),
            )
        if self.address is not None and self.kind != "ray":
            raise InputError(
                "ray_address= needs executor='ray'", params=("ray_address", "executor")
            )

    def check(self) -> ExecutorChoice:
        """Fail now, before any run directory exists, if the executor cannot run: Ray not
        installed, or no cluster answering at ``address``. On Ray this joins the cluster
        and starts a worker process on every node without waiting
        (:func:`~silicolab.runtime.ray.warm_up`), so they come up while the
        command prepares its run. Returns ``self``."""
        if self.kind == "ray":
            from silicolab.runtime.ray import connect, import_ray, warm_up

            ray = import_ray()
            connect(ray, self.address)
            warm_up(ray)
        return self

    def make(self, concurrency: int, *, cpu_bound: bool, description: str = "") -> Executor:
        """An executor for ``concurrency`` units at once: locally a process pool when the
        units are ``cpu_bound``, else the event loop; on Ray, tasks or unit runners
        according to the function (see :class:`~silicolab.runtime.RayExecutor`)."""
        if self.kind == "ray":
            from silicolab.runtime.ray import RayExecutor

            return RayExecutor(concurrency, address=self.address, description=description)
        from silicolab.runtime.executor import AsyncExecutor, ProcessExecutor

        if cpu_bound:
            return ProcessExecutor(concurrency, description=description)
        return AsyncExecutor(concurrency, description=description)


LOCAL = ExecutorChoice()

__all__ = ["EXECUTORS", "LOCAL", "ExecutorChoice"]
