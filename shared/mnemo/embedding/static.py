"""The default embedder: a static token-embedding model, run in plain Python.

WordLlama's ``l2_supercat`` model (MIT; the files come from its PyPI wheel through
``scripts/embedder_data.py``, quantised to int8) maps each token of the Llama-2 tokenizer to 256
numbers; a text's vector is the mean of its tokens' rows, L2-normalised. Inference is a table
lookup, so nothing heavier than the standard library is needed: the tokenizer (byte-pair encoding
with byte fallback, as the model's ``tokenizer.json`` describes it) is implemented here, and the
table is read once per process, lazily, on the first text to embed.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import json
import math
import operator
import struct
import sys
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path

from mnemo.embedding.merges import merge_ids
from mnemo.errors import EmbedderUnavailable

DATA = Path(__file__).resolve().parent / "data"
MAGIC = b"MNEMOI8\x00"
#: the model's files in ``DATA`` (scripts/embedder_data.py)
DATA_FILES = ("l2_supercat_256.i8", "tokenizer.json", "merges.u16")
SPACE = "\u2581"  # SentencePiece's word boundary


class BytePairTokenizer:
    """The Llama-2 tokenizer of ``tokenizer.json``: special tokens split out as written, each other
    piece prefixed with ``▁`` and its spaces replaced by ``▁``, then byte-pair merges by rank over the
    characters (a character outside the vocabulary becomes its UTF-8 byte tokens)."""

    def __init__(self, spec: dict[str, object], merges: bytes | None = None) -> None:
        """``merges``: the spec's merges as token ids (:func:`merge_ids`), if already computed —
        building them from the spec's strings is most of the tokenizer's load time."""
        model = spec["model"]
        assert isinstance(model, dict) and model.get("type") == "BPE" and model.get("byte_fallback")
        self.vocab: dict[str, int] = model["vocab"]
        self.unk = self.vocab[model["unk_token"]]
        ids = array("H", merges if merges is not None else merge_ids(spec))
        if sys.byteorder != "little":  # pragma: no cover - the file is little-endian
            ids.byteswap()
        # (left << 16 | right) → (rank, merged): built by C loops, ≈ 60,000 merges in milliseconds
        self.merges: dict[int, tuple[int, int]] = dict(
            zip(map(operator.or_, map(operator.lshift, ids[0::3], itertools.repeat(16)), ids[1::3]),
                zip(itertools.count(), ids[2::3]), strict=True)
        )  # fmt: skip
        added = spec.get("added_tokens") or []
        assert isinstance(added, list)
        self.special = {t["content"]: t["id"] for t in added}
        self.byte_ids = [self.vocab.get(f"<0x{b:02X}>", self.unk) for b in range(256)]

    def encode(self, text: str) -> list[int]:
        ids: list[int] = []
        for piece, special in self._split(text):
            if special is not None:
                ids.append(special)
            elif piece:
                ids.extend(self._bpe(SPACE + piece.replace(" ", SPACE)))
        return ids

    def _split(self, text: str) -> list[tuple[str, int | None]]:
        if not any(s in text for s in self.special):
            return [(text, None)]
        out: list[tuple[str, int | None]] = []
        start = i = 0
        while i < len(text):
            for content, token in self.special.items():
                if text.startswith(content, i):
                    out.append((text[start:i], None))
                    out.append((content, token))
                    i += len(content)
                    start = i
                    break
            else:
                i += 1
        out.append((text[start:], None))
        return out

    def _bpe(self, word: str) -> list[int]:
        symbols: list[int] = []
        for char in word:
            token = self.vocab.get(char)
            if token is not None:
                symbols.append(token)
            else:
                symbols.extend(self.byte_ids[b] for b in char.encode())
        n = len(symbols)
        if n < 2:
            return symbols
        # a doubly linked list over the symbols, and a heap of the adjacent pairs that merge
        nxt = list(range(1, n + 1))
        prv = list(range(-1, n - 1))
        alive = [True] * n
        heap = []
        merges = self.merges
        for i in range(n - 1):
            found = merges.get(symbols[i] << 16 | symbols[i + 1])
            if found is not None:
                heap.append((found[0], i, symbols[i], symbols[i + 1]))
        heapq.heapify(heap)
        while heap:
            _, i, left, right = heapq.heappop(heap)
            j = nxt[i]
            if not alive[i] or j >= n or symbols[i] != left or symbols[j] != right:
                continue  # stale: one side merged since
            symbols[i] = merges[left << 16 | right][1]
            alive[j] = False
            nxt[i] = nxt[j]
            if nxt[j] < n:
                prv[nxt[j]] = i
            p = prv[i]
            if p >= 0 and (found := merges.get(symbols[p] << 16 | symbols[i])) is not None:
                heapq.heappush(heap, (found[0], p, symbols[p], symbols[i]))
            k = nxt[i]
            if k < n and (found := merges.get(symbols[i] << 16 | symbols[k])) is not None:
                heapq.heappush(heap, (found[0], i, symbols[i], symbols[k]))
        return [symbols[i] for i in range(n) if alive[i]]


class StaticEmbedder:
    """``Embedder``: the mean of a text's token rows, L2-normalised (an empty text: all zeros)."""

    model = "wordllama-l2_supercat-256-int8"
    dim = 256
    #: recall's floor for "found by meaning" (docs/retrieval.md: unrelated words reach 0.2-0.4 here)
    min_similarity = 0.35

    def __init__(self, data: Path = DATA) -> None:
        self.data = data
        self._lock = threading.Lock()
        self._loaded: tuple[BytePairTokenizer, bytes, tuple[float, ...], int] | None = None

    def load(self) -> None:
        """Read the model now (at a process's start) instead of on the first text."""
        self._load()

    def _load(self) -> tuple[BytePairTokenizer, bytes, tuple[float, ...], int]:
        with self._lock:
            if self._loaded is None:
                try:
                    table = (self.data / "l2_supercat_256.i8").read_bytes()
                    spec = json.loads((self.data / "tokenizer.json").read_text(encoding="utf-8"))
                    merges = (self.data / "merges.u16").read_bytes()
                except OSError as exc:
                    raise EmbedderUnavailable(
                        f"the embedder's data files are missing in {self.data} (make install fetches them)"
                    ) from exc
                if table[:8] != MAGIC:
                    raise EmbedderUnavailable(f"{self.data}/l2_supercat_256.i8 is not an int8 table")
                rows, dim = struct.unpack_from("<II", table, 8)
                if dim != self.dim:
                    raise EmbedderUnavailable(f"the table has {dim} dimensions, not {self.dim}")
                scales = struct.unpack_from(f"<{rows}f", table, 16)
                self._loaded = (BytePairTokenizer(spec, merges), table, scales, 16 + 4 * rows)
            return self._loaded

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        tokenizer = self._load()[0]
        row = self._row
        out = []
        for text in texts:
            rows = [row(token) for token in tokenizer.encode(text)]
            if not rows:
                out.append([0.0] * self.dim)
                continue
            acc = list(map(sum, zip(*rows, strict=True))) if len(rows) > 1 else list(rows[0])
            norm = math.sqrt(sum(x * x for x in acc)) or 1.0
            out.append([x / norm for x in acc])
        return out

    @functools.lru_cache(maxsize=2048)  # noqa: B019 - one embedder per process (shared_embedder)
    def _row(self, token: int) -> tuple[float, ...]:
        """A token's row of the table, dequantised (the 2,048 most recent kept: ≈ 17 MB of floats)."""
        _, table, scales, base = self._load()
        token = min(token, len(scales) - 1)
        start = base + token * self.dim
        scale = scales[token]
        return tuple(scale * q for q in memoryview(table)[start : start + self.dim].cast("b"))


_shared_lock = threading.Lock()
_shared: StaticEmbedder | None = None


def shared_embedder() -> StaticEmbedder:
    """One static embedder per process (its table loads once, on the first text)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = StaticEmbedder()
        return _shared
