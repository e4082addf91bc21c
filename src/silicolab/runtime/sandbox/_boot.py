"""The first code a sandboxed child runs: resource limits, an audit hook, then the agent's code.

:mod:`silicolab.runtime.sandbox` starts ``python -s -P -B -X utf8 _boot.py '<json>'``
in a fresh working directory. This module then

1. opens the *violations file* (outside the working directory, so it must happen before the
   hook is installed) where every blocked action is recorded as one JSON line;
2. sets resource limits — ``RLIMIT_AS`` (memory), ``RLIMIT_CPU``, ``RLIMIT_FSIZE``,
   ``RLIMIT_CORE=0`` and, for non-root users, ``RLIMIT_NPROC`` (root ignores it);
3. hides silicolab (off ``sys.path``, refused by a ``sys.meta_path`` finder) and, where the
   kernel has Landlock, restricts the process's file access to the read allow-list of
   :mod:`_reads` (loaded by path: the child cannot import silicolab);
4. installs a :func:`sys.addaudithook` hook (which Python code cannot remove) that raises
   :class:`PermissionError` on network access, process creation, file changes outside
   the working directory and reads outside the allow-list, recording each refusal first so
   the parent can classify the run even when the agent's code catches the exception;
5. compiles and executes ``agent_code.py`` as ``__main__`` and maps a :class:`MemoryError`
   or a blocked action that ends the program to a dedicated exit code.

Only the standard library is used: ``python`` may be any interpreter the caller chose.
This is a guard against careless code, not a security boundary (see ``docs/sandbox.md``).
"""

from __future__ import annotations

import contextlib
import errno
import gc
import importlib.util
import json
import math
import os
import resource
import signal
import socket
import sys
import threading
import traceback
import types
from collections.abc import Callable
from typing import Any

#: Name of the agent's source file in the working directory (shown in tracebacks).
CODE_NAME = "agent_code.py"
#: Exit code when the program ended because of a blocked action.
EXIT_VIOLATION = 86
#: Exit code when the program ended with a :class:`MemoryError` (the memory limit).
EXIT_MEMORY = 87
#: Start of every message of a :class:`PermissionError` raised by the hook.
PREFIX = "[sandbox] "
#: At most this many refusals are recorded (a loop that retries must not fill the disk).
MAX_RECORDS = 20

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_ALWAYS_WRITABLE = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
#: What is refused, per violation kind (shared with the parent's messages).
WHAT = {
    "network": "network access is not allowed in this sandbox",
    "subprocess": "starting or signalling other processes is not allowed in this sandbox",
    "filesystem": "changing files outside the working directory is not allowed",
    "read": "reading files outside the working directory and the libraries is not allowed",
}
#: libc functions a ctypes call could open files or run programs with, refused when the
#: kernel has no Landlock to stop them (the audit hook does not see C calls).
_CTYPES_REFUSED = frozenset(
    {
        *("open", "open64", "openat", "openat64", "openat2", "__open_2", "__open64_2"),
        *("creat", "fopen", "fopen64", "freopen", "opendir", "name_to_handle_at"),
        *("open_by_handle_at", "syscall", "execve", "execv", "execvp", "execvpe", "system"),
        *("popen", "posix_spawn", "posix_spawnp", "dlopen", "dlmopen"),
    }
)
_NET_EVENTS = (
    "socket.connect",
    "socket.bind",
    "socket.sendto",
    "socket.sendmsg",
    "socket.getaddrinfo",
    "socket.gethostbyname",
    "socket.gethostbyname_ex",
    "socket.gethostbyaddr",
    "socket.getnameinfo",
)
_PROC_EVENTS = (
    "os.fork",
    "os.forkpty",
    "os.posix_spawn",
    "os.spawn",
    "os.exec",
    "os.system",
    "os.startfile",
    "subprocess.Popen",
    "pty.spawn",
)
# event -> ((index of a path argument, index of its dir_fd argument or None), ...), verb
_PATH_EVENTS: dict[str, tuple[tuple[tuple[int, int | None], ...], str]] = {
    "os.remove": (((0, 1),), "delete"),
    "os.rmdir": (((0, 1),), "remove directory"),
    "os.mkdir": (((0, 2),), "create directory"),
    "os.rename": (((0, 2), (1, 3)), "rename"),
    "os.link": (((0, 2), (1, 3)), "hard-link"),
    "os.symlink": (((1, 2),), "create symlink"),
    "shutil.rmtree": (((0, None),), "delete tree"),
    "os.chmod": (((0, 2),), "chmod"),
    "os.chown": (((0, 3),), "chown"),
    "os.chflags": (((0, None),), "chflags"),
    "os.lchflags": (((0, None),), "chflags"),
    "os.truncate": (((0, None),), "truncate"),
    "os.utime": (((0, 3),), "set times of"),
    "os.setxattr": (((0, None),), "set attributes of"),
    "os.removexattr": (((0, None),), "remove attributes of"),
}


