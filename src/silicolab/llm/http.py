"""A lean asyncio HTTP/1.1 client for JSON APIs: keep-alive pool, TLS, one deadline.

Why it exists: the ``openai`` backend's hot path is one small JSON POST per call. Through the
official SDK and httpx that POST costs about 0.9 ms of client CPU (request and options
objects, header merging, httpcore's state machines); this client costs about 0.05 ms. On a
two-core machine running 64 calls at once that CPU is spent serially at every wave of
completions, so it decides whether 256 calls of 200 ms finish in 0.82 s or 1.0 s (see
``benchmarks/bench_llm.py``). The SDK path stays available (``transport="sdk"``) and is used
automatically when a proxy is configured, since this client does not speak to proxies.

What it does: HTTP/1.1 over TCP or TLS (system trust store, or certifi when present);
``Content-Length``, chunked and read-to-close bodies; gzip/deflate; idle connections reused
most-recent-first and dropped after ``keepalive_s`` (below the 5 s idle timeout of uvicorn,
which serves vLLM and llama-cpp-python) or as soon as the server closes them. One deadline
(``timeout_s``) covers connect, send and the whole response. A connection whose exchange did
not finish cleanly (timeout, cancellation, malformed reply) is closed, never reused.
What it does not: proxies, HTTP/2, streaming, redirects, cookies.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import ssl
import time
import urllib.request
import weakref
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from silicolab.core.errors import ConfigError
from silicolab.core.sync import at_loop_end

#: Largest accepted response head (status line plus headers).
MAX_HEAD_BYTES = 64 * 1024
_NO_BODY_STATUSES = frozenset({204, 304})


#: The clients that opened connections in each running loop, so that a loop about to end
#: (the sync twins run one loop per call) can close them: see :func:`close_loop_clients`.
_CLIENTS_BY_LOOP: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, weakref.WeakSet] = (
    weakref.WeakKeyDictionary()
)


async def close_loop_clients() -> None:
    """Close the idle connections of every :class:`HTTPClient` used in the running loop."""
    clients = _CLIENTS_BY_LOOP.pop(asyncio.get_running_loop(), None)
    for client in list(clients or ()):
        await client.aclose()


# Every loop run_sync runs closes its connections when it ends (the loop ends with the call).
at_loop_end(close_loop_clients)


class TransportError(ConnectionError):
    """The connection failed, or closed before a complete, well-formed response arrived."""


@dataclass(frozen=True)
class HTTPResponse:
    """A complete response: status, headers (lower-case names) and the decoded body."""

    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        """The body parsed as JSON (raises ``json.JSONDecodeError`` / ``UnicodeDecodeError``)."""
        return json.loads(self.body)


def proxy_for(url: str) -> str | None:
    """The proxy the environment (``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY``, honouring
    ``NO_PROXY``) configures for ``url``, or ``None`` when requests go direct."""
    parts = urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy:
        return None
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    if urllib.request.proxy_bypass_environment(host, proxies):
        return None
    return proxy


def default_ssl_context() -> ssl.SSLContext:
    """Certificate verification as httpx does it: ``SSL_CERT_FILE``/``SSL_CERT_DIR`` when set,
    else certifi's bundle when installed, else the system store."""
    if os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context()
    try:
        import certifi
    except ImportError:  # pragma: no cover - certifi comes with httpx
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: writes a request, parses exactly one response at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self._buffer = bytearray()
        self._waiter: asyncio.Future[HTTPResponse] | None = None
        self._head: tuple[int, dict[str, str]] | None = None
        self._scan_from = 0
        self._body_mode = ""
        self._length = 0
        self._chunks: list[bytes] = []
        self.keep_alive = True

    # ------------------------------------------------------------------ asyncio callbacks
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if self._waiter is None or self._waiter.done():
            if self._waiter is None:  # bytes nobody asked for: the connection is unusable
                self.close()
            return
        try:
            response = self._parse()
        except TransportError as err:
            self._fail(err)
            return
        if response is not None:
            self._waiter.set_result(response)

    def eof_received(self) -> bool:
        if self._waiter is not None and not self._waiter.done():
            if self._body_mode == "close" and self._head is not None:
                self._waiter.set_result(self._finish(bytes(self._buffer)))
                self.keep_alive = False
            else:
                self._fail(TransportError("the server closed the connection before replying"))
        self.closed = True
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._waiter is not None and not self._waiter.done():
            reason = f": {exc}" if exc else ""
            self._fail(TransportError(f"the connection was lost{reason}"))

    # ------------------------------------------------------------------ exchange
    async def exchange(self, payload: bytes) -> HTTPResponse:
        """Send one request (head and body already serialised) and await its response."""
        assert self.transport is not None
        loop = asyncio.get_running_loop()
        self._waiter = loop.create_future()
        self._head, self._scan_from, self._chunks = None, 0, []
        self.transport.write(payload)
        try:
            return await self._waiter
        finally:
            self._waiter = None

    @property
    def has_unread_bytes(self) -> bool:
        """Bytes beyond the last response: the connection is out of step, not reusable."""
        return bool(self._buffer)

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            with contextlib.suppress(RuntimeError):  # its event loop is already closed
                self.transport.close()

    def _fail(self, err: Exception) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(err)
        self.close()

    # ------------------------------------------------------------------ parsing
    def _parse(self) -> HTTPResponse | None:
        """The response once the buffer holds all of it, else ``None`` (keep reading)."""
        while self._head is None:
            end = self._buffer.find(b"\r\n\r\n", self._scan_from)
            if end < 0:
                if len(self._buffer) > MAX_HEAD_BYTES:
                    raise TransportError("malformed response: header block too large")
                self._scan_from = max(0, len(self._buffer) - 3)
                return None
            head = bytes(self._buffer[:end]).decode("latin-1")
            del self._buffer[: end + 4]
            self._scan_from = 0
            status, headers = _parse_head(head)
            if 100 <= status < 200:  # an interim response (100 Continue): skip it
                continue
            self._head = (status, headers)
            self._set_body_mode(status, headers)
        if self._body_mode == "none":
            return self._finish(b"")
        if self._body_mode == "length":
            if len(self._buffer) < self._length:
                return None
            body = bytes(self._buffer[: self._length])
            del self._buffer[: self._length]
            return self._finish(body)
        if self._body_mode == "chunked":
            return self._parse_chunks()
        return None  # "close": the body ends when the server closes (eof_received)

    def _set_body_mode(self, status: int, headers: dict[str, str]) -> None:
        connection = headers.get("connection", "").lower()
        self.keep_alive = "close" not in connection
        if status in _NO_BODY_STATUSES:
            self._body_mode = "none"
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self._body_mode = "chunked"
        elif "content-length" in headers:
            try:
                self._length = int(headers["content-length"])
            except ValueError:
                raise TransportError("malformed response: bad Content-Length") from None
            if self._length < 0:
                raise TransportError("malformed response: bad Content-Length")
            self._body_mode = "length"
        else:
            self._body_mode = "close"
            self.keep_alive = False

    def _parse_chunks(self) -> HTTPResponse | None:
        while True:
            line_end = self._buffer.find(b"\r\n")
            if line_end < 0:
                return None
            size_text = bytes(self._buffer[:line_end]).split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise TransportError("malformed response: bad chunk size") from None
            if size == 0:  # last chunk: optional trailer lines, then an empty line
                trailer_end = self._buffer.find(b"\r\n\r\n", line_end)
                if trailer_end < 0:
                    return None
                del self._buffer[: trailer_end + 4]
                return self._finish(b"".join(self._chunks))
            if len(self._buffer) < line_end + 2 + size + 2:
                return None
            start = line_end + 2
            self._chunks.append(bytes(self._buffer[start : start + size]))
            del self._buffer[: start + size + 2]

    def _finish(self, body: bytes) -> HTTPResponse:
        assert self._head is not None
        status, headers = self._head
        encoding = headers.get("content-encoding", "").lower()
        if encoding in ("gzip", "x-gzip", "deflate") and body:
            try:
                wbits = 16 + zlib.MAX_WBITS if "gzip" in encoding else zlib.MAX_WBITS
                body = zlib.decompress(body, wbits)
            except zlib.error:
                raise TransportError(f"malformed response: bad {encoding} body") from None
        return HTTPResponse(status, headers, body)


