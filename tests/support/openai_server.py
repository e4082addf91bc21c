"""A local, scripted stand-in for the OpenAI and Anthropic HTTP APIs.

silicolab's tests and benchmarks talk to language models over HTTP. Reaching real providers from
tests would make them slow, flaky, costly and non-deterministic, so this module provides
:class:`FakeLLMServer`: a real HTTP/1.1 server on ``127.0.0.1`` that speaks enough of the OpenAI
Chat Completions API and the Anthropic Messages API for the official SDKs to work against it, while
letting a test script the replies, inject latency and faults, and read back what was served.

Design
------
The server runs an :mod:`asyncio` event loop in a daemon thread, so a synchronous test can
``start()`` it, point any client at :attr:`FakeLLMServer.base_url`, and ``stop()`` it. Connections
are handled by ``asyncio.start_server`` plus a deliberately small HTTP/1.1 parser (keep-alive,
``Content-Length`` and chunked request bodies). Latency is an ``asyncio.sleep`` so hundreds of
concurrent slow requests cost nothing, and ``stop()`` cancels every connection task, so hanging
"timeout" faults never delay shutdown.

Endpoints
---------
* ``POST /v1/chat/completions`` - OpenAI chat format, optionally ``stream: true`` (SSE).
* ``POST /v1/messages`` - Anthropic Messages format, optionally ``stream: true`` (SSE).
* ``GET /v1/models`` and ``GET /v1/models/{id}``.
* ``POST /v1/embeddings`` - deterministic unit vectors (``EMBEDDING_DIM`` wide, or ``dimensions``)
  seeded by a sha256 of each input; ``usage.prompt_tokens`` is the inputs' word count. Counted in
  ``requests``, ``ok`` and ``prompt_tokens``; no latency or faults are applied.

Token counting (deterministic, documented so client ledgers can match exactly)
------------------------------------------------------------------------------
* ``count_tokens(text)`` is the number of whitespace-separated words in ``text``.
* Prompt tokens are, over every message (an Anthropic ``system`` prompt counts as one message),
  ``MESSAGE_OVERHEAD_TOKENS`` (1) plus the words of the message's text. The text of a message is
  its string content, or the ``text`` of its content blocks joined with a space (non-text blocks
  such as images contribute nothing; nested ``content`` of tool results is included).
* Completion tokens are the words of the reply actually sent, after ``stop`` and ``max_tokens``
  truncation. ``max_tokens`` keeps the reply up to the end of its N-th word (``finish_reason``
  ``"length"`` / ``stop_reason`` ``"max_tokens"``).

Faults
------
``"429"`` (status 429, ``Retry-After`` header and error JSON), ``"500"`` (status 500, error JSON),
``"timeout"`` (the request is read and never answered; the connection closes after
``timeout_hang_s`` or as soon as the client goes away), ``"drop"`` (the connection is closed
without any response) and ``"malformed"`` (status 200, ``Content-Type: application/json``, body not
valid JSON). Faults apply only to the two completion endpoints, never to ``/v1/models``.

Example::

    with FakeLLMServer(reply=["yes", "no"], faults=[Fault("429", retry_after=0.2)]) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="test")
        ...  # the first request gets a 429, the next ones "yes", "no", "yes", ...
        assert srv.stats.faults_by_kind == {"429": 1}

The ``llm_server`` and ``llm_server_factory`` fixtures in ``tests/conftest.py`` start and stop
servers for tests.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import inspect
import itertools
import json
import math
import random
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "FAULT_KINDS",
    "MESSAGE_OVERHEAD_TOKENS",
    "FakeLLMServer",
    "Fault",
    "ReplySpec",
    "ServerStats",
    "count_prompt_tokens",
    "count_tokens",
    "message_text",
]

FAULT_KINDS: tuple[str, ...] = ("429", "500", "timeout", "drop", "malformed")
"""Every fault kind the server can inject."""

MESSAGE_OVERHEAD_TOKENS = 1
"""Fixed prompt-token cost added per message (stands in for role/formatting tokens)."""

DEFAULT_RETRY_AFTER_S = 0.05
"""``Retry-After`` value (seconds) sent with a 429 unless the :class:`Fault` says otherwise."""

ReplySpec = str | Sequence[str] | Callable[[dict[str, Any]], Any] | None
"""What :class:`FakeLLMServer` answers: see its docstring."""

_WORD_RE = re.compile(r"\S+")
_MAX_HEADER_BYTES = 64 * 1024
_MAX_BODY_BYTES = 32 * 1024 * 1024
_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
}


# --------------------------------------------------------------------------- token counting


EMBEDDING_DIM = 64


def fake_embedding(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """The server's deterministic unit vector for ``text`` (Gaussian, seeded by sha256)."""
    rng = random.Random(hashlib.sha256(text.encode("utf-8")).hexdigest())
    vec = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def count_tokens(text: str) -> int:
    """Return the fake token count of ``text``: its number of whitespace-separated words."""
    return len(text.split())


