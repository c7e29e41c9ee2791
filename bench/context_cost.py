"""What recall's context costs: hybrid ``recall`` at 10,000 memories with the context rule and
without it (``Neighbours(share=0)``), paired — each query asked once each way, taking turns at
going first — CPU time of the calling thread (``time.thread_time``: what the call spent, less the
waits for a CPU on a shared machine), p50 / p90 over the query mix of ``bench/search.py``.

The corpus is ``bench/corpus.py``'s (vectors of ``default_embedder()``, as ``bench/search.py``
measures), its memories given sessions of ``SESSION`` turns in creation order (the ``session`` column and the
record's JSON body, its source of truth), so every anchor
asks the store for its neighbours (``MemoryStore.neighbours``, SQLite: two indexed range reads per
anchor).

    OPENBLAS_NUM_THREADS=1 nice -n 5 python -m bench.context_cost --label 2026-12-03-context-cost
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import corpus
from bench.search import open_service
from bench.stats import summary_ms

ROOT = Path(__file__).resolve().parent.parent
SESSION = 20


def run(size: int, n_queries: int, workdir: Path, seed: int = 7, cache: Path = corpus.CACHE_DIR) -> dict[str, Any]:
    from mnemo.service.retrieval.context import ADOPTED, Neighbours

    db = corpus.build_db(corpus.CorpusParams(size, seed), cache)
    path = corpus.working_copy(db, workdir / f"context-{size}")
    svc, caller = open_service(path)
    conn = svc.ports.db.conn()
    ids = [row[0] for row in conn.execute("SELECT id FROM memories ORDER BY id")]
    with svc.ports.db.write() as write:
        write.executemany(
            "UPDATE memories SET session = ?1, body = json_set(body, '$.session', ?1) WHERE id = ?2",
            [(f"s{i // SESSION}", ref) for i, ref in enumerate(ids)],
        )
    rules = {"without": Neighbours(share=0.0), "with": ADOPTED}
    qs = corpus.queries(seed, n_queries)
    cpu: dict[str, list[float]] = {name: [] for name in rules}
    lent = 0
    try:
        for _, q in qs[:20]:  # warm-up: caches, the query vectors
            for rule in rules.values():
                svc.neighbours = rule
                svc.invoke("recall", caller, {"query": q})
        for i, (_, q) in enumerate(qs):
            for name in ("with", "without") if i % 2 else ("without", "with"):
                svc.neighbours = rules[name]
                started = time.thread_time()
                result = svc.invoke("recall", caller, {"query": q, "explain": True}).result
                cpu[name].append(time.thread_time() - started)
                if name == "with":
                    lent += any("through its neighbours" in (r.explanation.reason or "") for r in result.results)
    finally:
        svc.ports.close()
    return {
        "size": size,
        "session_turns": SESSION,
        "queries": len(qs),
        "answers_ranking_through_neighbours": lent,
        "cpu_ms": {name: summary_ms(samples) for name, samples in cpu.items()},
    }


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--label")
    parser.add_argument("--cache", type=Path, default=corpus.CACHE_DIR, help="where the built corpus is kept")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        res = run(args.size, args.queries, Path(tmp), cache=args.cache)
    env = "".join(f"{k}={os.environ[k]} " for k in ("MNEMO_EMBEDDER", "OPENBLAS_NUM_THREADS") if k in os.environ)
    res["command"] = f"{env}python -m bench.context_cost {shlex.join(argv)}".strip()
    print(json.dumps(res, indent=1))
    if args.label:
        (ROOT / "bench" / "results" / f"{args.label}.json").write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
