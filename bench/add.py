"""memory_add in process: latency of each call and sequential throughput, through
``Service.invoke``, into a copy of a cached corpus (so the index is not empty); and the same adds,
taking turns, into another copy by a service without an embedder (words only): what embedding a
memory adds, measured in one run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench import corpus
from bench.search import open_service
from bench.stats import summary_ms


def run(base_size: int, n_adds: int, workdir: Path, seed: int = 7) -> dict[str, Any]:
    db = corpus.build_db(corpus.CorpusParams(base_size, seed))
    path = corpus.working_copy(db, workdir / "add")
    svc, caller = open_service(path)
    plain_svc, plain_caller = open_service(corpus.working_copy(db, workdir / "add-words-only"), embedder=None)
    docs = corpus.generate(corpus.CorpusParams(n_adds + 20, seed + 1))
    args = [
        {k: v for k, v in {"content": d.content, "kind": d.kind, "tags": d.tags, "path": d.path}.items() if v}
        for d in docs
    ]
    try:
        for a in args[:20]:  # warm-up
            svc.invoke("memory_add", caller, a)
            plain_svc.invoke("memory_add", plain_caller, a)
        samples, plain = [], []
        clock = time.perf_counter
        busy = 0.0
        for a in args[20:]:
            t0 = clock()
            svc.invoke("memory_add", caller, a)
            samples.append(clock() - t0)
            busy += samples[-1]
            t0 = clock()
            plain_svc.invoke("memory_add", plain_caller, a)
            plain.append(clock() - t0)
        total = busy
    finally:
        svc.ports.close()
        plain_svc.ports.close()
    words_only = summary_ms(plain)
    latency = summary_ms(samples)
    return {
        "base_size": base_size,
        "latency": latency,
        "words_only_latency": words_only,
        "embedding_ratio_p50": round(latency["p50_ms"] / words_only["p50_ms"], 2),
        "throughput_per_s": round(len(samples) / total, 1),
        "mean_content_bytes": round(sum(len(a["content"].encode()) for a in args[20:]) / len(samples), 1),
    }
