"""Synchronous calls that work everywhere, a Jupyter cell included.

silicolab's model-bound code is async; each public coroutine function has a synchronous
twin for scripts, the CLI and notebooks. :func:`run_sync` runs a coroutine to its end from
synchronous code:

- with no event loop running in this thread (a script, the CLI, a worker process), in a
  fresh event loop of its own (:func:`asyncio.run`, which also turns Ctrl-C into the
  cancellation of the coroutine);
- inside a running loop (a Jupyter cell: the kernel runs one; or synchronous code called
  from an async function), on a short-lived worker thread with its own event loop, while
  the calling thread waits. The caller's context variables are copied to the worker, so
  e.g. :func:`silicolab.core.fresh.fresh_calls` still applies; the result is returned and an
  exception raised inside propagates unchanged; a ``KeyboardInterrupt`` (the notebook's
  stop button) cancels the coroutine, waits for its cleanup and is re-raised.

Either way the loop ends by awaiting the hooks registered with :func:`at_loop_end` (the LLM
layer registers one that closes the loop's HTTP connections, whose sockets would otherwise
linger until garbage collection), and the loop and its thread are gone when the call
returns. ``core`` never imports the LLM layer: the hook is registered from below.

Not ``nest_asyncio``: patching the running loop to re-enter itself changes asyncio for every
library in the process. The one limit of the worker thread: the coroutine must not need an
object bound to the caller's loop (a future or lock created and awaited there).

:func:`sync_twin` makes a synchronous twin from its async partner (signature, docstring
naming the partner, ``__wrapped__``), so each twin is one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar, cast

P = ParamSpec("P")
R = TypeVar("R")

_LOOP_END_HOOKS: list[Callable[[], Awaitable[None]]] = []
_WAIT_POLL_S = 0.2  # how often a waiting caller wakes to notice Ctrl-C (on every platform)


def at_loop_end(hook: Callable[[], Awaitable[None]]) -> None:
    """Await ``hook()`` at the end of every loop :func:`run_sync` runs (once per hook), in
    that loop, after the coroutine: for resources a layer opened per event loop."""
    if hook not in _LOOP_END_HOOKS:
        _LOOP_END_HOOKS.append(hook)


def run_sync(coro: Coroutine[Any, Any, R], *, twin: str | None = None) -> R:
    """Run ``coro`` to completion from synchronous code and return its result, in a fresh
    event loop (on a worker thread when this thread already runs one, as in Jupyter; see
    the module docstring). ``twin`` names the async function for the worker thread's name.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_then_loop_end_hooks(coro))
    return _Worker(coro, twin).run()


async def _then_loop_end_hooks(coro: Coroutine[Any, Any, R]) -> R:
    """Await ``coro``, then the loop-end hooks (even when it raised)."""
    try:
        return await coro
    finally:
        for hook in list(_LOOP_END_HOOKS):
            await hook()


class _Worker:
    """One coroutine run to its end on its own thread and event loop."""

    def __init__(self, coro: Coroutine[Any, Any, Any], twin: str | None) -> None:
        self.coro = coro
        self.name = f"silicolab-sync-{twin or getattr(coro, '__qualname__', 'call')}"
        self.lock = threading.Lock()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None
        self.stop_asked = False
        self.outcome: tuple[bool, Any] = (False, None)
        self.done = threading.Event()

    def run(self) -> Any:
        """Start the thread (in a copy of the caller's context), wait for it, and return
        the coroutine's result or raise its exception."""
        context = contextvars.copy_context()
        thread = threading.Thread(target=context.run, args=(self._main,), name=self.name)
        thread.daemon = True  # a coroutine that ignores cancellation never blocks exit
        try:
            thread.start()
            # An Event, not thread.join(): a join interrupted by Ctrl-C can leave the thread
            # marked finished while it runs (CPython gh-90882).
            while not self.done.wait(_WAIT_POLL_S):
                pass
        except KeyboardInterrupt:
            self._cancel()
            if thread.ident is not None:  # else it never started: stop_asked keeps it idle
                self.done.wait()  # let the coroutine's cleanup (finally blocks) finish
                thread.join()
            raise
        thread.join()  # the worker has only to return: no thread outlives the call
        ok, value = self.outcome
        if ok:
            return value
        raise value

    def _main(self) -> None:
        try:
            self.outcome = (True, asyncio.run(self._started()))
        except BaseException as exc:
            self.outcome = (False, exc)
        finally:
            self.coro.close()  # no "never awaited" warning if cancelled before it started
            self.done.set()

    async def _started(self) -> Any:
        with self.lock:
            self.loop, self.task = asyncio.get_running_loop(), asyncio.current_task()
            if self.stop_asked:
                raise asyncio.CancelledError
        return await _then_loop_end_hooks(self.coro)

    def _cancel(self) -> None:
        with self.lock:
            self.stop_asked = True
            loop, task = self.loop, self.task
        if loop is not None and task is not None:
            with contextlib.suppress(RuntimeError):  # a closed loop: the coroutine ended
                loop.call_soon_threadsafe(task.cancel)


def sync_twin(afn: Callable[P, Coroutine[Any, Any, R]], name: str | None = None) -> Callable[P, R]:
    """The synchronous twin of the coroutine function ``afn``: same arguments, same result,
    through :func:`run_sync` (so it works inside a running event loop too).

    ``name`` defaults to ``afn``'s name without its leading ``a`` (``arun_study`` ->
    ``run_study``); assign the twin to that name in ``afn``'s module (or class) so it
    pickles. The twin carries ``afn``'s signature (``inspect.signature`` follows
    ``__wrapped__``) and a docstring naming it. For a method (``afn`` defined in a class)
    the twin calls ``getattr(self, afn.__name__)``, so a subclass's override is the one run.
    """
    twin_name = name or afn.__name__.removeprefix("a")
    if twin_name == afn.__name__:
        raise ValueError(f"name the sync twin of {afn.__name__!r}: it has no leading 'a'")
    qualname = afn.__qualname__.split(".")
    method = len(qualname) > 1 and qualname[-2] != "<locals>"

    def function_twin(*args: Any, **kwargs: Any) -> Any:
        return run_sync(afn(*args, **kwargs), twin=afn.__name__)

    def method_twin(self: Any, *args: Any, **kwargs: Any) -> Any:
        return run_sync(getattr(self, afn.__name__)(*args, **kwargs), twin=afn.__name__)

    twin: Callable[..., Any] = method_twin if method else function_twin
    functools.update_wrapper(twin, afn)
    vars(twin).pop("__isabstractmethod__", None)  # concrete even when its partner is abstract
    twin.__name__ = twin_name
    twin.__qualname__ = ".".join([*qualname[:-1], twin_name])
    role = "meth" if method else "func"
    partner = inspect.getdoc(afn)
    twin.__doc__ = (
        f"The synchronous twin of :{role}:`{afn.__name__}` (same arguments, same result); "
        "it works inside a running event loop (a Jupyter cell) too."
        + (f"\n\n{partner}" if partner else "")
    )
    return cast("Callable[P, R]", twin)


__all__ = ["at_loop_end", "run_sync", "sync_twin"]
