"""Tests of the fake LLM server itself, over real HTTP with httpx and the official SDKs.

Other tests and the benchmarks trust this server's replies, fault injection and counters, so each
behaviour they rely on is checked here end to end.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.conftest import ServerFactory
from tests.support.openai_server import (
    FakeLLMServer,
    Fault,
    count_prompt_tokens,
    count_tokens,
    message_text,
)


def _chat(client: httpx.Client, srv: FakeLLMServer, content: str, **extra: Any) -> httpx.Response:
    body = {"model": "fake-model", "messages": [{"role": "user", "content": content}], **extra}
    return client.post(f"{srv.base_url}/chat/completions", json=body)


# --------------------------------------------------------------------------- token counting


def test_token_counting_rule() -> None:
    assert count_tokens("") == 0
    assert count_tokens("  one\ttwo\nthree  ") == 3
    blocks = [{"type": "text", "text": "a b"}, {"type": "image"}, {"type": "text", "text": "c"}]
    assert message_text(blocks) == "a b c"
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": blocks}]
    assert count_prompt_tokens(messages) == (1 + 2) + (1 + 3)
    assert count_prompt_tokens([{"role": "user", "content": "x"}], system="sys prompt") == 2 + 3


# --------------------------------------------------------------------------- replies and usage


def test_default_echo_reply_and_usage(llm_server: FakeLLMServer) -> None:
    with httpx.Client() as client:
        resp = _chat(client, llm_server, "hello there world")
    assert resp.status_code == 200
    assert resp.headers["content-type"] == "application/json"
    data = resp.json()
    assert data["object"] == "chat.completion"
    assert data["model"] == "fake-model"
    assert data["id"].startswith("chatcmpl-")
    assert isinstance(data["created"], int)
    choice = data["choices"][0]
    assert choice["message"] == {
        "role": "assistant",
        "content": "echo: hello there world",
        "refusal": None,
    }
    assert choice["finish_reason"] == "stop"
    assert data["usage"] == {"prompt_tokens": 4, "completion_tokens": 4, "total_tokens": 8}
    stats = llm_server.stats
    assert (stats.requests, stats.ok, stats.faults) == (1, 1, 0)
    assert (stats.prompt_tokens, stats.completion_tokens) == (4, 4)
    assert stats["ok"] == 1 and stats.as_dict()["completion_tokens"] == 4


def test_openai_sdk_chat_models_and_auth(llm_server: FakeLLMServer) -> None:
    with openai.OpenAI(base_url=llm_server.base_url, api_key="sk-test", max_retries=0) as client:
        completion = client.chat.completions.create(
            model="some-model",
            messages=[
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": [{"type": "text", "text": "count to three"}]},
            ],
            temperature=0.0,
            seed=7,
        )
        models = client.models.list()
    assert completion.model == "some-model"
    assert completion.choices[0].message.content == "echo: count to three"
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == (1 + 3) + (1 + 3)
    assert completion.usage.completion_tokens == 4
    assert [m.id for m in models.data] == ["fake-model"]
    stats = llm_server.stats
    assert "Bearer sk-test" in stats.auth_headers_seen
    assert stats.requests == 2 and stats.ok == 1
    assert stats.requests_log[-1]["seed"] == 7


def test_list_replies_cycle_and_callable_sees_request(
    llm_server_factory: ServerFactory,
) -> None:
    listed = llm_server_factory(reply=["first", "second"])
    seen: list[dict[str, Any]] = []

    def reply(request: dict[str, Any]) -> str:
        seen.append(request)
        return json.dumps({"answer": request["messages"][-1]["content"].upper()})

    called = llm_server_factory(reply=reply)
    with httpx.Client() as client:
        texts = [
            _chat(client, listed, "x").json()["choices"][0]["message"]["content"] for _ in range(3)
        ]
        schema = {"type": "json_schema", "json_schema": {"name": "a", "schema": {}}}
        resp = _chat(client, called, "yes", response_format=schema)
    assert texts == ["first", "second", "first"]
    assert json.loads(resp.json()["choices"][0]["message"]["content"]) == {"answer": "YES"}
    assert seen[0]["response_format"] == schema


async def test_async_callable_reply(llm_server_factory: ServerFactory) -> None:
    async def reply(request: dict[str, Any]) -> str:
        await asyncio.sleep(0)
        return "async " + request["model"]

    srv = llm_server_factory(reply=reply)
    async with openai.AsyncOpenAI(base_url=srv.base_url, api_key="k", max_retries=0) as client:
        completion = await client.chat.completions.create(
            model="m1", messages=[{"role": "user", "content": "hi"}]
        )
    assert completion.choices[0].message.content == "async m1"


def test_failing_reply_callable_is_a_500(llm_server_factory: ServerFactory) -> None:
    def reply(request: dict[str, Any]) -> str:
        raise RuntimeError("boom")

    srv = llm_server_factory(reply=reply)
    with httpx.Client() as client:
        resp = _chat(client, srv, "x")
    assert resp.status_code == 500 and "boom" in resp.json()["error"]["message"]
    assert srv.stats.errors == 1 and srv.stats.ok == 0


def test_max_tokens_and_stop_truncation(llm_server_factory: ServerFactory) -> None:
    srv = llm_server_factory(reply="one two  three four five")
    with httpx.Client() as client:
        by_max = _chat(client, srv, "q", max_tokens=3).json()
        by_new_name = _chat(client, srv, "q", max_completion_tokens=2).json()
        by_stop = _chat(client, srv, "q", stop=["four", "three"]).json()
        untouched = _chat(client, srv, "q", max_tokens=5).json()
    assert by_max["choices"][0]["message"]["content"] == "one two  three"
    assert by_max["choices"][0]["finish_reason"] == "length"
    assert by_max["usage"]["completion_tokens"] == 3
    assert by_new_name["choices"][0]["message"]["content"] == "one two"
    assert by_stop["choices"][0]["message"]["content"] == "one two  "
    assert by_stop["choices"][0]["finish_reason"] == "stop"
    assert by_stop["usage"]["completion_tokens"] == 2
    assert untouched["choices"][0]["finish_reason"] == "stop"
    assert srv.stats.completion_tokens == 3 + 2 + 2 + 5


def test_request_validation_errors(llm_server: FakeLLMServer) -> None:
    with httpx.Client() as client:
        assert _chat(client, llm_server, "x", n=2).status_code == 400
        assert _chat(client, llm_server, "x", response_format={"type": "xml"}).status_code == 400
        bad = client.post(f"{llm_server.base_url}/chat/completions", content=b"{not json")
        missing = client.get(f"{llm_server.root_url}/v2/nothing")
        model = client.get(f"{llm_server.base_url}/models/fake-model")
    assert bad.status_code == 400 and "error" in bad.json()
    assert missing.status_code == 404
    assert model.json()["id"] == "fake-model"
    assert llm_server.stats.ok == 0 and llm_server.stats.requests == 5


def test_keep_alive_and_chunked_request_body(llm_server: FakeLLMServer) -> None:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "chunky"}]})
    with httpx.Client() as client:
        for _ in range(4):
            assert _chat(client, llm_server, "again").status_code == 200
        resp = client.post(
            f"{llm_server.base_url}/chat/completions",
            content=iter([body[:10].encode(), body[10:].encode()]),
        )
    assert resp.json()["choices"][0]["message"]["content"] == "echo: chunky"
    assert llm_server.stats.connections == 1


# --------------------------------------------------------------------------- faults


def test_each_fault_kind_over_raw_http(llm_server_factory: ServerFactory) -> None:
    srv = llm_server_factory(
        faults=[
            Fault("429", retry_after=0.2),
            "429",
            Fault("500"),
            Fault("drop"),
            Fault("malformed"),
            Fault("timeout"),
            None,
        ],
        timeout_hang_s=30.0,
    )
    with httpx.Client(timeout=httpx.Timeout(5.0, read=0.3)) as client:
        limited = _chat(client, srv, "a")
        assert limited.status_code == 429
        assert limited.headers["retry-after"] == "0.2"
        assert limited.json()["error"]["code"] == "rate_limit_exceeded"
        assert _chat(client, srv, "a").headers["retry-after"] == "0.05"
        failed = _chat(client, srv, "a")
        assert failed.status_code == 500 and failed.json()["error"]["type"] == "server_error"
        with pytest.raises(httpx.TransportError):
            _chat(client, srv, "a")
        malformed = _chat(client, srv, "a")
        assert malformed.status_code == 200
        with pytest.raises(json.JSONDecodeError):
            malformed.json()
        started = time.monotonic()
        with pytest.raises(httpx.ReadTimeout):
            _chat(client, srv, "a")
        assert time.monotonic() - started < 2.0
        assert _chat(client, srv, "after the script").status_code == 200
    stats = srv.stats
    assert stats.faults_by_kind == {"429": 2, "500": 1, "drop": 1, "malformed": 1, "timeout": 1}
    assert (stats.requests, stats.ok) == (7, 1)
    assert stats.completion_tokens == count_tokens("echo: after the script")


def test_random_faults_are_seeded(llm_server_factory: ServerFactory) -> None:
    def statuses(srv: FakeLLMServer) -> list[int]:
        with httpx.Client() as client:
            return [_chat(client, srv, str(i)).status_code for i in range(40)]

    kinds = ("429", "500")
    first = statuses(llm_server_factory(fault_rate=0.5, fault_kinds=kinds, seed=3))
    second = statuses(llm_server_factory(fault_rate=0.5, fault_kinds=kinds, seed=3))
    assert first == second
    assert {200, 429, 500} == set(first)
    always = llm_server_factory(fault_rate=1.0, fault_kinds=("500",))
    assert set(statuses(always)) == {500}
    assert always.stats.faults_by_kind == {"500": 40}


def test_openai_sdk_retries_through_injected_faults(llm_server_factory: ServerFactory) -> None:
    # Only the 500 (no Retry-After) costs the SDK's own first back-off of ~0.5 s.
    srv = llm_server_factory(faults=[Fault("500"), Fault("429", retry_after=0.01)])
    with openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=2) as client:
        completion = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "persist"}]
        )
    assert completion.choices[0].message.content == "echo: persist"
    stats = srv.stats
    assert (stats.requests, stats.ok, stats.faults) == (3, 1, 2)


def test_stop_is_prompt_with_hanging_request(llm_server_factory: ServerFactory) -> None:
    srv = llm_server_factory(faults=[Fault("timeout")], timeout_hang_s=30.0)
    errors: list[BaseException] = []

    def hang() -> None:
        with httpx.Client(timeout=20.0) as client:
            try:
                _chat(client, srv, "wait forever")
            except BaseException as exc:
                errors.append(exc)

    thread = threading.Thread(target=hang)
    thread.start()
    deadline = time.monotonic() + 5.0
    while srv.stats.faults_by_kind.get("timeout", 0) == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert srv.stats.in_flight == 1
    started = time.monotonic()
    srv.stop()
    assert time.monotonic() - started < 1.0
    thread.join(5.0)
    assert not thread.is_alive()
    assert errors and isinstance(errors[0], httpx.TransportError)
    assert not srv.running


def test_timeout_fault_ends_when_client_gives_up(llm_server_factory: ServerFactory) -> None:
    srv = llm_server_factory(faults=[Fault("timeout", hang_s=30.0)])
    with httpx.Client(timeout=0.2) as client, pytest.raises(httpx.ReadTimeout):
        _chat(client, srv, "x")
    deadline = time.monotonic() + 5.0
    while srv.stats.in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    assert srv.stats.in_flight == 0


# --------------------------------------------------------------------------- concurrency, stats


async def test_concurrent_requests_overlap(llm_server_factory: ServerFactory) -> None:
    srv = llm_server_factory(latency_s=0.2)
    async with openai.AsyncOpenAI(base_url=srv.base_url, api_key="k", max_retries=0) as client:

        async def one(i: int) -> str:
            completion = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": f"request {i}"}]
            )
            return completion.choices[0].message.content or ""

        started = time.monotonic()
        texts = await asyncio.gather(*(one(i) for i in range(64)))
        elapsed = time.monotonic() - started
    assert texts == [f"echo: request {i}" for i in range(64)]
    assert elapsed < 2.0, f"64 concurrent 200 ms requests took {elapsed:.2f} s"
    stats = srv.stats
    assert stats.ok == 64 and stats.max_in_flight == 64
    assert stats.prompt_tokens == 64 * 3 and stats.completion_tokens == 64 * 3


def test_reset_stats_and_request_log_cap(llm_server_factory: ServerFactory) -> None:
    srv = llm_server_factory(log_limit=3)
    with httpx.Client(headers={"x-api-key": "ant-key"}) as client:
        for i in range(5):
            _chat(client, srv, f"m{i}")
        stats = srv.stats
        assert [b["messages"][0]["content"] for b in stats.requests_log] == ["m2", "m3", "m4"]
        assert stats.auth_headers_seen == {"ant-key"}
        srv.reset_stats()
        assert srv.stats.requests == 0 and srv.stats.requests_log == []
        _chat(client, srv, "fresh")
    assert (srv.stats.requests, srv.stats.ok) == (1, 1)


# --------------------------------------------------------------------------- streaming


def test_openai_streaming_with_usage(llm_server_factory: ServerFactory) -> None:
    srv = llm_server_factory(reply="alpha beta gamma")
    with openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0) as client:
        stream = client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "go"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "alpha beta gamma"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 3
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert srv.stats.ok == 1 and srv.stats.completion_tokens == 3


# --------------------------------------------------------------------------- Anthropic


def test_anthropic_sdk_messages(llm_server_factory: ServerFactory) -> None:
    srv = llm_server_factory(reply="The answer is forty two. END of story")
    client = anthropic.Anthropic(base_url=srv.root_url, api_key="ant-test", max_retries=0)
    with client:
        message = client.messages.create(
            model="claude-fake",
            max_tokens=100,
            system="Be exact.",
            messages=[{"role": "user", "content": [{"type": "text", "text": "what is it"}]}],
        )
        stopped = client.messages.create(
            model="claude-fake",
            max_tokens=3,
            messages=[{"role": "user", "content": "q"}],
        )
        sequenced = client.messages.create(
            model="claude-fake",
            max_tokens=100,
            stop_sequences=["END"],
            messages=[{"role": "user", "content": "q"}],
        )
        with client.messages.stream(
            model="claude-fake", max_tokens=100, messages=[{"role": "user", "content": "s"}]
        ) as stream:
            streamed = "".join(stream.text_stream)
            final = stream.get_final_message()
    assert message.model == "claude-fake"
    assert message.content[0].type == "text"
    assert message.content[0].text == "The answer is forty two. END of story"
    assert message.stop_reason == "end_turn"
    assert message.usage.input_tokens == (1 + 2) + (1 + 3)
    assert message.usage.output_tokens == 8
    assert stopped.content[0].text == "The answer is"
    assert stopped.stop_reason == "max_tokens" and stopped.usage.output_tokens == 3
    assert sequenced.stop_reason == "stop_sequence" and sequenced.stop_sequence == "END"
    assert sequenced.content[0].text == "The answer is forty two. "
    assert streamed == "The answer is forty two. END of story"
    assert final.usage.output_tokens == 8
    stats = srv.stats
    assert stats.auth_headers_seen & {"ant-test", "Bearer ant-test"}
    assert stats.ok == 4
    assert stats.completion_tokens == 8 + 3 + 5 + 8


def test_anthropic_fault_uses_anthropic_error_shape(llm_server_factory: ServerFactory) -> None:
    srv = llm_server_factory(faults=[Fault("429", retry_after=0.01)])
    client = anthropic.Anthropic(base_url=srv.root_url, api_key="k", max_retries=0)
    with client, pytest.raises(anthropic.RateLimitError) as info:
        client.messages.create(model="c", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    assert info.value.status_code == 429
    assert info.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
