"""memory_add in process: latency of each call and sequential throughput, through
``Service.invoke``, into a copy of a cached corpus (so the index is not empty)."""

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
    docs = corpus.generate(corpus.CorpusParams(n_adds + 20, seed + 1))
    args = [
        {k: v for k, v in {"content": d.content, "kind": d.kind, "tags": d.tags, "path": d.path}.items() if v}
        for d in docs
    ]
    try:
        for a in args[:20]:  # warm-up
            svc.invoke("memory_add", caller, a)
        samples = []
        clock = time.perf_counter
        started = clock()
        for a in args[20:]:
            t0 = clock()
            svc.invoke("memory_add", caller, a)
            samples.append(clock() - t0)
        total = clock() - started
    finally:
        svc.ports.close()
    return {
        "base_size": base_size,
        "latency": summary_ms(samples),
        "throughput_per_s": round(len(samples) / total, 1),
        "mean_content_bytes": round(sum(len(a["content"].encode()) for a in args[20:]) / len(samples), 1),
    }
