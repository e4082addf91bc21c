"""Run Python written by a language-model agent in a contained subprocess.

:func:`run_python` (and :func:`arun_python` for event loops) writes the code and its input
files into a fresh temporary working directory, runs it in a new session under
:mod:`silicolab.runtime.sandbox._boot` — resource limits plus an audit hook that refuses
network access, process creation, file changes outside the working directory and reads
outside it and the libraries (enforced by the kernel's Landlock where there is one, with
silicolab itself not importable, so the answer key stays out of reach) — kills
the whole session at the wall-time limit, and returns a :class:`SandboxResult` whose
``message`` tells the agent in one line what happened and, for a violation, what is not
allowed. The child never sees the parent's environment (so no API keys).

It guards against accidental or careless code, not against a determined attacker; the
mechanisms and their limits are listed in ``docs/sandbox.md``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from silicolab.core.errors import InputError
from silicolab.core.secrets import scrub_text
from silicolab.runtime.sandbox import _boot as boot
from silicolab.runtime.sandbox import _support as support
from silicolab.runtime.sandbox._support import OutputCapture

#: Largest file :func:`run_python` returns from the working directory (bigger ones are
#: skipped and named in the message).
MAX_COLLECT_BYTES = 5 * 1024 * 1024
#: At most this many files are returned.
MAX_COLLECT_FILES = 100
#: ``RLIMIT_FSIZE``: the largest file the code may write, in MiB.
MAX_WRITE_MB = 256
#: Violation names, in the order they win when several happened.
VIOLATIONS = ("network", "subprocess", "filesystem", "read", "memory", "timeout")

_DEFAULT_COLLECT = ("*.json", "*.csv", "*.txt")
_HINTS = {
    "network": "the code must work offline with the files in its working directory",
    "subprocess": "do the work inside this Python process (no fork, subprocess or shell)",
    "filesystem": "write files only into the current working directory",
    "read": "use only the files in the current working directory (the data you were given)",
    "memory": "use smaller arrays or process the data in chunks",
    "timeout": "make the code faster or process less data",
}
_MEMORY_SIGNS = (
    "MemoryError",
    "bad_alloc",
    "Cannot allocate memory",
    "out of memory",
    "failed to map segment",  # a shared library that no longer fits under RLIMIT_AS
)
_LOCATION = re.compile(r'File "agent_code\.py", line (\d+)')


@dataclass(frozen=True)
class SandboxResult:
    """What one sandboxed run did.

    ``ok`` is true only when the code exited with status 0 *and* nothing was blocked, so an
    agent that catches the :class:`PermissionError` of a blocked action still sees it.
    ``violation`` is ``"timeout"``, ``"memory"``, ``"network"``, ``"filesystem"``,
    ``"read"``, ``"subprocess"`` or None; ``message`` is one line meant to be shown to the agent.
    ``files`` maps paths relative to the working directory to the collected outputs.
    """

    ok: bool
    returncode: int | None
    stdout: str
    stderr: str
    violation: str | None
    message: str
    elapsed_s: float
    files: dict[str, bytes] = field(default_factory=dict)

    def report(self) -> str:
        """The message, stdout and stderr as one text block for an agent's next prompt."""
        parts = [self.message]
        for name, text in (("stdout", self.stdout), ("stderr", self.stderr)):
            if text.strip():
                parts.append(f"--- {name} ---\n{text.rstrip()}")
        return "\n".join(parts)


@dataclass(frozen=True)
class _Options:
    """Validated arguments of one run (shared by the sync and async entry points)."""

    code: str
    inputs: dict[str, bytes]
    timeout_s: float
    memory_mb: int
    cpu_s: float
    allow_network: bool
    allow_subprocess: bool
    max_output_chars: int
    collect: tuple[str, ...]
    env: dict[str, str]
    python: str
    writable_dirs: tuple[str, ...] = ()


