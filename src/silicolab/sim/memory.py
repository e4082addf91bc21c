"""Associative memory: retrieve what an agent remembers by relevance, recency and importance.

Each retrieval scores every stored item on three signals, min-max normalises each signal
across the items so that none dominates by scale, and ranks by their weighted sum:

* relevance — TF-IDF cosine (default) or BM25 between the query and the text, computed in
  pure numpy; or the cosine of vectors from an ``embedder`` (any object with
  ``embed(texts) -> np.ndarray``, e.g. :class:`HashingEmbedder` or a sentence embedder);
* recency — ``0.5 ** ((now - time) / recency_half_life)``;
* importance — given at :meth:`AssociativeMemory.add`, 0.5 by default.

It is O(N) per query with no index, which is fine for the hundreds of memories an agent
keeps in one episode.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from silicolab.core.errors import InputError

_TOKEN = re.compile(r"[a-z0-9]+")
DEFAULT_IMPORTANCE = 0.5


def tokenize(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens."""
    return _TOKEN.findall(text.lower())


class Embedder(Protocol):
    """Anything that turns texts into one row vector each."""

    def embed(self, texts: list[str]) -> np.ndarray:  # pragma: no cover - protocol
        ...


class HashingEmbedder:
    """A dependency-free embedder: hashed unigram and bigram counts, L2-normalised.

    Stable across processes (sha256, not Python's salted ``hash``), so checkpoints and
    reruns score identically.
    """

    def __init__(self, dim: int = 512):
        if dim < 1:
            raise InputError("HashingEmbedder dim must be positive")
        self.dim = dim

    def _bucket(self, token: str) -> int:
        digest = hashlib.sha256(token.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "little") % self.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        """One normalised row per text (an all-zero row for a text with no tokens)."""
        out = np.zeros((len(texts), self.dim))
        for i, text in enumerate(texts):
            toks = tokenize(text)
            for tok in toks + [f"{a} {b}" for a, b in itertools.pairwise(toks)]:
                out[i, self._bucket(tok)] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


@dataclass(frozen=True)
class MemoryItem:
    """One memory; ``score`` is the retrieval score (0 when not from a retrieval)."""

    text: str
    time: float
    importance: float
    score: float = 0.0


def _minmax(x: np.ndarray) -> np.ndarray:
    """Scale to [0, 1]; a constant signal carries no ranking information and becomes 0."""
    lo, hi = float(x.min()), float(x.max())
    if hi - lo <= 1e-12:
        return np.zeros_like(x)
    return (x - lo) / (hi - lo)


def _tfidf_relevance(query: str, docs: list[str]) -> np.ndarray:
    """Cosine similarity of TF-IDF vectors (smoothed idf over the documents)."""
    doc_tokens = [tokenize(d) for d in docs]
    vocab = {t: i for i, t in enumerate(sorted({t for toks in doc_tokens for t in toks}))}
    if not vocab:
        return np.zeros(len(docs))
    n = len(docs)
    tf = np.zeros((n, len(vocab)))
    for i, toks in enumerate(doc_tokens):
        for tok, c in Counter(toks).items():
            tf[i, vocab[tok]] = c
    df = (tf > 0).sum(axis=0)
    idf = np.log((1 + n) / (1 + df)) + 1.0
    mat = tf * idf
    q = np.zeros(len(vocab))
    for tok, c in Counter(tokenize(query)).items():
        if tok in vocab:
            q[vocab[tok]] = c
    q *= idf
    denom = np.linalg.norm(mat, axis=1) * np.linalg.norm(q)
    return np.divide(mat @ q, denom, out=np.zeros(n), where=denom > 0)


def _bm25_relevance(query: str, docs: list[str], k1: float = 1.5, b: float = 0.75) -> np.ndarray:
    """Okapi BM25 scores of each document for the query."""
    doc_tokens = [tokenize(d) for d in docs]
    n = len(docs)
    lengths = np.array([len(t) for t in doc_tokens], dtype=float)
    avg = float(lengths.mean()) if n and lengths.mean() > 0 else 1.0
    counts = [Counter(t) for t in doc_tokens]
    scores = np.zeros(n)
    for tok in set(tokenize(query)):
        df = sum(1 for c in counts if tok in c)
        if df == 0:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        f = np.array([c.get(tok, 0) for c in counts], dtype=float)
        scores += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * lengths / avg))
    return scores


