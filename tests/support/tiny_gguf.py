"""Build a tiny, random-weight llama-architecture GGUF model entirely offline.

Why: integration tests want a *real* llama.cpp inference server (real HTTP, real
tokenizer, real grammar-constrained sampling) without downloading a model. A
2-layer, 64-dimensional llama with random weights is enough for that: its text is
gibberish, but token accounting, caching and JSON-schema grammars behave exactly
as with a real model.

The tokenizer is written here from scratch (nothing is copied from another GGUF):
a small SentencePiece-style ("llama") vocabulary with

* the special tokens ``<unk>`` (0), ``<s>`` (1, BOS) and ``</s>`` (2, EOS);
* the 256 byte-fallback tokens ``<0x00>`` .. ``<0xFF>`` (type BYTE), so that *any*
  text can be tokenized and -- more importantly -- a grammar can make the model
  emit any character, one byte at a time;
* the space marker ``▁``, single printable ASCII characters, and a few hundred
  word pieces (each word with all its prefixes, so SentencePiece merges can reach
  it) with scores that prefer longer pieces -- about 700 tokens in all.

Only the ``gguf`` package (``GGUFWriter``) and NumPy are needed.
"""

from __future__ import annotations

import string
from pathlib import Path

import numpy as np

__all__ = ["TINY_CHAT_TEMPLATE", "build_tiny_gguf", "tiny_vocab"]

#: Hyperparameters of the tiny model (see the llama-cpp-python section of the
#: dependency spec): 2 blocks, 64-d embeddings, 4 heads, FF 128, context 256.
EMBED = 64
BLOCKS = 2
FEED_FORWARD = 128
HEADS = 4
CONTEXT = 256

#: A short ChatML-like chat template. Real GGUFs carry a template and
#: llama-cpp-python's server renders it with Jinja2; a compact one also keeps
#: prompts short, which matters with a near-character-level vocabulary and a
#: 256-token context.
TINY_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|{{ message['role'] }}|>{{ message['content'] }}\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)

# Words that show up in chat roles, prompts and JSON answers. Each word is added
# with a leading space marker too, and with all its prefixes.
_WORDS = (
    "the",
    "and",
    "a",
    "an",
    "is",
    "of",
    "to",
    "in",
    "it",
    "you",
    "are",
    "yes",
    "no",
    "answer",
    "reply",
    "with",
    "json",
    "only",
    "say",
    "hello",
    "user",
    "system",
    "assistant",
    "value",
    "number",
    "true",
    "false",
    "null",
    "name",
    "cause",
    "effect",
    # JSON-schema vocabulary, so a schema quoted in a prompt stays short.
    "type",
    "object",
    "properties",
    "required",
    "title",
    "string",
    "integer",
    "boolean",
    "array",
    "items",
    "enum",
    "schema",
    "additional",
    "description",
)

# JSON-shaped multi-character pieces, so grammar-constrained output can also be
# produced with fewer tokens than one per byte.
_JSON_PIECES = ('{"', '"}', '":', '",', '": "', "<|", "|>", '"answer"')

# llama.cpp token types (``gguf.TokenType``), repeated here so that the
# vocabulary can be inspected without importing ``gguf``.
_NORMAL, _UNKNOWN, _CONTROL, _BYTE = 1, 2, 3, 6