class Guard:
    """The audit hook: decides per event whether the agent's code may go on.

    ``__call__`` runs for *every* audit event of the process, so it is one dict lookup for
    uninteresting events. A refusal is recorded in the violations file (``os.write`` on an
    fd opened before the hook existed, so recording raises no audit event) and then raised
    as :class:`PermissionError`.
    """

    def __init__(
        self,
        workdir: str,
        record_fd: int,
        *,
        network: bool,
        processes: bool,
        writable: tuple[str, ...] = (),
        reads: Any = None,
        ctypes_guard: bool = False,
    ):
        self.root = os.path.realpath(workdir)
        self.roots = (self.root, *(os.path.realpath(d) for d in writable))
        self.reads = reads  # a _reads.ReadPolicy, or None: reads unchecked
        self.record_fd = record_fd
        self.recorded = 0
        self.pid = os.getpid()
        self._busy = threading.local()
        checks: dict[str, Callable[[str, tuple[Any, ...]], str | None]] = {"open": self._open}
        checks.update(dict.fromkeys(_PATH_EVENTS, self._paths))
        checks["sqlite3.connect"] = self._sqlite
        if reads is not None:
            checks["os.listdir"] = checks["os.scandir"] = self._listing
        if ctypes_guard:
            checks["ctypes.dlsym"] = self._dlsym
        if not network:
            checks["socket.__new__"] = self._new_socket
            checks.update(dict.fromkeys(_NET_EVENTS, self._network))
        if not processes:
            checks.update(dict.fromkeys(_PROC_EVENTS, self._process))
            checks["os.kill"] = checks["os.killpg"] = self._signal
        self._checks = checks
        self._kinds = dict.fromkeys(checks, "filesystem")
        self._kinds.update(dict.fromkeys((*_NET_EVENTS, "socket.__new__"), "network"))
        self._kinds.update(dict.fromkeys((*_PROC_EVENTS, "os.kill", "os.killpg"), "subprocess"))
        self._kinds.update(dict.fromkeys(("os.listdir", "os.scandir", "ctypes.dlsym"), "read"))

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        check = self._checks.get(event)
        if check is None or getattr(self._busy, "on", False):
            return
        self._busy.on = True
        try:
            detail = check(event, args)
        finally:
            self._busy.on = False
        if detail is not None:
            self.deny(self._kinds[event], event, detail)

    def record(self, kind: str, event: str, detail: str) -> None:
        """Append one refusal (or the memory limit) to the violations file, at most
        :data:`MAX_RECORDS` times."""
        self.recorded += 1
        if self.recorded > MAX_RECORDS:
            return
        line = json.dumps({"kind": kind, "event": event, "detail": detail[:300]}) + "\n"
        with contextlib.suppress(OSError):
            os.write(self.record_fd, line.encode("utf-8", "replace"))

    def deny(self, kind: str, event: str, detail: str) -> None:
        """Record a refusal and raise the :class:`PermissionError` the agent's code sees."""
        self.record(kind, event, detail)
        raise PermissionError(f"{PREFIX}{WHAT[kind]}: {detail}")

    def refuse_import(self, name: str) -> None:
        """Record and refuse an import of silicolab (the meta-path blocker calls this)."""
        self.record("read", "import", f"import {name}")
        message = f"{PREFIX}importing silicolab is not allowed in this sandbox: import {name}"
        raise ModuleNotFoundError(message, name=name)

    # -- file system -------------------------------------------------------------------
    @staticmethod
    def resolve(path: Any, dir_fd: Any = None) -> str | None:
        """``path`` resolved with :func:`os.path.realpath` against ``dir_fd`` or the current
        directory (the name itself when that fails); None for an fd or a non-path."""
        if isinstance(path, int):  # an fd: it was checked when it was opened
            return None
        try:
            name = os.fsdecode(os.fspath(path))
        except TypeError:
            return None
        try:
            if isinstance(dir_fd, int) and dir_fd >= 0 and not os.path.isabs(name):
                base = os.readlink(f"/proc/self/fd/{dir_fd}")
            else:
                base = os.getcwd()
            return os.path.realpath(os.path.join(base, name))
        except OSError:
            return name

    def outside(self, path: Any, dir_fd: Any = None) -> str | None:
        """The resolved path when ``path`` lies outside the working directory, else None."""
        if not isinstance(path, int) and path in _ALWAYS_WRITABLE:
            return None
        full = self.resolve(path, dir_fd)
        if full is None:
            return None
        for root in self.roots:
            if full == root or full.startswith(root + os.sep):
                return None
        return full

    def _open(self, event: str, args: tuple[Any, ...]) -> str | None:
        path, mode, flags = (*args, None, None, None)[:3]
        writes = isinstance(flags, int) and bool(flags & _WRITE_FLAGS)
        writes = writes or (isinstance(mode, str) and any(c in mode for c in "wax+"))
        if not writes:
            return self._read(path, "read")
        full = self.outside(path)
        return None if full is None else f"open {full!r} for writing"

    def _read(self, path: Any, verb: str) -> None:
        """Refuse (as a ``read`` violation) reading ``path`` outside the allow-list."""
        full = None if self.reads is None else self.resolve(path)
        if full is not None and not self.reads.allows(full):
            self.deny("read", "open" if verb == "read" else f"os.{verb}", f"{verb} {full!r}")

    def _listing(self, event: str, args: tuple[Any, ...]) -> str | None:
        path = args[0] if args and args[0] is not None else "."
        self._read(path, event.removeprefix("os."))
        return None

    def _dlsym(self, event: str, args: tuple[Any, ...]) -> str | None:
        name = args[1] if len(args) > 1 else None
        name = name.decode("ascii", "replace") if isinstance(name, bytes) else name
        return f"ctypes symbol {name!r}" if name in _CTYPES_REFUSED else None

    def _paths(self, event: str, args: tuple[Any, ...]) -> str | None:
        positions, verb = _PATH_EVENTS[event]
        for index, fd_index in positions:
            if index >= len(args):
                continue
            dir_fd = args[fd_index] if fd_index is not None and fd_index < len(args) else None
            full = self.outside(args[index], dir_fd)
            if full is not None:
                return f"{verb} {full!r}"
        return None

    def _sqlite(self, event: str, args: tuple[Any, ...]) -> str | None:
        database = args[0] if args else ":memory:"
        if isinstance(database, str) and database.startswith("file:"):
            database = database[5:].split("?", 1)[0]
        if database in ("", ":memory:", b"", b":memory:"):
            return None
        full = self.outside(database)
        return None if full is None else f"open database {full!r}"

    # -- network and processes -----------------------------------------------------------
    def _new_socket(self, event: str, args: tuple[Any, ...]) -> str | None:
        family = args[1] if len(args) > 1 else -1
        # AF_UNIX socket pairs are local pipes (asyncio's event loop needs one); -1 wraps an
        # existing fd. Connecting or binding any socket is refused below.
        if family in (-1, socket.AF_UNIX):
            return None
        return f"creating a socket ({socket.AddressFamily(family).name})"

    def _network(self, event: str, args: tuple[Any, ...]) -> str | None:
        if event in ("socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg"):
            target = args[1] if len(args) > 1 else None
        elif event == "socket.getaddrinfo":
            target = args[:2]
        else:
            target = args[0] if args else None
        return f"{event} {target!r}"[:200]

    def _process(self, event: str, args: tuple[Any, ...]) -> str | None:
        shown = args[1] if event == "subprocess.Popen" and len(args) > 1 else args
        return f"{event} {shown!r}"[:200] if shown else event

    def _signal(self, event: str, args: tuple[Any, ...]) -> str | None:
        target = args[0] if args else 0
        if event == "os.kill" and target == self.pid:
            return None
        return f"{event} {target!r}"


