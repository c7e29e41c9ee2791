"""memory_add with each local embedder, in process (``Service.invoke`` on SQLite, over a copy of a
cached 10,000-memory corpus): the words-only service, ``static``, ``minilm`` embedding before the
write, and ``minilm`` after the answer (``embed_after_answer``: what ``mnemo serve`` and ``mnemo
mcp`` run by default), taking turns call by call in one run, so that a load on the shared machine
hits all alike. Each call's thread CPU time (``time.thread_time``: onnxruntime runs on the calling
thread with one intra-op thread) and wall time; p50 / p90 of each. For the after-the-answer service
also ``vector_after_answer_ms``: the wall time from the answer until its vector is stored (the
queue drained before the next call, so it is one memory's delay on an otherwise idle queue).

Run: ``nice -n 5 .venv/bin/python -m bench.add_embedder [--adds 300]`` (writes
bench/results/add_minilm.json).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import corpus
from bench.search import open_service

OUT = Path(__file__).resolve().parent / "results" / "add_minilm.json"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", type=int, default=10_000)
    parser.add_argument("--adds", type=int, default=300)
    args = parser.parse_args()
    from mnemo.embedding import build_embedder, warm

    minilm = build_embedder("minilm")
    embedders: dict[str, Any] = {"words only": None, "static": build_embedder("static")}
    embedders["minilm before the write"] = minilm
    embedders["minilm after the answer"] = minilm
    for e in embedders.values():
        warm(e)
    db = corpus.build_db(corpus.CorpusParams(args.base, 7))
    docs = corpus.generate(corpus.CorpusParams(args.adds + 20, 8))
    calls = [
        {k: v for k, v in {"content": d.content, "kind": d.kind, "tags": d.tags, "path": d.path}.items() if v}
        for d in docs
    ]
    cpu: dict[str, list[float]] = {name: [] for name in embedders}
    wall: dict[str, list[float]] = {name: [] for name in embedders}
    delay: list[float] = []
    with tempfile.TemporaryDirectory(prefix="mnemo-add-") as tmp:
        services = {
            name: open_service(
                corpus.working_copy(db, Path(tmp) / name.replace(" ", "-")),
                embedder=e,
                embed_after_answer=name.endswith("after the answer"),
            )
            for name, e in embedders.items()
        }
        try:
            for i, call in enumerate(calls):
                for name, (svc, caller) in services.items():
                    w0, c0 = time.perf_counter(), time.thread_time()
                    svc.invoke("memory_add", caller, call)
                    c1, w1 = time.thread_time(), time.perf_counter()
                    if svc.embed_after is not None:
                        assert svc.embed_after.drain(60)
                    if i >= 20:  # the first 20: warm-up
                        cpu[name].append(c1 - c0)
                        wall[name].append(w1 - w0)
                        if svc.embed_after is not None:
                            delay.append(time.perf_counter() - w1)
        finally:
            for svc, _ in services.values():
                svc.ports.close()

    def ms(values: list[float]) -> dict[str, float]:
        return {"p50": round(_pct(values, 0.5) * 1000, 2), "p90": round(_pct(values, 0.9) * 1000, 2)}

    report = {
        "command": " ".join(["nice -n 5 .venv/bin/python -m bench.add_embedder", *sys.argv[1:]]),
        "base_memories": args.base,
        "adds": len(cpu["static"]),
        "vector_after_answer_ms": ms(delay),
        "mean_content_bytes": round(statistics.fmean(len(c["content"].encode()) for c in calls[20:]), 1),
        "thread_cpu_ms": {name: ms(v) for name, v in cpu.items()},
        "wall_ms": {name: ms(v) for name, v in wall.items()},
        "target": "memory_add p50 <= 10 ms (issue 38)",
    }
    OUT.write_text(json.dumps(report, indent=1) + "\n")
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