def run_python(
    code: str,
    *,
    inputs: Mapping[str, bytes | str] | None = None,
    timeout_s: float = 60.0,
    memory_mb: int = 2048,
    cpu_s: float | None = None,
    allow_network: bool = False,
    allow_subprocess: bool = False,
    max_output_chars: int = 20_000,
    collect: Sequence[str] = _DEFAULT_COLLECT,
    env: Mapping[str, str] | None = None,
    python: str = sys.executable,
    writable_dirs: Sequence[str] = (),
) -> SandboxResult:
    """Run ``code`` in a fresh working directory under the sandbox and wait for it.

    ``inputs`` are written into the working directory first; ``timeout_s`` is wall time
    (the whole process session is killed), ``memory_mb`` the address-space limit,
    ``cpu_s`` the CPU-time limit (default ``timeout_s + 5``). Output beyond
    ``max_output_chars`` keeps its head and tail. Files matching ``collect`` (globs
    relative to the working directory; unchanged inputs excluded) are returned. ``env``
    adds variables to the child's minimal environment. ``writable_dirs`` are existing
    directories outside the working directory that the code may also write into (a shared
    compile cache, for example). Raises :class:`InputError` for
    invalid arguments or an interpreter that cannot be started.
    """
    options = _validate(
        code, inputs, timeout_s, memory_mb, cpu_s, allow_network, allow_subprocess,
        max_output_chars, collect, env, python, writable_dirs,
    )  # fmt: skip
    return _run(options, cancel=None)


async def arun_python(code: str, **options: Any) -> SandboxResult:
    """:func:`run_python` (same arguments) on a worker thread, so the event loop keeps
    running.

    Cancelling the awaiting task kills the child's session at once.
    """
    bound = inspect.signature(run_python).bind(code, **options)
    bound.apply_defaults()
    validated = _validate(*bound.arguments.values())  # in run_python's parameter order
    cancel = threading.Event()
    try:
        return await asyncio.to_thread(_run, validated, cancel)
    except asyncio.CancelledError:
        cancel.set()
        raise


def _validate(
    code: str,
    inputs: Mapping[str, bytes | str] | None,
    timeout_s: float,
    memory_mb: int,
    cpu_s: float | None,
    allow_network: bool,
    allow_subprocess: bool,
    max_output_chars: int,
    collect: Sequence[str],
    env: Mapping[str, str] | None,
    python: str,
    writable_dirs: Sequence[str] = (),
) -> _Options:
    """Check every argument up front; each error message names the fix."""
    if not isinstance(code, str):
        raise InputError(f"code must be a str of Python source, got {type(code).__name__}")
    if not (isinstance(timeout_s, int | float) and math.isfinite(timeout_s) and timeout_s > 0):
        raise InputError(f"timeout_s must be a positive number of seconds, got {timeout_s!r}")
    if not isinstance(memory_mb, int) or memory_mb < 64:
        raise InputError(f"memory_mb must be an int of at least 64 (MiB), got {memory_mb!r}")
    cpu = timeout_s + 5 if cpu_s is None else cpu_s
    if not (isinstance(cpu, int | float) and math.isfinite(cpu) and cpu > 0):
        raise InputError(f"cpu_s must be a positive number of seconds or None, got {cpu_s!r}")
    if not isinstance(max_output_chars, int) or max_output_chars < 200:
        raise InputError(f"max_output_chars must be an int >= 200, got {max_output_chars!r}")
    files: dict[str, bytes] = {}
    for name, data in (inputs or {}).items():
        rel = _relative_name(name, "inputs key")
        if rel == boot.CODE_NAME:
            raise InputError(f"inputs may not contain {boot.CODE_NAME!r}: that name holds the code")
        if not isinstance(data, bytes | str):
            raise InputError(f"inputs[{name!r}] must be bytes or str, got {type(data).__name__}")
        files[rel] = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    if isinstance(collect, str):
        raise InputError("collect must be a sequence of glob patterns, e.g. ('*.json',)")
    patterns = tuple(_relative_name(p, "collect pattern") for p in collect)
    extra: dict[str, str] = {}
    for key, value in (env or {}).items():
        if not (isinstance(key, str) and isinstance(value, str)) or not key or "=" in key:
            raise InputError(f"env must map variable names to str values, got {key!r}")
        if "\0" in key or "\0" in value:
            raise InputError(f"env[{key!r}] contains a NUL character")
        extra[key] = value
    if isinstance(writable_dirs, str):
        raise InputError("writable_dirs must be a sequence of directories, e.g. ('/tmp/cache',)")
    writable = tuple(os.path.realpath(d) for d in writable_dirs)
    for d in writable:
        if not os.path.isdir(d) or d == os.sep:
            raise InputError(f"writable_dirs: {d!r} must be an existing directory other than /")
    if shutil.which(python) is None:
        raise InputError(f"python interpreter {python!r} not found or not executable")
    return _Options(
        code, files, float(timeout_s), memory_mb, float(cpu), bool(allow_network),
        bool(allow_subprocess), max_output_chars, patterns, extra, python, writable,
    )  # fmt: skip


