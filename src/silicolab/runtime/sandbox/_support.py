"""Plumbing for :mod:`silicolab.runtime.sandbox`: bounded output capture, waiting with a
deadline, killing every process of a sandboxed session, collecting output files, and a
warm matplotlib font cache.

Kept apart from the sandbox's policy code so each module stays small; nothing here knows
about audit hooks or violations.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO


class OutputCapture:
    """Read a pipe to EOF on a daemon thread, keeping only its first and last ``keep`` bytes.

    Memory stays bounded however much the child prints; :meth:`text` then decodes and
    trims to a character limit with a ``... N characters omitted ...`` marker.
    """

    def __init__(self, stream: IO[bytes] | None, keep: int):
        if stream is None:
            raise ValueError("OutputCapture needs a pipe (stdout=subprocess.PIPE)")
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self._stream = stream
        self._fd = stream.fileno()
        self._thread = threading.Thread(target=self._pump, name="sandbox-output", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.total += len(chunk)
            room = self.keep - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            if chunk:
                self.tail += chunk
                if len(self.tail) > self.keep:
                    del self.tail[: len(self.tail) - self.keep]

    def text(self, limit: int, wait_s: float = 2.0) -> str:
        """Everything read (after waiting up to ``wait_s`` for EOF), at most about ``limit``
        characters: 40 % head, 60 % tail (errors show up at the end). Closes the pipe
        unless a process that escaped the kill still holds it open."""
        self._thread.join(wait_s)
        if not self._thread.is_alive():
            self._stream.close()
        dropped = self.total - len(self.head) - len(self.tail)
        if dropped == 0:
            head = (bytes(self.head) + bytes(self.tail)).decode("utf-8", "replace")
            tail, whole = "", True
        else:
            head = self.head.decode("utf-8", "replace")
            tail = self.tail.decode("utf-8", "replace")
            whole = False
        if whole and len(head) <= limit:
            return head
        return trim(head, tail, dropped, limit)


def trim(head: str, tail: str, dropped: int, limit: int) -> str:
    """``head`` + ``tail`` (with ``dropped`` characters known to be missing in between)
    shortened to about ``limit`` characters around an omission marker."""
    text_tail = tail if tail else head
    keep_head = max(0, limit * 2 // 5)
    keep_tail = max(0, limit - keep_head - 60)
    shown_head = head[:keep_head]
    shown_tail = text_tail[len(text_tail) - keep_tail :] if keep_tail else ""
    if tail:
        omitted = (len(head) - len(shown_head)) + dropped + (len(tail) - len(shown_tail))
    else:
        omitted = len(head) - len(shown_head) - len(shown_tail)
    return f"{shown_head}\n... {omitted} characters omitted ...\n{shown_tail}"


def wait_for_exit(pid: int, deadline: float, cancel: threading.Event | None) -> str | None:
    """Wait until child ``pid`` exits, *without reaping it* (``WNOWAIT``), so its pid and
    process-group id cannot be reused before :func:`kill_session` runs.

    Returns None when it exited, ``"timeout"`` at ``deadline`` (a ``time.monotonic`` value)
    or ``"cancelled"`` when ``cancel`` is set.
    """
    pause = 0.002
    while True:
        try:
            info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return None
        if info is not None:
            return None
        now = time.monotonic()
        if now >= deadline:
            return "timeout"
        if cancel is not None and cancel.is_set():
            return "cancelled"
        time.sleep(min(pause, deadline - now))
        pause = min(pause * 1.5, 0.05)


def session_members(sid: int) -> list[int]:
    """Pids of the live (non-zombie) processes whose session id is ``sid``, from ``/proc``."""
    members = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat.rpartition(b")")[2].split()
        # fields after "(comm)": state, ppid, pgrp, session, ...
        if len(fields) > 3 and fields[0] not in (b"Z", b"X") and int(fields[3]) == sid:
            members.append(int(entry))
    return members


def kill_session(pid: int, rounds: int = 50) -> None:
    """SIGKILL the process group of the session leader ``pid`` and then every other process
    still in its session (children that changed group), repeating while new ones appear.

    Processes that started a session of their own (``setsid``) are not found; the sandbox
    blocks process creation by default, so only ``allow_subprocess=True`` code can do that.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    for _ in range(rounds):
        members = [p for p in session_members(pid) if p != pid]
        if not members:
            return
        for member in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(member, signal.SIGKILL)
        time.sleep(0.01)


