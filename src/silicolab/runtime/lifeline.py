"""Pool workers that never outlive the process that started them.

A ``kill -9`` of the main process gives it no chance to stop its process pool. With the
forkserver start method the workers are children of the forkserver, and each holds the
forkserver's "alive" pipe and the resource tracker's pipe open, so workers, forkserver and
tracker would all live on (the workers finishing their units, burning CPU). Making the
workers end with the main process is enough: once the last one exits, the forkserver and
the resource tracker see their pipes close and exit too.

Each worker runs :func:`init_worker` first: it ignores SIGINT (Ctrl-C reaches the whole
foreground process group; the main process decides what to do), asks the kernel for
SIGKILL when its parent dies (``PR_SET_PDEATHSIG``, Linux; the parent is the main
process under "spawn"), and starts a daemon thread that waits on the main process (a
pidfd where available, else polling) and ends the worker with ``os._exit`` when it is gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import threading
import time

PR_SET_PDEATHSIG = 1
#: Exit status of a worker that ended because its main process was gone.
ORPHAN_EXIT = 70
_POLL_S = 0.5


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """Ask the kernel to send ``sig`` to this process when its parent dies (Linux only).

    Returns whether the request was accepted."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _wait_for_exit(pid: int) -> None:
    """Block until process ``pid`` has ended."""
    fd = None
    with contextlib.suppress(AttributeError, OSError):
        fd = os.pidfd_open(pid)
    if fd is not None:
        select.select([fd], [], [])  # readable once the process has exited
        return
    while _alive(pid):
        time.sleep(_POLL_S)


def watch_process(pid: int) -> threading.Thread:
    """End this process (``os._exit``) as soon as process ``pid`` ends."""

    def watch() -> None:
        _wait_for_exit(pid)
        os._exit(ORPHAN_EXIT)

    thread = threading.Thread(target=watch, name=f"silicolab-lifeline-{pid}", daemon=True)
    thread.start()
    return thread


def init_worker(main_pid: int) -> None:
    """The process-pool initializer: tie this worker's life to process ``main_pid``, and
    show each kind of library warning once (:func:`show_each_kind_once`), not a flood."""
    from silicolab.core.warnings_summary import show_each_kind_once

    show_each_kind_once()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if os.getppid() == main_pid:
        die_with_parent()
    if not _alive(main_pid):  # the main process died while this worker was starting
        os._exit(ORPHAN_EXIT)
    watch_process(main_pid)


__all__ = ["ORPHAN_EXIT", "die_with_parent", "init_worker", "watch_process"]