def _limit(which: int, soft: int, hard: int | None = None) -> None:
    """Lower a resource limit to ``soft``/``hard`` (never above the current hard limit)."""
    _, current_hard = resource.getrlimit(which)
    hard = soft if hard is None else hard
    if current_hard != resource.RLIM_INFINITY:
        soft, hard = min(soft, current_hard), min(hard, current_hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(which, (soft, hard))


def _user_tasks(uid: int) -> int:
    """How many threads the user ``uid`` runs now (what ``RLIMIT_NPROC`` counts)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", encoding="ascii", errors="replace") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                total += int(fields["Threads"])
        except (OSError, KeyError, ValueError, IndexError):
            continue
    return total


def set_limits(config: dict[str, Any]) -> None:
    """Apply the memory, CPU, file size, core dump and (non-root) process limits."""
    mib = 1024 * 1024
    _limit(resource.RLIMIT_AS, int(config["memory_mb"]) * mib)
    cpu = math.ceil(float(config["cpu_s"]))
    _limit(resource.RLIMIT_CPU, cpu, cpu + 2)
    _limit(resource.RLIMIT_FSIZE, int(config["fsize_mb"]) * mib)
    _limit(resource.RLIMIT_CORE, 0)
    if os.geteuid() != 0 and hasattr(resource, "RLIMIT_NPROC"):
        headroom = 512 if config["allow_subprocess"] else 64
        _limit(resource.RLIMIT_NPROC, _user_tasks(os.getuid()) + headroom)
    # writing past RLIMIT_FSIZE then fails with EFBIG instead of killing the process
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _guard_fork_exec(guard: Guard) -> None:
    """Route ``_posixsubprocess.fork_exec`` (used by multiprocessing's spawn and loky
    without an audit event) through the guard."""
    try:
        import _posixsubprocess
    except ImportError:
        return
    original = _posixsubprocess.fork_exec

    def fork_exec(*args: Any, **kwargs: Any) -> Any:
        guard.deny("subprocess", "_posixsubprocess.fork_exec", f"starting {args[1]!r}"[:200])
        return original(*args, **kwargs)

    _posixsubprocess.fork_exec = fork_exec


def _without_boot_frames(te: traceback.TracebackException) -> None:
    """Drop this module's frames (``exec`` and the audit hook) from ``te`` and its chain."""
    seen: set[int] = set()
    stack = [te]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        frames = [f for f in current.stack if f.filename != __file__]
        current.stack = traceback.StackSummary.from_list(frames)
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)


