"""Integration tests against a real llama.cpp inference server (llama-cpp-python).

Why: stubs cannot show that silicolab's OpenAI-compatible layer really works with a
local server -- request validation, token usage, caching in front of real HTTP, and
grammar-constrained JSON. Here a tiny random-weight GGUF is built on the fly (no
download) and served by ``python -m llama_cpp.server`` once for the whole module.

Its text is gibberish, so the tests check plumbing (usage, ledger, cache, JSON
validity), never wording. Only enum/literal-style constraints are used for structured
output: llama-cpp-python's grammar enforces JSON shape, types and enums, but not
numeric bounds, and its free-string rule admits raw control characters, which strict
JSON parsers reject.

Observed with llama-cpp-python 0.3.36 (see ``test_raw_sdk_response_formats``):

* ``{"type": "json_object", "schema": {...}}`` -> 200, enforced as a grammar;
* ``{"type": "json_object"}`` -> 200, any valid JSON (generic JSON grammar);
* OpenAI's ``{"type": "json_schema", "json_schema": {...}}`` -> HTTP 500 (the
  server's request model only allows ``"text"`` / ``"json_object"``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel
from tests.support.llamacpp import LlamaCppServer, llamacpp_available
from tests.support.tiny_gguf import build_tiny_gguf

pytestmark = [
    pytest.mark.llamacpp,
    pytest.mark.skipif(
        not llamacpp_available(),
        reason="llama-cpp-python and gguf are not installed (pip install 'silicolab[local]')",
    ),
]

#: The GGUF says 256 tokens of training context; the server gets more so that a
#: schema quoted in a system prompt (the ``json_object`` mode) always fits.
N_CTX = 2048
KEY_ENV = "SILICOLAB_LLAMACPP_KEY"
MESSAGES = [
    {"role": "system", "content": "You are a terse assistant."},
    {"role": "user", "content": "Is the sky blue? Answer yes or no."},
]


class Pick(BaseModel):
    """A structured answer that a grammar can fully enforce (an enum)."""

    answer: Literal["yes", "no"]


class Verdict(BaseModel):
    """Two enforced fields of different JSON types."""

    answer: Literal["yes", "no"]
    confident: bool


PICK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["answer"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaCppServer]:
    """Build the tiny GGUF and serve it for the whole module."""
    model_path = build_tiny_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf", seed=0)
    with LlamaCppServer(model_path, n_ctx=N_CTX) as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server: LlamaCppServer) -> Iterator[Any]:
    """A raw ``openai`` SDK client without retries (errors should surface at once)."""
    import openai

    with openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0) as c:
        yield c


@pytest.fixture
def key_env(monkeypatch: pytest.MonkeyPatch) -> str:
    """A dummy API key in the environment (llama.cpp ignores it; silicolab needs one)."""
    monkeypatch.setenv(KEY_ENV, "sk-dummy-llamacpp")
    return KEY_ENV


# ------------------------------------------------------------------- model


def test_tiny_gguf_tokenizer_round_trip(server: LlamaCppServer) -> None:
    """llama.cpp loads the self-made vocabulary: text (ASCII, JSON, non-ASCII via byte
    fallback) survives tokenize -> detokenize, and word pieces are used."""
    from llama_cpp import Llama

    vocab = Llama(model_path=str(server.model_path), vocab_only=True, verbose=False)
    text = 'Answer with json only: {"answer": "yes"} \u2014 caf\u00e9\n'
    tokens = vocab.tokenize(text.encode("utf-8"), add_bos=False)
    decoded = vocab.detokenize(tokens).decode("utf-8")
    assert decoded.removeprefix(" ") == text  # SentencePiece may add a space prefix
    assert len(tokens) < len(text.encode("utf-8"))  # merges happened


# ----------------------------------------------------------------- raw SDK


def test_raw_sdk_chat_completion(client: Any) -> None:
    """Plain chat completion: text comes back and ``usage`` adds up."""
    resp = client.chat.completions.create(
        model="tiny", messages=MESSAGES, max_tokens=8, temperature=0.0, seed=1
    )
    choice = resp.choices[0]
    assert isinstance(choice.message.content, str)
    assert choice.finish_reason in {"stop", "length"}
    usage = resp.usage
    assert usage is not None
    assert usage.prompt_tokens > 0
    assert 0 < usage.completion_tokens <= 8
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_raw_sdk_json_object_with_schema_is_enforced(client: Any) -> None:
    """``{"type": "json_object", "schema": ...}`` is compiled to a grammar and obeyed."""
    for seed in range(3):
        resp = client.chat.completions.create(
            model="tiny",
            messages=MESSAGES,
            temperature=0.8,
            seed=seed,
            response_format={"type": "json_object", "schema": Verdict.model_json_schema()},
        )
        verdict = Verdict.model_validate_json(resp.choices[0].message.content)
        assert verdict.answer in {"yes", "no"}
        assert resp.choices[0].finish_reason == "stop"


@pytest.mark.parametrize(
    "shape",
    ["json_schema", "json_object+schema", "json_object"],
)
@pytest.mark.parametrize("via", ["response_format", "extra_body"])
def test_raw_sdk_response_formats(client: Any, shape: str, via: str) -> None:
    """Which ``response_format`` shapes the server accepts and enforces.

    ``json_schema`` (OpenAI's shape) must either be rejected with an error naming the
    field (current llama-cpp-python: HTTP 500) or, if a later version accepts it, be
    enforced; the two ``json_object`` shapes must give valid JSON, schema-valid when a
    schema is given. Passing the format as a typed argument or through ``extra_body``
    makes no difference.
    """
    import openai

    formats: dict[str, dict[str, Any]] = {
        "json_schema": {
            "type": "json_schema",
            "json_schema": {"name": "Pick", "schema": PICK_SCHEMA, "strict": True},
        },
        "json_object+schema": {"type": "json_object", "schema": PICK_SCHEMA},
        "json_object": {"type": "json_object"},
    }
    fmt = formats[shape]
    kwargs: dict[str, Any] = (
        {"response_format": fmt}
        if via == "response_format"
        else {"extra_body": {"response_format": fmt}}
    )
    try:
        # No max_tokens: the constrained outputs end on their own (the grammar allows
        # only EOS once the document is complete); the generic JSON grammar admits
        # unbounded whitespace, so it may run on, but is still bounded by the context.
        resp = client.chat.completions.create(
            model="tiny", messages=MESSAGES, temperature=0.0, seed=1, **kwargs
        )
    except openai.APIStatusError as err:
        assert shape == "json_schema", f"{shape} rejected: {err}"
        assert err.status_code in {400, 422, 500}
        assert "response_format" in str(err)
        return
    text = resp.choices[0].message.content
    if shape == "json_object":
        # Generic JSON grammar: any valid JSON object (a truncated one if it hit the end).
        if resp.choices[0].finish_reason == "length":
            assert text.lstrip().startswith("{")
        else:
            assert isinstance(json.loads(text), dict)
    else:
        assert Pick.model_validate_json(text).answer in {"yes", "no"}


# ------------------------------------------------------- silicolab.llm layer


def test_silicolab_generate_usage_and_ledger(server: LlamaCppServer, key_env: str) -> None:
    """``load_model('openai:...')`` against the server: real usage, one ledger call."""
    from silicolab.llm import load_model

    model = load_model("openai:tiny", base_url=server.base_url, api_key_env=key_env)
    try:
        before = server.request_count()
        c = model.generate(MESSAGES, max_tokens=8, temperature=0.0, seed=1)
        assert isinstance(c.text, str)
        assert not c.cached
        assert c.usage.input_tokens > 0
        assert 0 < c.usage.output_tokens <= 8
        assert not c.usage.estimated
        assert c.latency_s > 0
        summary = model.ledger.summary()
        assert summary["calls"] == 1
        assert summary["output_tokens"] == c.usage.output_tokens
        assert server.request_count() == before + 1
    finally:
        model.close()


def test_silicolab_cache_hit_skips_server(
    server: LlamaCppServer, key_env: str, tmp_path: Path
) -> None:
    """A repeated identical call with ``cache_path`` is answered without HTTP."""
    from silicolab.llm import load_model

    model = load_model(
        "openai:tiny",
        base_url=server.base_url,
        api_key_env=key_env,
        cache_path=tmp_path / "llm-cache.sqlite",
    )
    try:
        before = server.request_count()
        first = model.generate(MESSAGES, max_tokens=8, temperature=0.0, seed=1)
        assert not first.cached
        assert first.usage.output_tokens > 0
        assert server.request_count() == before + 1

        second = model.generate(MESSAGES, max_tokens=8, temperature=0.0, seed=1)
        assert second.cached
        assert second.text == first.text
        assert server.request_count() == before + 1  # the server was not contacted

        summary = model.ledger.summary()
        assert summary["calls"] == 2
        assert summary["cache_hits"] == 1
        assert summary["output_tokens"] == first.usage.output_tokens  # hits are free
    finally:
        model.close()


def test_silicolab_structured(server: LlamaCppServer, key_env: str) -> None:
    """``structured`` returns a validated pydantic instance from a random-weight model.

    llama.cpp rejects OpenAI's ``json_schema`` response format, so the model is loaded
    in the ``json_object`` mode (``{"type": "json_object", "schema": ...}``), which the
    server turns into a grammar; the grammar is what makes gibberish weights emit JSON.
    """
    from silicolab.llm import load_model, structured

    model = load_model(
        "openai:tiny", base_url=server.base_url, api_key_env=key_env, json_mode="json_object"
    )
    try:
        pick = structured(model, MESSAGES, Pick)
        assert isinstance(pick, Pick)
        assert pick.answer in {"yes", "no"}
        verdict = structured(model, MESSAGES, Verdict)
        assert isinstance(verdict, Verdict)
        assert model.ledger.summary()["output_tokens"] > 0
    finally:
        model.close()


async def test_silicolab_astructured(server: LlamaCppServer, key_env: str) -> None:
    """The async twins work against the same server."""
    from silicolab.llm import astructured, load_model

    model = load_model(
        "openai:tiny", base_url=server.base_url, api_key_env=key_env, json_mode="json_object"
    )
    try:
        c = await model.agenerate(MESSAGES, max_tokens=4, temperature=0.0, seed=2)
        assert c.usage.output_tokens > 0
        pick = await astructured(model, MESSAGES, Pick)
        assert pick.answer in {"yes", "no"}
        assert model.ledger.summary()["calls"] == 2
    finally:
        await model.aclose()
