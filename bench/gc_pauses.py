"""The garbage collector's pauses during hybrid recall in a warm process (issue 41): how often each
generation is collected and what a collection costs, at ``size`` memories of callsplit's corpus
(``MNEMO_EMBEDDER``, default minilm), after the process froze what it held as a warm worker does.

    python -m bench.gc_pauses [--size 100000] [--rounds 5] [--label NAME]

``rounds`` × 200 recalls (queries of seeds 7, 8, …); ``gc.callbacks`` time every collection. The
tree measured is the ``mnemo`` that imports (``PYTHONPATH`` may name another tree's ``shared/``):
the result records which. Writes ``bench/results/<date>-gc-<label>.json``.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import corpus, resultfiles


def run(size: int, rounds: int) -> dict[str, Any]:
    from bench import callsplit
    from bench.every_tool import _service

    db = callsplit.prepared_corpus(size, os.environ.setdefault("MNEMO_EMBEDDER", "minilm"))
    with tempfile.TemporaryDirectory(prefix="mnemo-gc-") as tmp:
        copy = callsplit.working_copy(db, Path(tmp))
        kept = db.with_suffix(".ann")
        if kept.is_dir():
            shutil.copytree(kept, Path(str(copy) + ".ann"))
        svc, caller = _service(copy)
        svc.invoke("recall", caller, {"query": "warm"})
        vectors = svc.ports.index.vectors
        project = (
            svc.ports.db.conn()
            .execute("SELECT project_id FROM memories GROUP BY project_id ORDER BY count(*) DESC LIMIT 1")
            .fetchone()[0]
        )
        deadline = time.monotonic() + 900
        while vectors.ann_min is not None and size >= vectors.ann_min and not vectors.ann_ready(project):
            if time.monotonic() > deadline:
                raise RuntimeError("no HNSW graph within 900 s")
            time.sleep(0.5)
        from mnemo import coldstart
        from mnemo.backends.sqlite import db as sqlite_db

        coldstart.freeze()
        events: list[tuple[int, float]] = []
        started = [0.0]

        def timing(phase: str, info: dict[str, Any]) -> None:
            if phase == "start":
                started[0] = time.perf_counter()
            else:
                events.append((info["generation"], time.perf_counter() - started[0]))

        gc.callbacks.append(timing)
        calls = 0
        for seed in range(7, 7 + rounds):
            for _, q in corpus.queries(seed, 200):
                svc.invoke("recall", caller, {"query": q})
                calls += 1
        gc.callbacks.remove(timing)
        kept_records = len(sqlite_db._decoded)
        decoded_kept = sqlite_db.DECODED_KEPT
        svc.ports.close()
    import mnemo

    out: dict[str, Any] = {
        "size": size,
        "calls": calls,
        "mnemo": str(Path(mnemo.__file__).resolve().parent),
        "DECODED_KEPT": decoded_kept,
        "records_kept_at_the_end": kept_records,
        "generations": {},
    }
    for generation in (0, 1, 2):
        spent = [s for g, s in events if g == generation]
        if spent:
            out["generations"][generation] = {
                "collections": len(spent),
                "calls_per_collection": round(calls / len(spent), 1),
                "p50_ms": round(statistics.median(spent) * 1000, 3),
                "max_ms": round(max(spent) * 1000, 3),
                "per_call_ms": round(sum(spent) / calls * 1000, 3),
            }
    return out


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m bench.gc_pauses")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--label", default="run")
    a = parser.parse_args(argv)
    from mnemo.local.cli import apply_library_defaults

    apply_library_defaults()
    res = run(a.size, a.rounds)
    res["load_average"] = os.getloadavg()[0]
    resultfiles.write(resultfiles.stamp(res, "python -m bench.gc_pauses " + " ".join(argv)), "gc", a.label)


if __name__ == "__main__":
    main()
