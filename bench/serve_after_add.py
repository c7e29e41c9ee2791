"""``mnemo serve`` as an agent meets it after it saves: a memory_add, then — once the memory's vector is
stored (made after the answer by the handler instance that served the add) — a recall of a new
question, again and again, over one kept-alive HTTP connection (REST ``/v1/tools/<name>``).

    python -m bench.serve_after_add [--size 100000] [--calls 100] [--db FILE] [--label NAME]

The server runs as a subprocess (``python -m mnemo.local.cli serve``: a tree's ``shared/`` first on
``PYTHONPATH`` runs that tree) over a copy of callsplit's corpus (``--db``: another corpus file) and its
saved HNSW graph, with the user's defaults (its handler instances, the default embedder). The vector is
waited for through a read-only connection of this process, polled every 5 ms with a deadline, not
timed; then the recall is sent. Per call: the client's wall time (the first tenth not counted).

Writes ``bench/results/<date>-serve-after-add-<label>.{json,md}``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from bench import corpus, resultfiles
from bench.processes import free_port, stop_group, wait_healthy
from bench.stats import summary_ms

ROOT = Path(__file__).resolve().parent.parent


def _stored(db: Path, memory_id: str, deadline_s: float) -> None:
    uri = f"file:{db}?mode=ro"
    end = time.monotonic() + deadline_s
    with closing(sqlite3.connect(uri, uri=True, timeout=30)) as conn:
        while True:
            row = conn.execute("SELECT vec IS NOT NULL FROM memories WHERE id = ?", (memory_id,)).fetchone()
            if row and row[0]:
                return
            if time.monotonic() > end:
                raise RuntimeError(f"no vector for {memory_id} within {deadline_s:g} s")
            time.sleep(0.005)


def run(size: int, n: int, source: Path | None) -> dict[str, Any]:
    from bench import callsplit

    db = source or callsplit.prepared_corpus(size, os.environ.get("MNEMO_EMBEDDER", "minilm"))
    contents = corpus.generate(corpus.CorpusParams(n + 50, 13))
    questions = [q for _, q in corpus.queries(17, n)]
    warmup = max(1, n // 10)
    with tempfile.TemporaryDirectory(prefix="mnemo-serve-after-add-") as tmp:
        data_dir = Path(tmp) / "data"
        copy = callsplit.working_copy(db, data_dir)
        graph = db.with_suffix(".ann")
        if graph.is_dir():
            shutil.copytree(graph, Path(str(copy) + ".ann"))
        port = free_port()
        env = {**os.environ, "MNEMO_DATA_DIR": str(data_dir), "MNEMO_BACKEND": "sqlite"}
        env.setdefault("MNEMO_EMBEDDER", "minilm")
        log = (Path(tmp) / "serve.log").open("wb")
        proc = subprocess.Popen(
            [sys.executable, "-m", "mnemo.local.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        samples: dict[str, list[float]] = {"memory_add": [], "recall after an add": []}
        try:
            wait_healthy(port, proc, 120, "mnemo serve", poll=0.2)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            headers = {"Authorization": f"Bearer {corpus.BENCH_KEY}", "Content-Type": "application/json"}

            def call(tool: str, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
                t0 = time.perf_counter()
                conn.request("POST", f"/v1/tools/{tool}", body=json.dumps(arguments), headers=headers)
                response = conn.getresponse()
                body = response.read()
                took = time.perf_counter() - t0
                if response.status != 200:
                    raise RuntimeError(f"{tool}: {response.status} {body[:300]!r}")
                return took, json.loads(body)

            for _ in range(20):  # the graph loaded, the first calls' imports paid
                call("recall", {"query": "warm up the graph"})
            for i in range(n):
                doc = contents[i]
                took_add, added = call("memory_add", {"content": doc.content, "kind": doc.kind, "tags": doc.tags})
                _stored(copy, added["memory"]["id"], 60)
                took_recall, _ = call("recall", {"query": questions[i]})
                if i >= warmup:
                    samples["memory_add"].append(took_add)
                    samples["recall after an add"].append(took_recall)
            conn.close()
        finally:
            stop_group(proc)
            log.close()
    return {
        "size": size,
        "calls": n,
        "warmup": warmup,
        "corpus": db.name,
        "load_average": os.getloadavg()[0],
        "tools": {name: summary_ms(values) for name, values in samples.items()},
    }


def markdown(res: dict[str, Any]) -> str:
    lines = [
        f"# mnemo serve after an add: {res['size']:,} memories",
        "",
        f"`{res['command']}` ({res['date']}; commit {res['commit']}; corpus `{res['corpus']}`). {res['calls']} rounds "
        f"(a memory_add; once its vector is stored, a recall of a new question), the first {res['warmup']} not "
        f"counted; one kept-alive connection; load average {res['load_average']:.2f} after. Client wall ms:",
        "",
        "| call | p50 | p90 | p99 |",
        "|---|---:|---:|---:|",
    ]
    for name, s in res["tools"].items():
        lines.append(f"| {name} | {s['p50_ms']} | {s['p90_ms']} | {s['p99_ms']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m bench.serve_after_add")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--db", type=Path, help="a corpus file to copy instead of callsplit's")
    parser.add_argument("--label")
    a = parser.parse_args(argv)
    res = run(a.size, a.calls, a.db)
    resultfiles.stamp(res, "python -m bench.serve_after_add " + " ".join(argv))
    resultfiles.write(res, "serve-after-add", a.label or str(a.size), markdown(res))
    print(markdown(res))


if __name__ == "__main__":
    main()