def _relative_name(name: object, what: str) -> str:
    """``name`` as a normalised relative path that stays inside the working directory."""
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"{what} must be a non-empty relative path, got {name!r}")
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or "\\" in name or "\0" in name:
        raise InputError(f"{what} {name!r} must be a relative path inside the working directory")
    return path.as_posix()


def _command(options: _Options, config: dict[str, object]) -> list[str]:
    """The child's argv: ``[unshare --net --] python -s -P -B -X utf8 _boot.py cfg``.

    ``-s``/``-P`` keep the user site and the script's directory off ``sys.path``; the
    environment is built from scratch, so no ``PYTHON*`` variable of the parent leaks (it is
    not ``-I``, because ``-I`` would also ignore the ``PYTHONHASHSEED`` we set).
    """
    prefix = []
    if not options.allow_network and support.netns_available():
        prefix = [str(shutil.which("unshare")), "--net", "--"]
    python = [options.python, "-s", "-P", "-B", "-X", "utf8", boot.__file__, json.dumps(config)]
    return prefix + python


def _run(options: _Options, cancel: threading.Event | None) -> SandboxResult:
    """Do one run: prepare the directory, start, wait or kill, collect, classify, clean up."""
    root = Path(tempfile.mkdtemp(prefix="silicolab-sandbox-"))
    try:
        work = root / "work"
        (work / ".tmp").mkdir(parents=True)
        for rel, data in options.inputs.items():
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            (work / rel).write_bytes(data)
        (work / boot.CODE_NAME).write_text(options.code, encoding="utf-8")
        support.seed_font_cache(options.python, work / ".tmp" / "matplotlib")
        violations_file = root / "violations.jsonl"
        config = {
            "workdir": str(work),
            "violations": str(violations_file),
            "memory_mb": options.memory_mb,
            "cpu_s": options.cpu_s,
            "fsize_mb": MAX_WRITE_MB,
            "allow_network": options.allow_network,
            "allow_subprocess": options.allow_subprocess,
            "writable_dirs": list(options.writable_dirs),
            "landlock": os.environ.get("SILICOLAB_SANDBOX_LANDLOCK") != "0",
        }
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                _command(options, config),
                cwd=work,
                env=support.child_env(options.python, work, options.env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            raise InputError(f"cannot start {options.python!r}: {exc}") from exc
        try:
            keep = 4 * options.max_output_chars
            out = OutputCapture(proc.stdout, keep)
            err = OutputCapture(proc.stderr, keep)
            stopped = support.wait_for_exit(proc.pid, start + options.timeout_s, cancel)
            elapsed = time.monotonic() - start
        finally:
            support.kill_session(proc.pid)  # before reaping: the pid cannot be reused meanwhile
            returncode = proc.wait()
        stdout, stderr = (c.text(options.max_output_chars) for c in (out, err))
        files, skipped = support.collect_files(
            work,
            options.collect,
            unchanged=options.inputs,
            exclude=boot.CODE_NAME,
            max_bytes=MAX_COLLECT_BYTES,
            max_files=MAX_COLLECT_FILES,
        )
        marks = _read_marks(violations_file)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    violation, message = _classify(options, returncode, stopped, marks, stderr, elapsed)
    if skipped:
        message += f" Not returned: {'; '.join(skipped)}."
    message = message.replace("\r", " ").replace("\n", " ")
    ok = violation is None and returncode == 0
    return SandboxResult(
        ok=ok,
        returncode=None if stopped else returncode,
        stdout=scrub_text(stdout),
        stderr=scrub_text(stderr),
        violation=violation,
        message=scrub_text(message),
        elapsed_s=round(elapsed, 3),
        files=files,
    )


def _read_marks(path: Path) -> list[dict[str, str]]:
    """The refusals the child's audit hook recorded, in order."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    marks = []
    for line in lines[: boot.MAX_RECORDS]:
        try:
            mark = json.loads(line)
        except ValueError:
            continue
        if isinstance(mark, dict) and mark.get("kind") in VIOLATIONS:
            marks.append({k: str(v) for k, v in mark.items()})
    return marks


def _classify(
    options: _Options,
    returncode: int,
    stopped: str | None,
    marks: list[dict[str, str]],
    stderr: str,
    elapsed: float,
) -> tuple[str | None, str]:
    """The violation (or None) and the one-line message for the agent."""
    took = f"after {elapsed:.1f} s"
    kinds = [m["kind"] for m in marks]
    if kinds:
        kind = min(kinds, key=VIOLATIONS.index)
        mark = marks[kinds.index(kind)]
        if kind == "memory":
            return kind, _memory_message(options, took, stderr)
        what = boot.WHAT.get(kind, kind)
        extra = " (and it was then stopped at the time limit)" if stopped == "timeout" else ""
        return kind, f"Blocked {took}: {what} ({mark['detail']}); {_HINTS[kind]}{extra}."
    if stopped == "timeout":
        return "timeout", (
            f"Stopped: the code ran longer than the {options.timeout_s:g} s time limit "
            f"(wall clock); {_HINTS['timeout']}."
        )
    if stopped == "cancelled":
        return None, f"Cancelled by the caller {took}."
    if returncode == -signal.SIGXCPU:
        return "timeout", (
            f"Stopped {took}: the code used more than {options.cpu_s:g} s of CPU time; "
            f"{_HINTS['timeout']}."
        )
    tail = stderr[-4000:]
    error = tail if returncode < 0 else _last_error(tail)[0]
    if returncode == -signal.SIGKILL or any(sign in error for sign in _MEMORY_SIGNS):
        return "memory", _memory_message(options, took, tail)
    if returncode == 0:
        return None, f"Finished successfully {took}."
    return None, _error_message(returncode, tail, took)


def _memory_message(options: _Options, took: str, stderr: str) -> str:
    error, _ = _last_error(stderr[-4000:])
    shown = f" ({error[:200]})" if ":" in error else ""
    return (
        f"Stopped {took}: the code tried to use more than the {options.memory_mb} MB memory "
        f"limit{shown}; {_HINTS['memory']}."
    )


def _last_error(stderr_tail: str) -> tuple[str, str]:
    """The last unindented stderr line (``ValueError: bad``) and `` (agent_code.py, line
    4)`` for the innermost frame of the agent's file, either possibly empty."""
    lines = [line for line in stderr_tail.splitlines() if line.strip()]
    error = next((line for line in reversed(lines) if not line[:1].isspace()), "")
    locations = _LOCATION.findall(stderr_tail)
    where = f" ({boot.CODE_NAME}, line {locations[-1]})" if locations else ""
    return error, where


def _error_message(returncode: int, stderr_tail: str, took: str) -> str:
    """``Failed after 0.3 s: ValueError: bad (agent_code.py, line 4); ...`` or the signal."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"Killed by {name} {took}; see stderr."
    error, where = _last_error(stderr_tail)
    if not error or error.startswith("Traceback"):
        return f"Exited with code {returncode} {took}; see stderr."
    return f"Failed {took}: {error[:300]}{where}; see stderr for the traceback."