class AssociativeMemory:
    """A list of timestamped memories ranked by weighted relevance, recency and importance.

    ``weights`` are (relevance, recency, importance). ``relevance`` picks the lexical
    scorer used when no ``embedder`` is given.
    """

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        recency_half_life: float = 10.0,
        weights: tuple[float, float, float] = (1.0, 1.0, 1.0),
        relevance: Literal["tfidf", "bm25"] = "tfidf",
    ):
        if recency_half_life <= 0:
            raise InputError("recency_half_life must be positive")
        if len(weights) != 3 or any(w < 0 for w in weights):
            raise InputError("weights must be three non-negative numbers")
        if relevance not in ("tfidf", "bm25"):
            raise InputError(f"relevance must be 'tfidf' or 'bm25', got {relevance!r}")
        self.embedder = embedder
        self.recency_half_life = float(recency_half_life)
        self.weights = tuple(float(w) for w in weights)
        self.relevance = relevance
        self._items: list[MemoryItem] = []
        self._vectors: dict[int, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self._items)

    def add(self, text: str, *, time: float, importance: float | None = None) -> None:
        """Store ``text`` observed at ``time`` (importance in [0, 1], default 0.5)."""
        imp = DEFAULT_IMPORTANCE if importance is None else float(importance)
        if not 0.0 <= imp <= 1.0:
            raise InputError(f"importance must be in [0, 1], got {imp}")
        self._items.append(MemoryItem(str(text), float(time), imp))

    def items(self) -> list[MemoryItem]:
        """All memories in insertion order."""
        return list(self._items)

    def _relevance(self, query: str) -> np.ndarray:
        docs = [m.text for m in self._items]
        if self.embedder is None:
            if self.relevance == "bm25":
                return _bm25_relevance(query, docs)
            return _tfidf_relevance(query, docs)
        missing = [i for i in range(len(docs)) if i not in self._vectors]
        if missing:
            vecs = np.asarray(self.embedder.embed([docs[i] for i in missing]), dtype=float)
            for i, v in zip(missing, vecs, strict=True):
                self._vectors[i] = v
        mat = np.stack([self._vectors[i] for i in range(len(docs))])
        q = np.asarray(self.embedder.embed([query]), dtype=float)[0]
        denom = np.linalg.norm(mat, axis=1) * np.linalg.norm(q)
        return np.divide(mat @ q, denom, out=np.zeros(len(docs)), where=denom > 0)

    def retrieve(self, query: str, k: int = 5, *, now: float | None = None) -> list[MemoryItem]:
        """The ``k`` best memories for ``query``, best first (ties: most recent first).

        ``now`` defaults to the latest memory's time.
        """
        if not self._items or k <= 0:
            return []
        times = np.array([m.time for m in self._items])
        now = float(times.max()) if now is None else float(now)
        rel = _minmax(self._relevance(query))
        rec = _minmax(0.5 ** (np.maximum(now - times, 0.0) / self.recency_half_life))
        imp = _minmax(np.array([m.importance for m in self._items]))
        w_rel, w_rec, w_imp = self.weights
        score = w_rel * rel + w_rec * rec + w_imp * imp
        order = sorted(range(len(score)), key=lambda i: (-score[i], -times[i], -i))[:k]
        return [
            MemoryItem(
                self._items[i].text, self._items[i].time, self._items[i].importance, float(score[i])
            )
            for i in order
        ]

    def state_dict(self) -> dict[str, Any]:
        """JSON-ready state (memories only; the embedder is configuration, not state)."""
        return {"items": [[m.text, m.time, m.importance] for m in self._items]}

    def load_state(self, state: dict[str, Any]) -> None:
        """Replace the memories with those of :meth:`state_dict` output."""
        self._items = [MemoryItem(str(t), float(tm), float(i)) for t, tm, i in state["items"]]
        self._vectors = {}