def tiny_vocab() -> tuple[list[str], list[float], list[int]]:
    """Return ``(tokens, scores, token_types)`` of the self-made SentencePiece vocabulary.

    Ids 0, 1, 2 are ``<unk>``, ``<s>``, ``</s>``; ids 3..258 are the byte tokens
    ``<0x00>``..``<0xFF>`` (upper-case hex, the spelling llama.cpp looks up for
    byte fallback); the rest are normal pieces, unique, with a score that grows
    with the piece length so SentencePiece merges prefer long pieces.
    """
    tokens = ["<unk>", "<s>", "</s>"]
    types = [_UNKNOWN, _CONTROL, _CONTROL]
    scores = [0.0, 0.0, 0.0]
    for byte in range(256):
        tokens.append(f"<0x{byte:02X}>")
        types.append(_BYTE)
        scores.append(0.0)

    pieces: list[str] = ["▁"]
    pieces.extend(ch for ch in string.printable if ch not in string.whitespace)
    for word in _WORDS:
        for variant in (word, "▁" + word):
            pieces.extend(variant[:end] for end in range(2, len(variant) + 1))
    for piece in _JSON_PIECES:
        pieces.extend(piece[:end] for end in range(2, len(piece) + 1))

    seen = set(tokens)
    for piece in pieces:
        if piece in seen:
            continue
        seen.add(piece)
        tokens.append(piece)
        types.append(_NORMAL)
        # Log-probability-like score: longer pieces are "more likely" merges.
        scores.append(-10.0 + len(piece))
    return tokens, scores, types


def build_tiny_gguf(path: str | Path, *, seed: int = 0) -> Path:
    """Write a tiny random-weight llama GGUF to ``path`` and return the path.

    The model is all-F32: ``token_embd``/``output`` (V x 64), two blocks with
    64 x 64 attention projections and 128-wide SwiGLU feed-forward, weights drawn
    from a NumPy generator seeded with ``seed`` and scaled by 0.02, norm weights
    all ones. With the ~700-token self-made vocabulary the file is about 0.7 MB
    and is written in a few tens of milliseconds.
    """
    import gguf  # optional dependency (``local`` extra); imported lazily

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tokens, scores, types = tiny_vocab()
    vocab = len(tokens)
    rng = np.random.default_rng(seed)

    def rand(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    def ones(n: int) -> np.ndarray:
        return np.ones(n, dtype=np.float32)

    writer = gguf.GGUFWriter(str(path), "llama")
    try:
        writer.add_name("silicolab-tiny-random")
        writer.add_context_length(CONTEXT)
        writer.add_embedding_length(EMBED)
        writer.add_block_count(BLOCKS)
        writer.add_feed_forward_length(FEED_FORWARD)
        writer.add_head_count(HEADS)
        writer.add_head_count_kv(HEADS)
        writer.add_layer_norm_rms_eps(1e-5)
        writer.add_rope_dimension_count(EMBED // HEADS)
        writer.add_file_type(gguf.LlamaFileType.ALL_F32)

        writer.add_tokenizer_model("llama")
        writer.add_token_list(tokens)
        writer.add_token_scores(scores)
        writer.add_token_types(types)
        writer.add_unk_token_id(0)
        writer.add_bos_token_id(1)
        writer.add_eos_token_id(2)
        writer.add_add_bos_token(True)
        writer.add_add_eos_token(False)
        writer.add_chat_template(TINY_CHAT_TEMPLATE)

        # NumPy shapes; gguf stores them reversed (ggml's ne order).
        writer.add_tensor("token_embd.weight", rand(vocab, EMBED))
        for block in range(BLOCKS):
            prefix = f"blk.{block}."
            writer.add_tensor(prefix + "attn_norm.weight", ones(EMBED))
            for proj in ("attn_q", "attn_k", "attn_v", "attn_output"):
                writer.add_tensor(f"{prefix}{proj}.weight", rand(EMBED, EMBED))
            writer.add_tensor(prefix + "ffn_norm.weight", ones(EMBED))
            writer.add_tensor(prefix + "ffn_gate.weight", rand(FEED_FORWARD, EMBED))
            writer.add_tensor(prefix + "ffn_up.weight", rand(FEED_FORWARD, EMBED))
            writer.add_tensor(prefix + "ffn_down.weight", rand(EMBED, FEED_FORWARD))
        writer.add_tensor("output_norm.weight", ones(EMBED))
        writer.add_tensor("output.weight", rand(vocab, EMBED))

        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
    finally:
        writer.close()
    return path