def message_text(content: Any) -> str:
    """Flatten a message ``content`` (string or list of content blocks) into plain text.

    OpenAI content parts and Anthropic content blocks both carry their text under ``"text"``;
    Anthropic tool results nest further blocks under ``"content"``. Anything else (images, tool
    calls) carries no text and contributes nothing.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        if isinstance(content.get("text"), str):
            return content["text"]
        if "content" in content:
            return message_text(content["content"])
        return ""
    if isinstance(content, list):
        return " ".join(part for part in (message_text(item) for item in content) if part)
    return ""


def count_prompt_tokens(messages: Iterable[Mapping[str, Any]], system: Any = None) -> int:
    """Return the prompt tokens of ``messages`` (plus an Anthropic-style ``system`` prompt).

    Each message costs :data:`MESSAGE_OVERHEAD_TOKENS` plus the words of its text; a non-empty
    ``system`` counts as one more message.
    """
    total = 0
    if system:
        total += MESSAGE_OVERHEAD_TOKENS + count_tokens(message_text(system))
    for message in messages:
        total += MESSAGE_OVERHEAD_TOKENS + count_tokens(message_text(message.get("content")))
    return total


def _apply_limits(
    text: str, stop: Sequence[str], max_tokens: int | None
) -> tuple[str, str, str | None]:
    """Cut ``text`` at the earliest ``stop`` sequence, then to at most ``max_tokens`` words.

    Returns ``(text, reason, matched_stop)`` where ``reason`` is ``"stop"`` (natural end),
    ``"stop_sequence"`` (a stop sequence matched) or ``"length"`` (``max_tokens`` reached).
    """
    reason, matched = "stop", None
    cut = len(text)
    for seq in stop:
        if seq:
            pos = text.find(seq)
            if 0 <= pos < cut:
                cut, matched = pos, seq
    if matched is not None:
        text, reason = text[:cut], "stop_sequence"
    if max_tokens is not None:
        words = list(_WORD_RE.finditer(text))
        if len(words) > max_tokens:
            text = text[: words[max_tokens - 1].end()] if max_tokens > 0 else ""
            reason, matched = "length", None
    return text, reason, matched


# --------------------------------------------------------------------------- public data types


@dataclass(frozen=True)
class Fault:
    """One injected failure.

    ``kind`` is one of :data:`FAULT_KINDS`. ``retry_after`` is the ``Retry-After`` value in seconds
    for ``"429"`` (default :data:`DEFAULT_RETRY_AFTER_S`); ``hang_s`` overrides the server's
    ``timeout_hang_s`` for one ``"timeout"`` fault.
    """

    kind: str
    retry_after: float | None = None
    hang_s: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; expected one of {FAULT_KINDS}")


@dataclass(frozen=True)
class ServerStats:
    """A consistent snapshot of what a :class:`FakeLLMServer` received and served.

    ``requests`` counts every HTTP request received (all endpoints); ``ok`` counts successful
    completions served (either endpoint, streamed or not); ``prompt_tokens`` and
    ``completion_tokens`` are summed over those ``ok`` responses only. ``abandoned`` counts
    completions not sent because the client had already closed the connection; ``errors`` counts
    reply callables that raised; ``connections`` counts TCP connections accepted. Also supports
    ``stats["ok"]`` style access.
    """

    requests: int = 0
    ok: int = 0
    faults_by_kind: dict[str, int] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    max_in_flight: int = 0
    in_flight: int = 0
    abandoned: int = 0
    errors: int = 0
    connections: int = 0
    auth_headers_seen: set[str] = field(default_factory=set)
    requests_log: list[dict[str, Any]] = field(default_factory=list)
    requests_by_path: dict[str, int] = field(default_factory=dict)

    @property
    def faults(self) -> int:
        """Total number of injected faults of any kind."""
        return sum(self.faults_by_kind.values())

    @property
    def total_tokens(self) -> int:
        """``prompt_tokens + completion_tokens`` over successful completions."""
        return self.prompt_tokens + self.completion_tokens

    def __getitem__(self, key: str) -> Any:
        """Dict-style access to any field or property, e.g. ``stats["faults_by_kind"]``."""
        try:
            return getattr(self, key)
        except AttributeError:
            raise KeyError(key) from None

    def as_dict(self) -> dict[str, Any]:
        """Return a plain dict of the counters (copies of the mutable members)."""
        return {
            "requests": self.requests,
            "ok": self.ok,
            "faults_by_kind": dict(self.faults_by_kind),
            "faults": self.faults,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "max_in_flight": self.max_in_flight,
            "in_flight": self.in_flight,
            "abandoned": self.abandoned,
            "errors": self.errors,
            "connections": self.connections,
            "auth_headers_seen": set(self.auth_headers_seen),
            "requests_log": list(self.requests_log),
            "requests_by_path": dict(self.requests_by_path),
        }


class _HttpError(Exception):
    """A client error to answer with ``status`` and an endpoint-appropriate error body."""

    def __init__(self, status: int, message: str, err_type: str = "invalid_request_error"):
        super().__init__(message)
        self.status = status
        self.message = message
        self.err_type = err_type


@dataclass
class _Request:
    method: str
    path: str
    version: str
    headers: dict[str, str]
    body: bytes


# --------------------------------------------------------------------------- the server


class FakeLLMServer:
    """An OpenAI- and Anthropic-compatible HTTP server with scripted replies and faults.

    Args:
        reply: ``None`` answers ``"echo: <text of the last user message>"``; a ``str`` is always
            answered; a list of strings is served in order, cycling (the position advances only on
            requests that get a reply, not on faulted ones); a callable receives the request JSON
            (a dict) and returns the reply text (it may be ``async``). If the callable raises, the
            request is answered with status 500 and counted in ``stats.errors``. ``reply`` may be
            reassigned while the server runs. Whatever the reply, ``response_format`` is only
            validated, never enforced: the reply decides the text.
        latency_s: delay added before answering each completion request (faulted ones included).
        fault_rate: probability that a completion request gets a random fault drawn from
            ``fault_kinds``, using a ``random.Random(seed)``.
        fault_kinds: the kinds random faults are drawn from.
        faults: an explicit script, one entry (:class:`Fault`, a kind string, or ``None`` for "no
            fault") consumed per completion request before random faults apply.
        timeout_hang_s: how long a ``"timeout"`` fault holds the connection before closing it.
        seed: seed for the fault RNG.
        models: model ids listed by ``GET /v1/models``.
        log_limit: the most recent request bodies kept in ``stats.requests_log``.
        ssl_context: a server-side :class:`ssl.SSLContext` to serve HTTPS instead of HTTP
            (``root_url`` and ``base_url`` then start with ``https://``).
    """

    def __init__(
        self,
        reply: ReplySpec = None,
        latency_s: float = 0.0,
        fault_rate: float = 0.0,
        fault_kinds: Sequence[str] = FAULT_KINDS,
        faults: Sequence[Fault | str | None] | None = None,
        timeout_hang_s: float = 30.0,
        seed: int = 0,
        models: Sequence[str] = ("fake-model",),
        log_limit: int = 1000,
        ssl_context: Any = None,
    ) -> None:
        if not 0.0 <= fault_rate <= 1.0:
            raise ValueError("fault_rate must be within [0, 1]")
        if latency_s < 0 or timeout_hang_s < 0:
            raise ValueError("latency_s and timeout_hang_s must be >= 0")
        for kind in fault_kinds:
            Fault(kind)  # validates
        if fault_rate > 0 and not fault_kinds:
            raise ValueError("fault_rate > 0 needs at least one fault kind")
        if isinstance(reply, Sequence) and not isinstance(reply, str) and not reply:
            raise ValueError("a reply list must not be empty")
        self.reply: ReplySpec = reply
        self.latency_s = latency_s
        self.fault_rate = fault_rate
        self.fault_kinds = tuple(fault_kinds)
        self.timeout_hang_s = timeout_hang_s
        self.models = tuple(models)
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._script: deque[Fault | None] = deque()
        self.script_faults(faults or ())
        self._reply_index = 0
        self._ids = itertools.count(1)
        self._log_limit = log_limit
        self._ssl_context = ssl_context
        self.last_headers: dict[str, str] = {}
        self._reset_counters()

        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._conn_tasks: set[asyncio.Task[None]] = set()
        self._ready = threading.Event()
        self._start_error: BaseException | None = None
        self._port: int | None = None

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> FakeLLMServer:
        """Start serving in a background thread; returns once the port is bound."""
        if self._thread is not None:
            raise RuntimeError("server already started")
        self._ready.clear()
        self._thread = threading.Thread(target=self._run, name="FakeLLMServer", daemon=True)
        self._thread.start()
        self._ready.wait(10.0)
        if self._start_error is not None:
            self._thread.join(1.0)
            self._thread = None
            raise RuntimeError("FakeLLMServer failed to start") from self._start_error
        if self._port is None:
            raise RuntimeError("FakeLLMServer did not start within 10 s")
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving: close the listener and abort every open connection, hanging or not."""
        thread, loop, stop_event = self._thread, self._loop, self._stop_event
        if thread is None:
            return
        if loop is not None and stop_event is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # loop closed in the meantime
                loop.call_soon_threadsafe(stop_event.set)
        thread.join(timeout)
        if thread.is_alive():
            raise RuntimeError("FakeLLMServer did not stop in time")
        self._thread = None
        self._port = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        """Whether the server thread is up."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def port(self) -> int:
        """The bound TCP port (only while running)."""
        if self._port is None:
            raise RuntimeError("server is not running")
        return self._port

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:<port>`` - the ``base_url`` the Anthropic SDK expects."""
        scheme = "https" if self._ssl_context is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` - the ``base_url`` the OpenAI SDK expects."""
        return f"{self.root_url}/v1"

    # ----------------------------------------------------------------- scripting and stats

    def script_faults(self, faults: Iterable[Fault | str | None]) -> None:
        """Append entries to the fault script (thread-safe; strings are turned into Faults)."""
        entries = [Fault(f) if isinstance(f, str) else f for f in faults]
        with self._lock:
            self._script.extend(entries)

    @property
    def stats(self) -> ServerStats:
        """A snapshot of the counters (safe to read from any thread)."""
        with self._lock:
            return ServerStats(
                requests=self._requests,
                ok=self._ok,
                faults_by_kind=dict(self._faults_by_kind),
                prompt_tokens=self._prompt_tokens,
                completion_tokens=self._completion_tokens,
                max_in_flight=self._max_in_flight,
                in_flight=self._in_flight,
                abandoned=self._abandoned,
                errors=self._errors,
                connections=self._connections,
                auth_headers_seen=set(self._auth_seen),
                requests_log=list(self._log),
                requests_by_path=dict(self._by_path),
            )

    def reset_stats(self) -> None:
        """Zero every counter (the reply position and the fault script are left alone)."""
        with self._lock:
            in_flight = getattr(self, "_in_flight", 0)
            self._reset_counters()
            self._in_flight = self._max_in_flight = in_flight

    def _reset_counters(self) -> None:
        self._requests = 0
        self._ok = 0
        self._faults_by_kind: dict[str, int] = {}
        self._prompt_tokens = 0
        self._completion_tokens = 0
        self._in_flight = 0
        self._max_in_flight = 0
        self._abandoned = 0
        self._errors = 0
        self._connections = 0
        self._auth_seen: set[str] = set()
        self._log: deque[dict[str, Any]] = deque(maxlen=self._log_limit)
        self._by_path: dict[str, int] = {}

    # ----------------------------------------------------------------- event loop thread

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        except BaseException as exc:  # reported to start() if it happened during startup
            self._start_error = exc
        finally:
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()
                self._loop = None
                self._ready.set()

    async def _serve(self) -> None:
        self._stop_event = asyncio.Event()
        server = await asyncio.start_server(
            self._on_connection,
            host="127.0.0.1",
            port=0,
            backlog=2048,
            limit=_MAX_HEADER_BYTES,
            ssl=self._ssl_context,
        )
        self._port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            await self._stop_event.wait()
        finally:
            server.close()
            tasks = list(self._conn_tasks)
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.gather(*tasks, return_exceptions=True)
            await server.wait_closed()
            # Let the transports' connection_lost callbacks run so every socket is really
            # closed before the loop is (avoids "unclosed transport" ResourceWarnings).
            for _ in range(3):
                await asyncio.sleep(0)

    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        task = asyncio.current_task()
        assert task is not None
        self._conn_tasks.add(task)
        with self._lock:
            self._connections += 1
        try:
            await self._connection_loop(reader, writer)
        except (asyncio.CancelledError, ConnectionError, asyncio.IncompleteReadError):
            pass
        except Exception as exc:  # a bug in this server: count it, answer 500 if still possible
            with self._lock:
                self._errors += 1
            err = _HttpError(500, f"fake server error: {exc!r}", "server_error")
            with contextlib.suppress(Exception):
                await self._send_json(writer, 500, _openai_error(err), keep_alive=False)
        finally:
            self._conn_tasks.discard(task)
            writer.close()

    async def _connection_loop(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Serve requests on one keep-alive connection until either side closes it."""
        while True:
            try:
                request = await self._read_request(reader)
            except _HttpError as err:
                await self._send_json(writer, err.status, _openai_error(err), keep_alive=False)
                return
            if request is None:
                return
            keep_alive = request.version == "HTTP/1.1" and (
                request.headers.get("connection", "").lower() != "close"
            )
            with self._lock:
                self._in_flight += 1
                self._max_in_flight = max(self._max_in_flight, self._in_flight)
            try:
                keep_alive = await self._dispatch(request, reader, writer, keep_alive)
            finally:
                with self._lock:
                    self._in_flight -= 1
            if not keep_alive:
                return

    async def _read_request(self, reader: asyncio.StreamReader) -> _Request | None:
        """Parse one HTTP/1.x request; ``None`` when the client closed the connection cleanly."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial.strip():
                raise _HttpError(400, "incomplete request head") from None
            return None
        except asyncio.LimitOverrunError:
            raise _HttpError(413, "request head too large") from None
        lines = head.decode("latin-1").split("\r\n")
        try:
            method, target, version = lines[0].split(" ", 2)
        except ValueError:
            raise _HttpError(400, "bad request line") from None
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if not line:
                continue
            name, sep, value = line.partition(":")
            if not sep:
                raise _HttpError(400, "bad header line")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = await self._read_chunked(reader)
        else:
            try:
                length = int(headers.get("content-length", "0"))
            except ValueError:
                raise _HttpError(400, "bad Content-Length") from None
            if length < 0 or length > _MAX_BODY_BYTES:
                raise _HttpError(413, "body too large")
            body = await reader.readexactly(length) if length else b""
        path = target.split("?", 1)[0]
        return _Request(method.upper(), path, version.upper(), headers, body)

    @staticmethod
    async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
        parts: list[bytes] = []
        size_total = 0
        while True:
            line = await reader.readuntil(b"\r\n")
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise _HttpError(400, "bad chunk size") from None
            if size == 0:
                # Skip optional trailers up to the terminating blank line.
                while (await reader.readuntil(b"\r\n")) != b"\r\n":
                    pass
                return b"".join(parts)
            size_total += size
            if size_total > _MAX_BODY_BYTES:
                raise _HttpError(413, "body too large")
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)

    # ----------------------------------------------------------------- routing

    async def _dispatch(
        self,
        request: _Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        keep_alive: bool,
    ) -> bool:
        """Answer one request; returns whether the connection may be reused."""
        with self._lock:
            self._requests += 1
            self._by_path[request.path] = self._by_path.get(request.path, 0) + 1
            for name in ("authorization", "x-api-key"):
                if name in request.headers:
                    self._auth_seen.add(request.headers[name])
            self.last_headers = dict(request.headers)

        path = request.path.rstrip("/")
        if path in ("/v1/chat/completions", "/chat/completions"):
            flavor = "openai"
        elif path in ("/v1/messages", "/messages"):
            flavor = "anthropic"
        elif path in ("/v1/embeddings", "/embeddings"):
            if request.method != "POST":
                return await self._send_error(writer, "openai", 405, "use POST", keep_alive)
            try:
                return await self._embeddings(request.body, writer, keep_alive)
            except _HttpError as err:
                return await self._send_error(
                    writer, "openai", err.status, err.message, keep_alive, err.err_type
                )
        elif path in ("/v1/models", "/models") or path.startswith(("/v1/models/", "/models/")):
            if request.method != "GET":
                return await self._send_error(writer, "openai", 405, "use GET", keep_alive)
            return await self._models(writer, path, keep_alive)
        else:
            msg = f"no route for {request.method} {request.path}"
            return await self._send_error(writer, "openai", 404, msg, keep_alive, "not_found_error")
        if request.method != "POST":
            return await self._send_error(writer, flavor, 405, "use POST", keep_alive)

        try:
            body = json.loads(request.body or b"null")
        except (ValueError, UnicodeDecodeError):
            return await self._send_error(writer, flavor, 400, "body is not valid JSON", keep_alive)
        if not isinstance(body, dict):
            return await self._send_error(writer, flavor, 400, "body must be an object", keep_alive)
        with self._lock:
            self._log.append(body)

        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)

        fault = self._next_fault()
        if fault is not None:
            return await self._inject(fault, flavor, reader, writer, keep_alive)
        try:
            if flavor == "openai":
                return await self._chat_completion(body, reader, writer, keep_alive)
            return await self._anthropic_message(body, reader, writer, keep_alive)
        except _HttpError as err:
            return await self._send_error(
                writer, flavor, err.status, err.message, keep_alive, err.err_type
            )

    def _next_fault(self) -> Fault | None:
        """The scripted fault if any is left, else a random one with probability fault_rate."""
        with self._lock:
            if self._script:
                return self._script.popleft()
            if self.fault_rate > 0 and self._rng.random() < self.fault_rate:
                return Fault(self._rng.choice(self.fault_kinds))
        return None

    async def _inject(
        self,
        fault: Fault,
        flavor: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        keep_alive: bool,
    ) -> bool:
        with self._lock:
            self._faults_by_kind[fault.kind] = self._faults_by_kind.get(fault.kind, 0) + 1
        if fault.kind == "429":
            retry_after = DEFAULT_RETRY_AFTER_S if fault.retry_after is None else fault.retry_after
            return await self._send_error(
                writer,
                flavor,
                429,
                "rate limit exceeded (injected fault)",
                keep_alive,
                "rate_limit_error",
                extra_headers={"Retry-After": f"{retry_after:g}"},
            )
        if fault.kind == "500":
            err_type = "server_error" if flavor == "openai" else "api_error"
            msg = "internal server error (injected fault)"
            return await self._send_error(writer, flavor, 500, msg, keep_alive, err_type)
        if fault.kind == "malformed":
            body = b'{"id": "chatcmpl-malformed", "choices": [ {"message": '
            await self._send(writer, 200, body, "application/json", keep_alive)
            return keep_alive
        if fault.kind == "timeout":
            hang = self.timeout_hang_s if fault.hang_s is None else fault.hang_s
            # Hang without answering; give up early if the client closes its side.
            with contextlib.suppress(TimeoutError, ConnectionError):
                await asyncio.wait_for(reader.read(1), timeout=hang)
            return False
        return False  # "drop": close without a response

    async def _models(self, writer: asyncio.StreamWriter, path: str, keep_alive: bool) -> bool:
        def entry(model_id: str) -> dict[str, Any]:
            return {"id": model_id, "object": "model", "created": 0, "owned_by": "silicolab-fake"}

        prefix = "/v1/models/" if path.startswith("/v1/") else "/models/"
        if path.startswith(prefix):
            model_id = path[len(prefix) :]
            if model_id not in self.models:
                msg = f"model {model_id!r} not found"
                return await self._send_error(writer, "openai", 404, msg, keep_alive)
            return await self._send_json(writer, 200, entry(model_id), keep_alive)
        payload = {"object": "list", "data": [entry(m) for m in self.models]}
        return await self._send_json(writer, 200, payload, keep_alive)

    async def _embeddings(self, raw: bytes, writer: asyncio.StreamWriter, keep_alive: bool) -> bool:
        try:
            body = json.loads(raw or b"null")
        except (ValueError, UnicodeDecodeError):
            raise _HttpError(400, "body is not valid JSON") from None
        if not isinstance(body, dict):
            raise _HttpError(400, "body must be an object")
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if (
            not isinstance(inputs, list)
            or not inputs
            or not all(isinstance(t, str) for t in inputs)
        ):
            raise _HttpError(400, "input must be a string or a non-empty list of strings")
        dim = body.get("dimensions") or EMBEDDING_DIM
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1:
            raise _HttpError(400, "dimensions must be a positive integer")
        with self._lock:
            self._log.append(body)
        data = []
        for i, text in enumerate(inputs):
            vec: Any = fake_embedding(text, dim)
            if body.get("encoding_format") == "base64":
                vec = base64.b64encode(struct.pack(f"<{dim}f", *vec)).decode("ascii")
            data.append({"object": "embedding", "index": i, "embedding": vec})
        tokens = sum(count_tokens(t) for t in inputs)
        payload = {
            "object": "list",
            "data": data,
            "model": str(body.get("model", "fake-embedding")),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        self._count_ok(tokens, 0)
        return await self._send_json(writer, 200, payload, keep_alive)

    # ----------------------------------------------------------------- replies

    async def _reply_text(self, body: dict[str, Any], messages: list[Any]) -> str:
        spec = self.reply
        if spec is None:
            last_user = next(
                (m for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "user"),
                None,
            )
            return "echo: " + (message_text(last_user.get("content")) if last_user else "")
        if isinstance(spec, str):
            return spec
        if callable(spec):
            try:
                result = spec(body)
                if inspect.isawaitable(result):
                    result = await result
            except Exception as exc:
                with self._lock:
                    self._errors += 1
                raise _HttpError(500, f"reply callable failed: {exc!r}", "server_error") from exc
            return str(result)
        with self._lock:
            text = spec[self._reply_index % len(spec)]
            self._reply_index += 1
        return text

    def _client_gone(self, reader: asyncio.StreamReader) -> bool:
        if reader.at_eof():
            with self._lock:
                self._abandoned += 1
            return True
        return False

    def _count_ok(self, prompt_tokens: int, completion_tokens: int) -> None:
        with self._lock:
            self._ok += 1
            self._prompt_tokens += prompt_tokens
            self._completion_tokens += completion_tokens

    @staticmethod
    def _limits(body: dict[str, Any], *token_keys: str) -> tuple[list[str], int | None]:
        stop = body.get("stop", body.get("stop_sequences"))
        if stop is None:
            stops: list[str] = []
        elif isinstance(stop, str):
            stops = [stop]
        elif isinstance(stop, list) and all(isinstance(s, str) for s in stop):
            stops = stop
        else:
            raise _HttpError(400, "stop must be a string or a list of strings")
        max_tokens = None
        for key in token_keys:
            value = body.get(key)
            if value is not None:
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise _HttpError(400, f"{key} must be a non-negative integer")
                max_tokens = value
                break
        return stops, max_tokens

    async def _chat_completion(
        self,
        body: dict[str, Any],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        keep_alive: bool,
    ) -> bool:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise _HttpError(400, "messages must be a non-empty list")
        if not all(isinstance(m, dict) for m in messages):
            raise _HttpError(400, "each message must be an object")
        if body.get("n", 1) not in (1, None):
            raise _HttpError(400, "this fake server only supports n=1")
        response_format = body.get("response_format")
        if response_format is not None and (
            not isinstance(response_format, dict)
            or response_format.get("type") not in ("text", "json_object", "json_schema")
        ):
            raise _HttpError(400, "response_format.type must be text, json_object or json_schema")
        stops, max_tokens = self._limits(body, "max_completion_tokens", "max_tokens")
        model = str(body.get("model", "fake-model"))

        raw = await self._reply_text(body, messages)
        text, reason, _ = _apply_limits(raw, stops, max_tokens)
        finish_reason = "stop" if reason == "stop_sequence" else reason
        prompt_tokens = count_prompt_tokens(messages)
        completion_tokens = count_tokens(text)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        completion_id = f"chatcmpl-fake{next(self._ids):08d}"
        created = int(time.time())
        if self._client_gone(reader):
            return False

        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            base = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": "fp_silicolab_fake",
            }

            def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
                choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                return {**base, "choices": [choice]}

            events = [chunk({"role": "assistant", "content": ""}, None)]
            events += [chunk({"content": piece}, None) for piece in _stream_pieces(text)]
            events.append(chunk({}, finish_reason))
            if include_usage:
                events.append({**base, "choices": [], "usage": usage})
            payloads = [f"data: {json.dumps(e)}\n\n" for e in events] + ["data: [DONE]\n\n"]
            # Count before writing so a client that already has the response sees it counted.
            self._count_ok(prompt_tokens, completion_tokens)
            return await self._send_stream(writer, payloads, keep_alive)

        payload = {
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "system_fingerprint": "fp_silicolab_fake",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": finish_reason,
                }
            ],
            "usage": usage,
        }
        self._count_ok(prompt_tokens, completion_tokens)
        return await self._send_json(writer, 200, payload, keep_alive)

    async def _anthropic_message(
        self,
        body: dict[str, Any],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        keep_alive: bool,
    ) -> bool:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise _HttpError(400, "messages must be a non-empty list")
        if not all(isinstance(m, dict) for m in messages):
            raise _HttpError(400, "each message must be an object")
        stops, max_tokens = self._limits(body, "max_tokens")
        model = str(body.get("model", "fake-model"))
        system = body.get("system")

        raw = await self._reply_text(body, messages)
        text, reason, matched = _apply_limits(raw, stops, max_tokens)
        stop_reason = {"stop": "end_turn", "stop_sequence": "stop_sequence"}.get(
            reason, "max_tokens"
        )
        input_tokens = count_prompt_tokens(messages, system=system)
        output_tokens = count_tokens(text)
        message_id = f"msg_fake{next(self._ids):08d}"
        if self._client_gone(reader):
            return False

        message = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": stop_reason,
            "stop_sequence": matched,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
        }
        if body.get("stream"):
            start = {
                **message,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": input_tokens, "output_tokens": 0},
            }
            events: list[tuple[str, dict[str, Any]]] = [
                ("message_start", {"type": "message_start", "message": start}),
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                ),
            ]
            for piece in _stream_pieces(text):
                delta = {"type": "text_delta", "text": piece}
                events.append(
                    (
                        "content_block_delta",
                        {"type": "content_block_delta", "index": 0, "delta": delta},
                    )
                )
            events += [
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop_reason, "stop_sequence": matched},
                        "usage": {"output_tokens": output_tokens},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            ]
            payloads = [f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events]
            self._count_ok(input_tokens, output_tokens)
            return await self._send_stream(writer, payloads, keep_alive)

        self._count_ok(input_tokens, output_tokens)
        return await self._send_json(writer, 200, message, keep_alive)

    # ----------------------------------------------------------------- HTTP output

    async def _send(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        body: bytes,
        content_type: str,
        keep_alive: bool,
        extra_headers: Mapping[str, str] | None = None,
    ) -> bool:
        headers = [
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}",
            f"Content-Type: {content_type}",
            f"Content-Length: {len(body)}",
            f"Connection: {'keep-alive' if keep_alive else 'close'}",
            f"x-request-id: req_fake{next(self._ids):08d}",
        ]
        headers += [f"{k}: {v}" for k, v in (extra_headers or {}).items()]
        writer.write(("\r\n".join(headers) + "\r\n\r\n").encode("latin-1") + body)
        await writer.drain()
        return keep_alive

    async def _send_json(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        payload: Any,
        keep_alive: bool,
        extra_headers: Mapping[str, str] | None = None,
    ) -> bool:
        body = json.dumps(payload).encode()
        return await self._send(writer, status, body, "application/json", keep_alive, extra_headers)

    async def _send_error(
        self,
        writer: asyncio.StreamWriter,
        flavor: str,
        status: int,
        message: str,
        keep_alive: bool,
        err_type: str = "invalid_request_error",
        extra_headers: Mapping[str, str] | None = None,
    ) -> bool:
        err = _HttpError(status, message, err_type)
        payload = _openai_error(err) if flavor == "openai" else _anthropic_error(err)
        return await self._send_json(writer, status, payload, keep_alive, extra_headers)

    async def _send_stream(
        self, writer: asyncio.StreamWriter, payloads: list[str], keep_alive: bool
    ) -> bool:
        """Send an SSE response with chunked transfer encoding (keeps keep-alive possible)."""
        head = (
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/event-stream; charset=utf-8\r\n"
            "Cache-Control: no-cache\r\n"
            "Transfer-Encoding: chunked\r\n"
            f"Connection: {'keep-alive' if keep_alive else 'close'}\r\n"
            f"x-request-id: req_fake{next(self._ids):08d}\r\n\r\n"
        )
        writer.write(head.encode("latin-1"))
        for payload in payloads:
            data = payload.encode()
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return keep_alive


def _stream_pieces(text: str) -> list[str]:
    """Split ``text`` into streamed deltas (one word plus its trailing whitespace each)."""
    pieces = re.findall(r"\s*\S+\s*", text) if text.strip() else ([text] if text else [])
    return pieces


def _openai_error(err: _HttpError) -> dict[str, Any]:
    code = {429: "rate_limit_exceeded", 500: "server_error"}.get(err.status)
    return {"error": {"message": err.message, "type": err.err_type, "param": None, "code": code}}


def _anthropic_error(err: _HttpError) -> dict[str, Any]:
    return {"type": "error", "error": {"type": err.err_type, "message": err.message}}
