"""The local server under concurrent load on loopback.

``mnemo serve`` runs as a subprocess on a free 127.0.0.1 port over a copy of a cached corpus
(the benchmark key and its raised rate limits come with it). A bounded client — ``threads``
threads, each with one keep-alive HTTP/1.1 connection, ``per_thread`` requests each, stopped
early at ``max_seconds`` — sends ``memory_search`` requests from the query mix (and, in a
second phase, ``memory_add``). The server is stopped afterwards, whatever happens.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bench import corpus
from bench.processes import free_port, stop_group, wait_healthy
from bench.stats import summary_ms

ROOT = Path(__file__).resolve().parent.parent


def _load(port: int, bodies: list[bytes], tool: str, threads: int, per_thread: int, max_seconds: float) -> dict:
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    lock = threading.Lock()
    stop_at = time.monotonic() + max_seconds
    headers = {"Authorization": f"Bearer {corpus.BENCH_KEY}", "Content-Type": "application/json"}

    def client(offset: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine: list[float] = []
        codes: dict[int, int] = {}
        try:
            for i in range(per_thread):
                if time.monotonic() > stop_at:
                    break
                body = bodies[(offset * per_thread + i) % len(bodies)]
                t0 = time.perf_counter()
                conn.request("POST", f"/v1/tools/{tool}", body=body, headers=headers)
                response = conn.getresponse()
                response.read()
                mine.append(time.perf_counter() - t0)
                codes[response.status] = codes.get(response.status, 0) + 1
        finally:
            conn.close()
            with lock:
                latencies.extend(mine)
                for code, n in codes.items():
                    statuses[code] = statuses.get(code, 0) + n

    workers = [threading.Thread(target=client, args=(i,)) for i in range(threads)]
    started = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    wall = time.perf_counter() - started
    return {
        "tool": tool,
        "threads": threads,
        "requests": len(latencies),
        "wall_s": round(wall, 2),
        "requests_per_s": round(len(latencies) / wall, 1),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "latency": summary_ms(latencies),
    }


def run(size: int, threads: int, per_thread: int, max_seconds: float, workdir: Path, seed: int = 7) -> dict[str, Any]:
    db = corpus.build_db(corpus.CorpusParams(size, seed))
    data_dir = workdir / f"server-{size}"
    corpus.working_copy(db, data_dir)
    port = free_port()
    env = {
        **os.environ,
        "MNEMO_DATA_DIR": str(data_dir),
        "MNEMO_BACKEND": "sqlite",
        "MNEMO_BOOTSTRAP_KEY": corpus.BENCH_ADMIN_KEY,
        # as template.yaml sets it in Lambda; without it Powertools raises SchemaValidationError
        # when a burst of concurrent requests makes the shared metric set flush mid-request
        "POWERTOOLS_METRICS_NAMESPACE": "Mnemo",
    }
    mnemo = Path(sys.executable).with_name("mnemo")
    stderr_file = (workdir / "server-stderr.log").open("wb")
    proc = subprocess.Popen(
        [str(mnemo), "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=stderr_file,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_healthy(port, proc, 60, "mnemo serve", poll=0.2)
        searches = [json.dumps({"q": q}).encode() for _, q in corpus.queries(seed, 400)]
        adds = [
            json.dumps({"content": d.content, "kind": d.kind, "tags": d.tags}).encode()
            for d in corpus.generate(corpus.CorpusParams(200, seed + 2))
        ]
        _load(port, searches[:40], "memory_search", 2, 10, 10)  # warm-up
        search = _load(port, searches, "memory_search", threads, per_thread, max_seconds)
        add = _load(port, adds, "memory_add", threads, max(1, per_thread // 4), max_seconds)
    finally:
        stop_group(proc, timeout=10)
        stderr_file.close()
    errors = (workdir / "server-stderr.log").read_text(errors="replace")
    return {"size": size, "search": search, "add": add, "server_stderr_tail": errors[-2000:]}