def _print_error(exc: BaseException) -> None:
    """Print ``exc``'s traceback as if ``agent_code.py`` had been run directly."""
    te = traceback.TracebackException.from_exception(exc, lookup_lines=False)
    _without_boot_frames(te)
    sys.stderr.write("".join(te.format()))
    sys.stderr.flush()


def run_code(source: str, guard: Guard) -> int:
    """Compile and execute the agent's source as ``__main__``; return the exit code."""
    try:
        code = compile(source, CODE_NAME, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        _print_error(exc)
        return 1
    module = types.ModuleType("__main__")
    module.__file__ = os.path.join(guard.root, CODE_NAME)
    module.__builtins__ = __builtins__  # type: ignore[attr-defined]
    sys.modules["__main__"] = module
    try:
        exec(code, module.__dict__)
    except MemoryError as exc:
        traceback.clear_frames(exc.__traceback__)
        module.__dict__.clear()
        gc.collect()
        guard.record("memory", "MemoryError", "the memory limit was reached")
        _print_error(exc)
        return EXIT_MEMORY
    except SystemExit:
        raise
    except BaseException as exc:
        if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
            guard.record("filesystem", "RLIMIT_FSIZE", "a file grew past the file size limit")
        _print_error(exc)
        return EXIT_VIOLATION if guard.recorded else 1
    return 0


def _load_reads() -> types.ModuleType:
    """:mod:`_reads`, loaded from the file next to this one under a name outside the
    ``silicolab`` package (which the agent's code must not be able to import)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_reads.py")
    spec = importlib.util.spec_from_file_location("_sandbox_reads", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _restrict(reads: types.ModuleType, policy: Any) -> bool:
    """Apply the kernel's Landlock rules for ``policy``; False when this kernel has none
    (the audit hook is then the only guard and also refuses file-opening ctypes calls)."""
    abi = reads.landlock_abi()
    if abi < 1:
        return False
    try:
        reads.apply_landlock(policy, abi)
    except OSError:
        return False
    return True


def main(argv: list[str]) -> int:
    """Set everything up from the JSON config in ``argv[1]`` and run the agent's code."""
    config = json.loads(argv[1])
    workdir = config["workdir"]
    record_fd = os.open(config["violations"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    set_limits(config)
    os.chdir(workdir)
    sys.path.insert(0, workdir)
    sys.argv = [CODE_NAME]
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    with open(CODE_NAME, encoding="utf-8", errors="replace") as f:
        source = f.read()
    writable = tuple(config.get("writable_dirs", ()))
    reads = _load_reads()
    own = (os.path.abspath(__file__), reads.__file__)
    policy = reads.ReadPolicy.for_interpreter((workdir, *writable), sys.path, own)
    landlock = bool(config.get("landlock", True)) and _restrict(reads, policy)
    guard = Guard(
        workdir,
        record_fd,
        network=bool(config["allow_network"]),
        processes=bool(config["allow_subprocess"]),
        writable=writable,
        reads=policy,
        ctypes_guard=not landlock,
    )
    reads.hide_silicolab(policy, guard.refuse_import)
    if not config["allow_subprocess"]:
        _guard_fork_exec(guard)
    sys.addaudithook(guard)
    return run_code(source, guard)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
