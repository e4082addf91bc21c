"""APIEmbedder against the local OpenAI-compatible test server (``/v1/embeddings``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from silicolab.core.errors import ConfigError
from silicolab.sim.embedders import APIEmbedder
from silicolab.sim.memory import AssociativeMemory
from tests.support.openai_server import EMBEDDING_DIM, fake_embedding


def _calls(server) -> int:
    return server.stats.requests_by_path.get("/v1/embeddings", 0)


def test_vectors_come_from_the_server_and_are_unit_length(llm_server_factory) -> None:
    server = llm_server_factory()
    emb = APIEmbedder("fake-embed", base_url=server.base_url)
    vecs = emb.embed(["The cat sat on the mat.", "A storm hit the harbour."])
    assert vecs.shape == (2, EMBEDDING_DIM)
    assert vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(vecs[0], fake_embedding("The cat sat on the mat."), atol=1e-6)
    assert _calls(server) == 1
    stats = server.stats
    assert stats.ok == 1 and stats.prompt_tokens == 6 + 5
    assert stats.requests_log[-1]["model"] == "fake-embed"
    assert emb.embed([]).shape[0] == 0


def test_batches_of_batch_size(llm_server_factory) -> None:
    server = llm_server_factory()
    emb = APIEmbedder("fake-embed", base_url=server.base_url, batch_size=128)
    texts = [f"memory number {i}" for i in range(300)]
    vecs = emb.embed(texts)
    assert vecs.shape == (300, EMBEDDING_DIM)
    assert _calls(server) == 3
    sizes = [len(b["input"]) for b in server.stats.requests_log]
    assert sizes == [128, 128, 44]
    np.testing.assert_allclose(vecs[299], fake_embedding("memory number 299"), atol=1e-6)


def test_sqlite_cache_makes_no_second_request(llm_server_factory, tmp_path: Path) -> None:
    server = llm_server_factory()
    cache = tmp_path / "emb.sqlite"
    texts = [f"text {i}" for i in range(10)] + ["text 3"]
    first = APIEmbedder("fake-embed", base_url=server.base_url, cache_path=cache).embed(texts)
    assert _calls(server) == 1
    assert len(server.stats.requests_log[-1]["input"]) == 10  # duplicates sent once
    again = APIEmbedder("fake-embed", base_url=server.base_url, cache_path=cache)
    second = again.embed(texts)
    assert _calls(server) == 1
    np.testing.assert_allclose(first, second, atol=1e-7)
    again.embed(["text 0", "a new text"])  # only the new text is requested
    assert _calls(server) == 2 and server.stats.requests_log[-1]["input"] == ["a new text"]
    # another model does not share the cached vectors
    APIEmbedder("other-embed", base_url=server.base_url, cache_path=cache).embed(["text 0"])
    assert _calls(server) == 3


def test_cache_never_stores_the_key(llm_server_factory, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SILICOLAB_TEST_EMBED_KEY", "sk-secret-embed-key")
    server = llm_server_factory()
    cache = tmp_path / "emb.sqlite"
    emb = APIEmbedder(
        "fake-embed",
        base_url=server.base_url,
        api_key_env="SILICOLAB_TEST_EMBED_KEY",
        cache_path=cache,
    )
    emb.embed(["hello world"])
    assert "Bearer sk-secret-embed-key" in server.stats.auth_headers_seen
    assert b"sk-secret-embed-key" not in cache.read_bytes()
    assert "sk-secret" not in repr(emb)


def test_associative_memory_retrieval(llm_server_factory) -> None:
    server = llm_server_factory()
    memory = AssociativeMemory(
        embedder=APIEmbedder("fake-embed", base_url=server.base_url), weights=(1.0, 0.0, 0.0)
    )
    texts = ["A storm damaged the harbour.", "Bread prices rose.", "Bob bought a red hat."]
    for t, text in enumerate(texts):
        memory.add(text, time=t)
    best = memory.retrieve("Bread prices rose.", k=1)
    assert [m.text for m in best] == ["Bread prices rose."]
    assert best[0].score == pytest.approx(1.0)


def test_missing_key_is_a_config_error(monkeypatch) -> None:
    monkeypatch.delenv("SILICOLAB_TEST_MISSING_KEY", raising=False)
    with pytest.raises(ConfigError, match="SILICOLAB_TEST_MISSING_KEY"):
        APIEmbedder("text-embedding-3-small", api_key_env="SILICOLAB_TEST_MISSING_KEY")
    # a loopback server needs no key
    APIEmbedder(
        "fake-embed",
        base_url="http://127.0.0.1:9/v1",
        api_key_env="SILICOLAB_TEST_MISSING_KEY",
    )