def _parse_head(head: str) -> tuple[int, dict[str, str]]:
    lines = head.split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise TransportError(f"malformed response: status line {lines[0][:60]!r}")
    try:
        status = int(parts[1])
    except ValueError:
        raise TransportError(f"malformed response: status line {lines[0][:60]!r}") from None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise TransportError("malformed response: header line without ':'")
        key = name.strip().lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    if parts[0] == "HTTP/1.0" and "keep-alive" not in headers.get("connection", "").lower():
        headers.setdefault("connection", "close")
    return status, headers


class HTTPClient:
    """Requests to one origin (scheme, host, port) over a pool of keep-alive connections.

    Bound to the event loop it is first used in (asyncio connections are); the LLM backends
    keep one per loop. ``headers`` are sent with every request; per-request headers add to
    them. Not a general-purpose client: see the module docstring for what it leaves out.
    """

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout_s: float = 60.0,
        keepalive_s: float = 4.0,
        max_idle: int = 256,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"base_url {base_url!r} is not an http(s) URL; write it like "
                "'http://localhost:8000/v1'"
            )
        self.scheme = parts.scheme
        self.host = parts.hostname
        default_port = 443 if parts.scheme == "https" else 80
        self.port = parts.port or default_port
        self.path = parts.path.rstrip("/")
        host_header = self.host if ":" not in self.host else f"[{self.host}]"
        if self.port != default_port:
            host_header = f"{host_header}:{self.port}"
        self.timeout_s = timeout_s
        self.keepalive_s = keepalive_s
        self.max_idle = max_idle
        self._ssl = ssl_context  # https only; the default is built at the first connection
        base_headers = {"Host": host_header, "Accept-Encoding": "gzip, deflate"}
        base_headers.update(headers or {})
        self._head_suffix = "".join(f"{k}: {v}\r\n" for k, v in base_headers.items())
        self._idle: list[_Connection] = []
        self.connections_opened = 0

    async def post_json(
        self, path: str, payload: Any, headers: Mapping[str, str] | None = None
    ) -> HTTPResponse:
        """POST ``payload`` as JSON to ``base path + path``; the complete response."""
        body = json.dumps(payload, ensure_ascii=False).encode()
        extra = {"Content-Type": "application/json", "Accept": "application/json"}
        return await self.request("POST", path, body, {**extra, **(headers or {})})

    async def request(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
    ) -> HTTPResponse:
        """One request within ``timeout_s`` (raises ``TimeoutError`` or :class:`TransportError`)."""
        lines = [f"{method} {self.path}{path} HTTP/1.1\r\n", self._head_suffix]
        lines.extend(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        if body or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body)}\r\n")
        lines.append("\r\n")
        payload = "".join(lines).encode("latin-1") + body
        conn: _Connection | None = None
        done = False
        try:
            async with asyncio.timeout(self.timeout_s):
                conn = await self._checkout()
                response = await conn.exchange(payload)
            done = True
        except (TimeoutError, TransportError):
            raise
        except OSError as err:  # refused, unreachable, reset, TLS failure
            raise TransportError(f"cannot reach {self.host}:{self.port}: {err}") from err
        finally:
            if conn is not None:
                if done and conn.keep_alive and not conn.closed:
                    self._checkin(conn)
                else:
                    conn.close()
        return response

    async def _checkout(self) -> _Connection:
        now = time.monotonic()
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed and now - conn.idle_since < self.keepalive_s:
                return conn
            conn.close()
        loop = asyncio.get_running_loop()
        if self.connections_opened == 0:
            _CLIENTS_BY_LOOP.setdefault(loop, weakref.WeakSet()).add(self)
        _, conn = await loop.create_connection(
            _Connection,
            self.host,
            self.port,
            ssl=self._tls(),
            server_hostname=self.host if self.scheme == "https" else None,
            happy_eyeballs_delay=0.25,
        )
        self.connections_opened += 1
        return conn

    def _tls(self) -> ssl.SSLContext | None:
        """The TLS context for https (loading the trust store once, when first needed)."""
        if self.scheme != "https":
            return None
        if self._ssl is None:
            self._ssl = default_ssl_context()
        return self._ssl

    def _checkin(self, conn: _Connection) -> None:
        if len(self._idle) >= self.max_idle or conn.has_unread_bytes:
            conn.close()
            return
        conn.idle_since = time.monotonic()
        self._idle.append(conn)

    async def aclose(self) -> None:
        """Close every idle connection (connections in use close when their request ends)."""
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
        await asyncio.sleep(0)  # let the transports run their close callbacks