def collect_files(
    work: Path,
    patterns: Sequence[str],
    *,
    unchanged: Mapping[str, bytes],
    exclude: str,
    max_bytes: int,
    max_files: int,
) -> tuple[dict[str, bytes], list[str]]:
    """Files of ``work`` matching the glob ``patterns`` and notes on those left out.

    Only regular files inside ``work`` count (no symlinks, FIFOs or hidden directories such
    as ``.tmp``); ``exclude`` and inputs whose bytes are ``unchanged`` are skipped silently;
    files above ``max_bytes`` or beyond ``max_files`` are named in the notes.
    """
    files: dict[str, bytes] = {}
    notes: list[str] = []
    real_root = work.resolve()
    for pattern in patterns:
        for path in sorted(work.glob(pattern)):
            rel = path.relative_to(work).as_posix()
            hidden = any(part.startswith(".") for part in rel.split("/")[:-1])
            if rel in files or rel == exclude or hidden or path.is_symlink():
                continue
            if not path.is_file() or not path.resolve().is_relative_to(real_root):
                continue
            size = path.stat().st_size
            if size > max_bytes:
                notes.append(f"{rel} ({size / 1e6:.1f} MB, limit {max_bytes / 1e6:.0f} MB)")
                continue
            data = path.read_bytes()
            if unchanged.get(rel) == data:
                continue
            if len(files) >= max_files:
                notes.append(f"{rel} (more than {max_files} files)")
                continue
            files[rel] = data
    return files, notes


_font_lock = threading.Lock()
_font_dirs: dict[str, Path | None] = {}


def matplotlib_font_cache(python: str) -> Path | None:
    """A directory holding matplotlib's ``fontlist-*.json`` for ``python``, or None.

    Without it every sandboxed ``import matplotlib`` (causal-learn imports it) would rebuild
    the font list and run ``fc-list`` — a blocked subprocess. It is built once per
    interpreter by a trusted, unsandboxed ``import matplotlib.font_manager`` and kept in the
    system temp directory; the sandbox copies the JSON into each run's ``MPLCONFIGDIR``.
    """
    with _font_lock:
        if python in _font_dirs:
            return _font_dirs[python]
        key = hashlib.sha256(os.path.realpath(python).encode()).hexdigest()[:12]
        cache = Path(tempfile.gettempdir()) / f"silicolab-sandbox-mpl-{os.getuid()}-{key}"
        result: Path | None = None
        try:
            cache.mkdir(mode=0o700, exist_ok=True)
            if cache.stat().st_uid == os.getuid():
                if not any(cache.glob("fontlist-*.json")):
                    env = {"MPLCONFIGDIR": str(cache), "MPLBACKEND": "Agg", "HOME": str(cache)}
                    env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
                    subprocess.run(
                        [python, "-s", "-P", "-B", "-c", "import matplotlib.font_manager"],
                        env=env,
                        capture_output=True,
                        timeout=120,
                        check=False,
                    )
                if any(cache.glob("fontlist-*.json")):
                    result = cache
        except (OSError, subprocess.SubprocessError):
            result = None
        _font_dirs[python] = result
        return result


def seed_font_cache(python: str, mpl_dir: Path) -> None:
    """Copy the warm font list for ``python`` (if any) into a run's ``MPLCONFIGDIR``."""
    cache = matplotlib_font_cache(python)
    if cache is None:
        return
    mpl_dir.mkdir(parents=True, exist_ok=True)
    for font_list in cache.glob("fontlist-*.json"):
        with contextlib.suppress(OSError):
            shutil.copyfile(font_list, mpl_dir / font_list.name)


@functools.cache
def netns_available() -> bool:
    """Whether ``unshare --net`` works here (root with the util-linux tool, not disabled by
    ``SILICOLAB_SANDBOX_NETNS=0``); probed once per process."""
    tool = shutil.which("unshare")
    if os.environ.get("SILICOLAB_SANDBOX_NETNS") == "0" or tool is None or os.geteuid() != 0:
        return False
    try:
        probe = subprocess.run([tool, "--net", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0


def child_env(python: str, work: Path, extra: Mapping[str, str]) -> dict[str, str]:
    """The child's whole environment: none of the parent's variables (so no API keys),
    ``HOME``/``TMPDIR`` in the working directory, one BLAS thread, then ``extra``."""
    tmp = str(work / ".tmp")
    python_dir = os.path.dirname(os.path.abspath(shutil.which(python) or python))
    env = {
        "PATH": os.pathsep.join([python_dir, "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(work),
        "TMPDIR": tmp,
        "TEMP": tmp,
        "TMP": tmp,
        "MPLCONFIGDIR": os.path.join(tmp, "matplotlib"),
        "MPLBACKEND": "Agg",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "MALLOC_ARENA_MAX": "2",
    }
    for name in ("OPENBLAS", "OMP", "MKL", "NUMEXPR", "VECLIB_MAXIMUM", "BLIS"):
        env[name + ("_THREADS" if name == "VECLIB_MAXIMUM" else "_NUM_THREADS")] = "1"
    env.update(extra)
    return env
