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
  part that does not grow with the length is reading the weights (the graph's int8 weights are
  folded into float32 at load: ≈ 42 MB of products per run);
* **options**: the session as ``TransformerEmbedder`` makes it (one thread) against the same with
  one option changed, over the queries' token ids: the median run and whether every output is
  bitwise the same as the default's.

Writes ``bench/results/<date>-embed-cost-<label>.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import corpus

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


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
    graph = graph_bytes()

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
    return out


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
    res["date"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    res["commit"] = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.strip()
    res["command"] = "python -m bench.embed_cost " + " ".join(argv)
    stem = RESULTS / f"{datetime.now(UTC):%Y-%m-%d}-embed-cost-{a.label}"
    stem.with_suffix(".json").write_text(json.dumps(res, indent=1) + "\n")
    stem.with_suffix(".md").write_text(markdown(res))
    print(stem.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
