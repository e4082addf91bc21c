"""How the openai backend chooses and configures its transport (native HTTP/1.1 or the SDK)."""

from __future__ import annotations

import os
import ssl
import time
from pathlib import Path

import pytest
from tests.support.openai_server import FakeLLMServer

from silicolab import __version__
from silicolab.core.errors import ConfigError
from silicolab.llm import load_model
from silicolab.llm.backends.openai_backend import OpenAIChatModel, _status_error

KEY_ENV = "SILICOLAB_TEST_OPENAI_KEY"
KEY = "sk-test-transport-secret-0987654321"
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    for name in (*PROXY_VARS, *(v.lower() for v in PROXY_VARS)):
        monkeypatch.delenv(name, raising=False)
    for name in ("OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)


def completions(server) -> int:
    """Chat-completion requests the server received (loading a model also asks a loopback
    server what it is, with one GET /v1/models)."""
    return server.stats.requests_by_path.get("/v1/chat/completions", 0)


def test_auto_is_native_unless_a_proxy_applies(monkeypatch: pytest.MonkeyPatch) -> None:
    local = "http://127.0.0.1:9/v1"
    assert OpenAIChatModel("m", api_key=KEY, base_url=local).transport == "native"
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    assert OpenAIChatModel("m", api_key=KEY, base_url=local).transport == "sdk"
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert OpenAIChatModel("m", api_key=KEY, base_url=local).transport == "native"
    forced = OpenAIChatModel("m", api_key=KEY, base_url=local, transport="sdk")
    assert forced.transport == "sdk"


def test_bad_transport_or_base_url_fail_at_load_time() -> None:
    with pytest.raises(ConfigError, match="transport='h2'"):
        load_model("openai:m", base_url="http://127.0.0.1:9/v1", transport="h2")
    with pytest.raises(ConfigError, match="not an http"):
        load_model("openai:m", base_url="127.0.0.1:9/v1", api_key_env=KEY_ENV)


def test_native_sends_identity_and_openai_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-123")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-9")
    with FakeLLMServer() as server:
        model = load_model("openai:fake-model", base_url=server.base_url, api_key_env=KEY_ENV)
        assert model.generate("hi").text == "echo: hi"
        headers = server.last_headers
    assert headers["authorization"] == f"Bearer {KEY}"
    assert headers["user-agent"] == f"silicolab/{__version__}"
    assert (headers["openai-organization"], headers["openai-project"]) == ("org-123", "proj-9")


def test_openai_base_url_environment_variable_is_the_fallback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As with the SDK, ``OPENAI_BASE_URL`` picks the server when no base_url is given."""
    with FakeLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        model = load_model("openai:fake-model", api_key_env=KEY_ENV, cache_path=None)
        assert model.generate("where").text == "echo: where"
        assert completions(server) == 1


@pytest.mark.parametrize("transport", ["native", "sdk"])
def test_https_server_trusted_through_ssl_cert_file(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    cert, key = certificate
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    with FakeLLMServer(ssl_context=context) as server:
        assert server.base_url.startswith("https://127.0.0.1:")
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        model = load_model(
            "openai:fake-model",
            base_url=server.base_url,
            api_key_env=KEY_ENV,
            transport=transport,
            cache_path=None,
        )
        assert model.generate("secure?").text == "echo: secure?"


def test_error_messages_never_carry_the_key() -> None:
    body = {"error": {"message": f"invalid key {KEY} for this project"}}
    err = _status_error(401, {}, body, KEY)
    assert KEY not in str(err) and "***" in str(err) and "api_key_env" in str(err)
    transient = _status_error(429, {"retry-after": "1.5"}, {"detail": "slow down"}, KEY)
    assert transient.retry_after == 1.5 and "slow down" in str(transient)


def _open_sockets() -> int:
    """Sockets this process holds open (Linux: /proc/self/fd)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:  # the fd of the listing itself, already closed
            continue
    return count


def test_sync_calls_close_their_connections() -> None:
    """Each sync call runs its own event loop; its connections close with it instead of
    waiting for garbage collection (garbage collection is off here to show it)."""
    import gc

    with FakeLLMServer() as server:
        model = load_model("openai:fake-model", base_url=server.base_url, api_key_env=KEY_ENV)
        model.generate("warm-up")
        gc.disable()
        try:
            before = _open_sockets()
            for i in range(5):
                model.generate(f"call {i}")
            # the in-process server closes its side of each connection on its own thread:
            # give it a moment on a loaded machine (a leak never settles)
            deadline = time.monotonic() + 5
            while _open_sockets() > before and time.monotonic() < deadline:
                time.sleep(0.02)
            after = _open_sockets()
        finally:
            gc.enable()
    assert after <= before


async def test_sync_call_inside_a_running_loop_runs_on_a_worker_thread() -> None:
    """Inside a running loop (a Jupyter cell) the old import path still runs the call."""
    from silicolab.llm.base import run_sync

    async def answer() -> int:
        return 42

    assert run_sync(answer(), twin="aanswer") == 42
