"""The first query after a start against the ones after it (issue 25: ≤ 100 ms more than the median).

    python -m bench.first_query                          # the configured embedder (MNEMO_EMBEDDER)
    MNEMO_EMBEDDER=minilm python -m bench.first_query --runs 3

Saves ``--memories`` memories through a first ``mnemo serve``, stops it, then per run starts
``mnemo serve`` again on the same data (a new process: nothing cached) and, once ``/healthz``
answers, makes one call that needs no embedding (``search_memory``: the key's check and the tenant
cache are paid there), then times ``recall`` (hybrid: it embeds the query) over HTTP on one
connection — the first recall, then ``--queries`` more with other queries. Reports that first call,
the first recall, the median of the others and the difference, per run.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.clients import served

KEY = "mnemo-bench-first-query-key-0123456789"
TOPICS = ["database", "deploy", "invoice", "vacation", "certificate", "kitchen", "allergy", "backup", "pricing"]


def call(conn: http.client.HTTPConnection, tool: str, body: dict[str, Any]) -> float:
    started = time.perf_counter()
    conn.request("POST", f"/v1/tools/{tool}", json.dumps(body),
                 {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"})  # fmt: skip
    response = conn.getresponse()
    answer = response.read()
    if response.status != 200:
        raise RuntimeError(f"{tool}: HTTP {response.status} {answer[:300]!r}")
    return (time.perf_counter() - started) * 1e3


def run(memories: int, queries: int, runs: int) -> dict[str, Any]:
    os.environ["MNEMO_BOOTSTRAP_KEY"] = KEY
    out: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="mnemo-first-query-") as tmp:
        data, log = Path(tmp, "data"), Path(tmp, "serve.log")
        with served(data, log) as (port, _):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            for i in range(memories):
                topic = TOPICS[i % len(TOPICS)]
                content = f"Note {i} about the {topic}: item {i * 7 % 101} is due on day {i % 28}"
                for attempt in range(5):  # a loaded machine may time a write out (503): try again
                    try:
                        call(conn, "memory_add", {"content": content})
                        break
                    except RuntimeError:
                        if attempt == 4:
                            raise
            conn.close()
        for _ in range(runs):
            with served(data, log) as (port, _):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                # a call that needs no embedding first: the key's check and the tenant cache are paid here
                warmup = call(conn, "search_memory", {"query": "database"})
                first = call(conn, "recall", {"query": "when is the database backup due"})
                later = [call(conn, "recall", {"query": f"what about the {TOPICS[i % len(TOPICS)]} number {i}"})
                         for i in range(queries)]  # fmt: skip
                conn.close()
            median = statistics.median(later)
            out.append({"first_call_ms": round(warmup, 1), "first_recall_ms": round(first, 1),
                        "median_ms": round(median, 1), "extra_ms": round(first - median, 1)})  # fmt: skip
    return {"embedder": os.environ.get("MNEMO_EMBEDDER", "static"), "memories": memories, "runs": out}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps(run(args.memories, args.queries, args.runs), indent=2))
