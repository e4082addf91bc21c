"""The openai backend and the wrapper stack against a real local HTTP server with faults."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from pydantic import BaseModel
from tests.support.openai_server import Fault

from silicolab.core.errors import ConfigError, LLMError
from silicolab.llm import load_model, structured

KEY_ENV = "SILICOLAB_TEST_OPENAI_KEY"
KEY = "sk-test-very-secret-value-123456"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


@pytest.fixture(params=["native", "sdk"])
def transport(request: pytest.FixtureRequest) -> str:
    """Both ways the openai backend sends requests; they must behave the same."""
    return request.param


def make(server, **options):
    options.setdefault("max_retries", 5)
    options.setdefault("timeout_s", 2.0)
    return load_model("openai:fake-model", base_url=server.base_url, api_key_env=KEY_ENV, **options)


def completions(server) -> int:
    """Chat-completion requests the server received (loading a model also asks a loopback
    server what it is, with one GET /v1/models)."""
    return server.stats.requests_by_path.get("/v1/chat/completions", 0)


def test_generate_returns_text_and_the_servers_usage(llm_server, transport) -> None:
    model = make(llm_server, transport=transport)
    c = model.generate(
        [{"role": "system", "content": "be kind"}, {"role": "user", "content": "hello there"}],
        temperature=0.2,
        max_tokens=50,
        seed=3,
        tag="greeting",
    )
    assert c.text == "echo: hello there"
    stats = llm_server.stats
    assert (c.usage.input_tokens, c.usage.output_tokens) == (
        stats.prompt_tokens,
        stats.completion_tokens,
    )
    sent = stats.requests_log[-1]
    assert sent["temperature"] == 0.2 and sent["max_tokens"] == 50 and sent["seed"] == 3
    assert f"Bearer {KEY}" in stats.auth_headers_seen
    summary = model.ledger.summary()
    assert summary["by_tag"]["greeting"]["calls"] == 1
    assert summary["input_tokens"] == stats.prompt_tokens


def test_json_schema_is_requested_as_response_format(llm_server_factory, transport) -> None:
    class Verdict(BaseModel):
        answer: str
        confidence: float

    server = llm_server_factory(reply='{"answer": "yes", "confidence": 0.9}')
    verdict = structured(make(server, transport=transport), "Is it raining?", Verdict)
    assert verdict == Verdict(answer="yes", confidence=0.9)
    fmt = server.stats.requests_log[-1]["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"]["properties"]["answer"]["type"] == "string"


def test_each_transient_fault_is_retried_and_retry_after_is_honoured(
    llm_server_factory, transport
) -> None:
    server = llm_server_factory(
        faults=[
            Fault("429", retry_after=0.3),
            Fault("500"),
            Fault("drop"),
            Fault("malformed"),
            Fault("timeout", hang_s=5.0),
        ],
    )
    model = make(server, transport=transport, timeout_s=0.4)
    start = time.perf_counter()
    c = model.generate("persist")
    elapsed = time.perf_counter() - start
    assert c.text == "echo: persist"
    assert c.attempts == 6
    assert elapsed >= 0.3 + 0.4  # the Retry-After wait and the client timeout both happened
    assert server.stats.faults_by_kind == {
        "429": 1,
        "500": 1,
        "drop": 1,
        "malformed": 1,
        "timeout": 1,
    }
    assert model.ledger.summary()["retries"] == 5


def test_gives_up_after_max_retries_with_llm_error(llm_server_factory, caplog, transport) -> None:
    server = llm_server_factory(faults=["500"] * 10)
    model = make(server, transport=transport, max_retries=2)
    with caplog.at_level(logging.WARNING, logger="silicolab.llm"), pytest.raises(LLMError) as info:
        model.generate("doomed")
    assert info.value.attempts == 3
    assert completions(server) == 3
    assert "gave up after 3 attempts" in str(info.value)
    assert len([r for r in caplog.records if "retrying" in r.getMessage()]) == 2
    summary = model.ledger.summary()
    assert (summary["errors"], summary["retries"]) == (1, 2)


def test_cache_hit_skips_network_and_sample_index_separates_samples(llm_server, tmp_path) -> None:
    model = make(llm_server, cache_path=tmp_path / "cache.sqlite")
    first = model.generate("same prompt", temperature=1.0)
    second = model.generate("same prompt", temperature=1.0, tag="other-tag")
    assert second.cached and second.text == first.text and second.attempts == 0
    assert completions(llm_server) == 1
    model.generate("same prompt", temperature=1.0, sample_index=1)
    assert completions(llm_server) == 2
    # a fresh model on the same file is served from disk
    fresh = make(llm_server, cache_path=tmp_path / "cache.sqlite")
    assert fresh.generate("same prompt", temperature=1.0).cached
    assert completions(llm_server) == 2
    summary = model.ledger.summary()
    assert summary["cache_hits"] == 1 and summary["input_tokens"] == llm_server.stats.prompt_tokens


async def test_identical_concurrent_requests_share_one_network_call(llm_server_factory, tmp_path):
    server = llm_server_factory(latency_s=0.2)
    model = make(server, cache_path=tmp_path / "c.sqlite")
    results = await asyncio.gather(*(model.agenerate("together") for _ in range(8)))
    assert completions(server) == 1
    assert sum(not r.cached for r in results) == 1
    assert {r.text for r in results} == {"echo: together"}


async def test_max_concurrency_bounds_requests_in_flight(llm_server_factory) -> None:
    server = llm_server_factory(latency_s=0.1)
    model = make(server, max_concurrency=3)
    await asyncio.gather(*(model.agenerate(f"q{i}") for i in range(12)))
    assert server.stats.max_in_flight == 3


def test_server_without_json_schema_support_falls_back_to_json_object(
    llm_server_factory, transport
):
    class Pick(BaseModel):
        answer: str

    def reply(body: dict) -> str:
        if body.get("response_format", {}).get("type") == "json_schema":
            raise ValueError("response_format type must be 'text' or 'json_object'")
        return '{"answer": "no"}'

    server = llm_server_factory(reply=reply)
    model = make(server, transport=transport)
    assert structured(model, "Pick one", Pick) == Pick(answer="no")
    assert structured(model, "Pick again", Pick) == Pick(answer="no")
    formats = [b["response_format"]["type"] for b in server.stats.requests_log]
    assert formats == ["json_schema", "json_object", "json_object"]
    assert "JSON schema" in server.stats.requests_log[-1]["messages"][0]["content"]


def test_sync_twin_works_across_repeated_event_loops(llm_server, transport) -> None:
    model = make(llm_server, transport=transport, max_concurrency=2)
    assert [model.generate(f"n{i}").text for i in range(3)] == ["echo: n0", "echo: n1", "echo: n2"]


def test_anthropic_backend_against_messages_endpoint(llm_server, monkeypatch) -> None:
    monkeypatch.setenv("SILICOLAB_TEST_ANTHROPIC_KEY", KEY)
    model = load_model(
        "anthropic:claude-test",
        base_url=llm_server.root_url,
        api_key_env="SILICOLAB_TEST_ANTHROPIC_KEY",
        timeout_s=2.0,
    )
    c = model.generate(
        [{"role": "system", "content": "terse"}, {"role": "user", "content": "hi you"}],
        temperature=1.5,
        max_tokens=20,
    )
    assert c.text == "echo: hi you"
    sent = llm_server.stats.requests_log[-1]
    assert sent["system"] == "terse" and sent["temperature"] == 1.0 and sent["max_tokens"] == 20
    assert c.usage.input_tokens == llm_server.stats.prompt_tokens
    assert any(KEY in header for header in llm_server.stats.auth_headers_seen)


def test_anthropic_retries_transient_faults(llm_server_factory, monkeypatch) -> None:
    monkeypatch.setenv("SILICOLAB_TEST_ANTHROPIC_KEY", KEY)
    server = llm_server_factory(faults=["429", "500", "drop"])
    model = load_model(
        "anthropic:claude-test",
        base_url=server.root_url,
        api_key_env="SILICOLAB_TEST_ANTHROPIC_KEY",
        timeout_s=2.0,
    )
    assert model.generate("again").attempts == 4


def test_missing_key_unknown_spec_and_loopback_without_key(monkeypatch) -> None:
    monkeypatch.delenv("SILICOLAB_NO_SUCH_KEY", raising=False)
    with pytest.raises(ConfigError, match="SILICOLAB_NO_SUCH_KEY is not set"):
        load_model("openai:gpt-4o-mini", api_key_env="SILICOLAB_NO_SUCH_KEY")
    with pytest.raises(ConfigError, match="unknown model spec 'gpt-4o'"):
        load_model("gpt-4o")
    with pytest.raises(ConfigError, match="unknown model spec"):
        load_model("openia:gpt-4o")
    local = load_model(
        "openai:x", base_url="http://127.0.0.1:9/v1", api_key_env="SILICOLAB_NO_SUCH_KEY"
    )
    assert local.spec == "openai:x"
    assert load_model("ollama:llama3.1:8b").name == "llama3.1:8b"


def test_top_p_reaches_both_backends_and_only_when_asked(llm_server, transport, monkeypatch):
    model = make(llm_server, transport=transport)
    model.generate("nucleus please", temperature=0.1, top_p=0.95, max_tokens=30)
    assert llm_server.stats.requests_log[-1]["top_p"] == 0.95
    model.generate("no nucleus")
    assert "top_p" not in llm_server.stats.requests_log[-1]
    monkeypatch.setenv("SILICOLAB_TEST_ANTHROPIC_KEY", KEY)
    claude = load_model(
        "anthropic:claude-test",
        base_url=llm_server.root_url,
        api_key_env="SILICOLAB_TEST_ANTHROPIC_KEY",
        timeout_s=2.0,
    )
    claude.generate("nucleus please", top_p=0.5, max_tokens=20)
    assert llm_server.stats.requests_log[-1]["top_p"] == 0.5


def test_top_p_is_checked_and_keeps_old_cache_keys() -> None:
    from silicolab.core.errors import InputError
    from silicolab.llm.base import make_request

    assert "top_p" not in make_request("x").params()  # keys of calls without top_p unchanged
    assert make_request("x", top_p=0.95).params()["top_p"] == 0.95
    with pytest.raises(InputError, match="top_p=0"):
        make_request("x", top_p=0)
