"""The lean HTTP/1.1 client (:mod:`silicolab.llm.http`) against real sockets on 127.0.0.1.

A tiny raw server answers each request with scripted bytes, so every framing the client must
read (Content-Length, chunked with trailers, read-to-close, gzip, HTTP/1.0, 100 Continue) and
every way a server can misbehave (garbage status line, early close, silence) is exercised
over real TCP; TLS is checked against a certificate the test makes with ``openssl``.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import ssl
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from silicolab.core.errors import ConfigError
from silicolab.llm.http import HTTPClient, TransportError, proxy_for

Reply = bytes | Callable[[bytes], bytes]


class RawServer:
    """Answers the i-th request with ``replies[i % len]`` (bytes, or a function of the request
    bytes); ``close_after`` closes the connection after writing; ``None`` never answers."""

    def __init__(self, replies: Sequence[Reply | None], close_after: bool = False) -> None:
        self.replies = list(replies)
        self.close_after = close_after
        self.requests: list[bytes] = []
        self.connections = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> RawServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                request = head + await reader.readexactly(length)
                self.requests.append(request)
                reply = self.replies[(len(self.requests) - 1) % len(self.replies)]
                if reply is None:
                    await asyncio.sleep(3600)
                data = reply(request) if callable(reply) else reply
                writer.write(data)
                await writer.drain()
                if self.close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()


def ok(body: bytes = b'{"ok": true}', extra: str = "") -> bytes:
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}"
    return f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body


async def test_content_length_reply_and_keep_alive_reuse() -> None:
    async with RawServer([ok()]) as server:
        client = HTTPClient(server.url, headers={"Authorization": "Bearer k"})
        for _ in range(5):
            response = await client.post_json("/chat/completions", {"a": 1})
            assert response.status == 200 and response.json() == {"ok": True}
        await client.aclose()
    assert client.connections_opened == 1 and server.connections == 1
    first = server.requests[0]
    assert first.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert b"\r\nAuthorization: Bearer k\r\n" in first
    assert f"\r\nHost: 127.0.0.1:{server.port}\r\n".encode() in first
    assert first.endswith(b'{"a": 1}') and b"Content-Length: 8\r\n" in first


# mtime=0: gzip stamps the compression time into its header otherwise
GZIPPED = gzip.compress(b'{"z": 2}', mtime=0)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (  # chunked, with a chunk extension and a trailer
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b'5;ext=1\r\n{"a":\r\n3\r\n 1}\r\n0\r\nX-Trailer: t\r\n\r\n',
            {"a": 1},
        ),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\n0\r\n\r\n", []),
        (  # an interim 100 Continue before the real response
            b"HTTP/1.1 100 Continue\r\n\r\n" + ok(b"[1]"),
            [1],
        ),
        (  # gzip-encoded body
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s"
            % (len(GZIPPED), GZIPPED),
            {"z": 2},
        ),
        (  # duplicate header names are joined, as HTTP says
            b"HTTP/1.1 200 OK\r\nX-A: 1\r\nX-A: 2\r\nContent-Length: 2\r\n\r\n{}",
            {},
        ),
    ],
    # explicit ids: pytest-xdist workers must collect the same names, and a raw body in
    # an id is unreadable
    ids=["chunked-extension-trailer", "chunked", "100-continue", "gzip", "repeated-header"],
)
async def test_response_framings(raw: bytes, expected: object) -> None:
    async with RawServer([raw]) as server:
        client = HTTPClient(server.url)
        response = await client.request("POST", "/x", b"{}")
        assert response.json() == expected
        again = await client.request("POST", "/x", b"{}")  # the framing left the stream in step
        assert again.json() == expected
        await client.aclose()
    assert server.connections == 1


async def test_body_until_close_and_http10_do_not_reuse_the_connection() -> None:
    raws = [b"HTTP/1.1 200 OK\r\n\r\n[1, 2]", b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}"]
    for raw in raws:
        async with RawServer([raw], close_after=True) as server:
            client = HTTPClient(server.url)
            for _ in range(3):
                assert (await client.request("POST", "/x", b"")).status == 200
            await client.aclose()
        assert server.connections == 3


async def test_connection_close_header_opens_a_new_connection_without_error() -> None:
    async with RawServer([ok(extra="Connection: close\r\n")], close_after=True) as server:
        client = HTTPClient(server.url)
        for _ in range(3):
            assert (await client.post_json("/x", {})).json() == {"ok": True}
        await client.aclose()
    assert server.connections == 3


async def test_server_closing_an_idle_connection_is_noticed_before_reuse() -> None:
    """A server that closes idle keep-alive connections (no header warns of it): the client
    sees the close while the connection sits idle and opens a fresh one."""
    async with RawServer([ok()], close_after=True) as server:
        client = HTTPClient(server.url)
        for _ in range(3):
            assert (await client.post_json("/x", {})).status == 200
            await asyncio.sleep(0.05)
        await client.aclose()
    assert server.connections == 3


async def test_idle_connections_expire_after_keepalive() -> None:
    async with RawServer([ok()]) as server:
        client = HTTPClient(server.url, keepalive_s=0.0)
        for _ in range(3):
            await client.post_json("/x", {})
        await client.aclose()
    assert client.connections_opened == 3


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"garbage\r\n\r\n", "status line"),
        (b"HTTP/1.1 abc OK\r\n\r\n", "status line"),
        (b"HTTP/1.1 200 OK\r\nno-colon-here\r\n\r\n", "header line"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n", "Content-Length"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "chunk size"),
        (b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc", "gzip"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70_000, "too large"),
    ],
)
async def test_malformed_responses_raise_transport_errors(raw: bytes, message: str) -> None:
    async with RawServer([raw]) as server:
        client = HTTPClient(server.url, timeout_s=5)
        with pytest.raises(TransportError, match=message):
            await client.request("POST", "/x", b"")
        await client.aclose()


async def test_early_close_and_refused_connection() -> None:
    async with RawServer([b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"], True) as server:
        client = HTTPClient(server.url)
        with pytest.raises(TransportError, match="closed the connection"):
            await client.request("POST", "/x", b"")
        url = server.url
    refused = HTTPClient(url)  # the server is gone: nothing listens on the port
    with pytest.raises(TransportError, match=r"cannot reach 127\.0\.0\.1"):
        await refused.request("POST", "/x", b"")


async def test_deadline_covers_the_whole_response_and_drops_the_connection() -> None:
    async with RawServer([None, ok()]) as server:
        client = HTTPClient(server.url, timeout_s=0.2)
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(TimeoutError):
            await client.request("POST", "/x", b"")
        assert loop.time() - started < 1.0
        assert (await client.request("POST", "/x", b"")).status == 200
        await client.aclose()
    assert server.connections == 2  # the timed-out connection was not reused


async def test_cancelled_request_drops_its_connection() -> None:
    async with RawServer([None, ok()]) as server:
        client = HTTPClient(server.url)
        task = asyncio.create_task(client.request("POST", "/x", b""))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (await client.request("POST", "/x", b"")).status == 200
        await client.aclose()
    assert server.connections == 2


async def test_concurrent_requests_each_get_their_own_response() -> None:
    def echo(request: bytes) -> bytes:
        return ok(request.split(b"\r\n\r\n", 1)[1])

    async with RawServer([echo]) as server:
        client = HTTPClient(server.url)
        replies = await asyncio.gather(*(client.post_json("/x", {"i": i}) for i in range(40)))
        assert [r.json()["i"] for r in replies] == list(range(40))
        opened = client.connections_opened
        await asyncio.gather(*(client.post_json("/x", {"i": i}) for i in range(40)))
        await client.aclose()
    assert opened == 40 and client.connections_opened == 40  # the second wave reused them


def test_bad_base_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not an http"):
        HTTPClient("ftp://example.org/v1")
    with pytest.raises(ConfigError, match="not an http"):
        HTTPClient("localhost:8000")


def test_proxy_for_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    assert proxy_for("https://api.openai.com/v1") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    assert proxy_for("https://api.openai.com/v1") == "http://proxy.example:3128"
    assert proxy_for("http://localhost:8000/v1") is None  # no HTTP_PROXY
    monkeypatch.setenv("NO_PROXY", "api.openai.com")
    assert proxy_for("https://api.openai.com/v1") is None


# --------------------------------------------------------------------------- TLS


async def test_https_verifies_the_server_certificate(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    server = await asyncio.start_server(_tls_reply, "127.0.0.1", 0, ssl=server_ctx)
    url = f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
    try:
        trusting = HTTPClient(url, ssl_context=ssl.create_default_context(cafile=cert))
        response = await trusting.post_json("/x", {"q": 1})
        assert response.json() == {"secure": True}
        await trusting.aclose()
        default = HTTPClient(url)  # the certificate is not in the default trust store
        with pytest.raises(TransportError, match="CERTIFICATE_VERIFY_FAILED"):
            await default.post_json("/x", {"q": 1})
    finally:
        server.close()
        await server.wait_closed()


async def _tls_reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        await reader.readexactly(length)
        writer.write(ok(json.dumps({"secure": True}).encode()))
        await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
        pass
    finally:
        writer.close()
