"""Run llama-cpp-python's OpenAI-compatible server as a subprocess for tests.

Why: the LLM layer must be tested against a real OpenAI-compatible HTTP server
(real request validation, token usage, grammar-constrained sampling), not only
against stubs. ``python -m llama_cpp.server`` serving the tiny GGUF from
:mod:`tiny_gguf` starts in a couple of seconds and needs no network.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

__all__ = ["LlamaCppServer", "llamacpp_available"]


def llamacpp_available() -> bool:
    """True when the ``local`` extra is installed (``llama_cpp`` and ``gguf`` importable).

    Uses ``find_spec`` so the check is cheap and does not load the native library.
    """
    return all(importlib.util.find_spec(name) is not None for name in ("llama_cpp", "gguf"))


def _free_port() -> int:
    """Ask the OS for a currently free TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LlamaCppServer:
    """Context manager that serves one GGUF with ``python -m llama_cpp.server``.

    Usage::

        with LlamaCppServer(model_path) as srv:
            client = openai.OpenAI(base_url=srv.base_url, api_key="unused")

    The server's stdout and stderr (including uvicorn's access log) go to
    ``srv.log_path`` inside a private temporary directory, which is removed on
    exit. :meth:`request_count` counts access-log lines, so a test can check
    whether a request actually reached the server.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = 256,
        model_alias: str | None = None,
        startup_timeout_s: float = 60.0,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.model_path = Path(model_path)
        self.n_ctx = n_ctx
        self.model_alias = model_alias
        self.startup_timeout_s = startup_timeout_s
        self.extra_args = extra_args
        self.port: int | None = None
        self.startup_s: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._tmpdir: str | None = None
        self._log_file = None

    # ------------------------------------------------------------------ info
    @property
    def base_url(self) -> str:
        """OpenAI base URL of the running server, e.g. ``http://127.0.0.1:PORT/v1``."""
        if self.port is None:
            raise RuntimeError("server is not running")
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def log_path(self) -> Path:
        """Path of the server's combined stdout/stderr log."""
        if self._tmpdir is None:
            raise RuntimeError("server is not running")
        return Path(self._tmpdir) / "llama_server.log"

    def log_text(self) -> str:
        """Current contents of the server log (empty string if unavailable)."""
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except (OSError, RuntimeError):
            return ""

    def request_count(self, path: str = "/v1/chat/completions") -> int:
        """Number of requests to ``path`` recorded in the server's access log."""
        needle = f'"POST {path} ' if "completions" in path else f" {path} "
        return sum(needle in line for line in self.log_text().splitlines())

    # ------------------------------------------------------------- lifecycle
    def start(self) -> LlamaCppServer:
        """Start the server and block until ``GET /v1/models`` answers.

        Raises ``RuntimeError`` (with the server log) if the process exits early or
        does not answer within ``startup_timeout_s`` seconds.
        """
        if self._proc is not None:
            raise RuntimeError("server already started")
        if not self.model_path.is_file():
            raise FileNotFoundError(self.model_path)
        self._tmpdir = tempfile.mkdtemp(prefix="silicolab-llamacpp-")
        self.port = _free_port()
        cmd = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model_path),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
        ]
        from silicolab.llm.local import default_threads

        threads = str(default_threads())  # all cores but one: see silicolab.llm.local
        cmd += ["--n_threads", threads, "--n_threads_batch", threads]
        if self.model_alias:
            cmd += ["--model_alias", self.model_alias]
        cmd += list(self.extra_args)
        env = dict(os.environ)
        env["PYTHONUNBUFFERED"] = "1"  # access-log lines reach the file immediately
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        self._log_file = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        started = time.monotonic()
        self._proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            env=env,
        )
        try:
            self._wait_ready(started)
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - started
        return self

    def _wait_ready(self, started: float) -> None:
        """Poll ``/v1/models`` until it returns JSON, the process dies, or time runs out."""
        assert self._proc is not None
        url = f"{self.base_url}/models"
        while True:
            code = self._proc.poll()
            if code is not None:
                raise RuntimeError(
                    f"llama_cpp.server exited with code {code} during startup; log:\n"
                    f"{self.log_text()}"
                )
            try:
                with urllib.request.urlopen(url, timeout=2.0) as resp:
                    if resp.status == 200:
                        json.loads(resp.read())
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError):
                pass
            if time.monotonic() - started > self.startup_timeout_s:
                raise RuntimeError(
                    f"llama_cpp.server did not answer {url} within "
                    f"{self.startup_timeout_s:.0f} s; log:\n{self.log_text()}"
                )
            time.sleep(0.2)

    def stop(self) -> None:
        """Terminate the server (kill it if it ignores SIGTERM) and remove its temp dir."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None
        self.port = None

    def __enter__(self) -> LlamaCppServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
