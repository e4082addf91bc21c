"""What code shipped to other machines needs to know: the remote session being serialized.

A distributed executor (``silicolab.runtime.RayExecutor``) serializes the function it runs
on workers inside :func:`shipping`. Objects that must not be copied as they are — a
language model, whose limits, cache and ledger have to stay global — look at
:func:`current_session` in their ``__reduce_ex__`` and ship a worker-side stand-in that
talks to services the session owns instead. The session lives here, in ``core``, so that
``runtime`` (which serializes) and ``llm`` (which is serialized) need not import each other.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

#: This process's identity for the services of a session: a service names the callers it
#: serves by it, so that when a worker process dies its calls can be closed at once.
PROCESS_ID = uuid.uuid4().hex
_CURRENT: ContextVar[RemoteSession | None] = ContextVar("silicolab_remote_session", default=None)


class RemoteSession:
    """One batch of units on a cluster: its shared services, made once on first use, and
    what to do when the batch ends (merge a ledger, stop an actor)."""

    def __init__(self, name: str, *, runtime_env: dict[str, Any] | None = None):
        self.name = name
        self.runtime_env = runtime_env or {}
        self._services: dict[Any, Any] = {}
        self._closers: list[Callable[[], None]] = []
        self._mourners: list[Callable[[str], None]] = []

    def service(self, key: Any, make: Callable[[], Any]) -> Any:
        """The service stored under ``key``, made by ``make()`` the first time."""
        if key not in self._services:
            self._services[key] = make()
        return self._services[key]

    def on_close(self, closer: Callable[[], None]) -> None:
        """Call ``closer()`` when the batch ends (in the order registered)."""
        self._closers.append(closer)

    def on_worker_death(self, mourner: Callable[[str], None]) -> None:
        """Call ``mourner(process_id)`` when a worker process of the batch is known dead."""
        self._mourners.append(mourner)

    def worker_died(self, process_id: str) -> None:
        """A worker process (its :data:`PROCESS_ID`) died: tell the services."""
        for mourner in list(self._mourners):
            with contextlib.suppress(Exception):
                mourner(process_id)

    def close(self) -> None:
        """Run the closers once; the first error is raised after all have run."""
        closers, self._closers = self._closers, []
        errors = []
        for closer in closers:
            try:
                closer()
            except Exception as exc:
                errors.append(exc)
        self._services.clear()
        self._mourners.clear()
        if errors:
            raise errors[0]


def current_session() -> RemoteSession | None:
    """The session whose objects are being serialized right now, if any."""
    return _CURRENT.get()


@contextlib.contextmanager
def shipping(session: RemoteSession) -> Iterator[RemoteSession]:
    """Serialize objects for ``session``'s workers inside this block."""
    token = _CURRENT.set(session)
    try:
        yield session
    finally:
        _CURRENT.reset(token)


def worker_runtime_env() -> dict[str, Any]:
    """The Ray ``runtime_env`` that lets workers import this silicolab: when it is imported
    from a source tree (not an installed package), that tree goes on their PYTHONPATH."""
    import silicolab

    src = Path(silicolab.__file__).resolve().parents[1]
    if "site-packages" in src.parts or "dist-packages" in src.parts:
        return {}
    paths = [str(src), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    return {"env_vars": {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}}


__all__ = ["PROCESS_ID", "RemoteSession", "current_session", "shipping", "worker_runtime_env"]
