"""Service overhead: a retrieval call end to end through the real Lambda handler
(``functions.read.handler.lambda_handler`` with an API Gateway HTTP API v2 event) against the
bare backend queries that call issues, run side by side, query by query.

The bare queries are captured, not re-written: a warm-up call runs with ``set_trace_callback`` on
the backend's connection, and every SELECT that touches ``memories`` or the index's tables
(``postings``, ``index_terms``, ``index_stats``; with its parameters expanded) is kept; the timed
pass runs, query by query, the handler call and a direct ``execute(...).fetchall()`` of those
statements on the same connection, taking turns at going first (whichever runs second finds the
query's pages in SQLite's page cache). The index's own Python (which postings to read next, the
threshold) counts as the handler's.

It runs in its own interpreter (``python -m bench.overhead``) with stdout sent to /dev/null by
the parent, because the handler's Logger and Metrics write their JSON lines to stdout as they
do in Lambda — that cost is part of the handler's time, the terminal is not.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench import corpus
from bench.stats import summary_ms

ROOT = Path(__file__).resolve().parent.parent
#: the tables a retrieval call reads: the records and the index's
_TABLES = ("memories", "postings", "index_terms", "index_stats")


def _event(tool: str, body: dict[str, Any]) -> dict[str, Any]:
    event = json.loads((ROOT / "events" / "memory_search.json").read_text())
    event["routeKey"] = event["requestContext"]["routeKey"] = f"POST /v1/tools/{tool}"
    event["rawPath"] = event["requestContext"]["http"]["path"] = f"/v1/tools/{tool}"
    event["headers"]["authorization"] = f"Bearer {corpus.BENCH_KEY}"
    event["body"] = json.dumps(body, ensure_ascii=False)
    return event


def worker(data_dir: Path, size: int, n_queries: int, seed: int) -> dict[str, Any]:
    os.environ["MNEMO_BACKEND"] = "sqlite"
    os.environ["MNEMO_DATA_DIR"] = str(data_dir)
    from mnemo import runtime
    from mnemo.local.server import LocalContext

    from bench.search import retrieval_tools
    from functions.read.handler import lambda_handler

    context = LocalContext("ReadFunction")
    conn = runtime.service().ports.db.conn()  # type: ignore[attr-defined]
    qs = corpus.queries(seed, n_queries)
    out: dict[str, Any] = {"size": size, "tools": {}}
    for tool, field in retrieval_tools():
        events = [(cls, _event(tool, {field: q})) for cls, q in qs]
        captured: list[list[str]] = []
        for _, event in events:  # warm-up, capturing the statements
            statements: list[str] = []
            conn.set_trace_callback(statements.append)
            response = lambda_handler(event, context)
            conn.set_trace_callback(None)
            if response["statusCode"] != 200:
                raise RuntimeError(f"{tool}: {response['statusCode']} {response['body'][:200]}")
            captured.append(
                [
                    s
                    for s in statements
                    if s.lstrip().upper().startswith(("SELECT", "WITH")) and any(t in s for t in _TABLES)
                ]
            )
        handler_s: list[float] = []
        bare_s: list[float] = []
        clock = time.perf_counter
        for i, ((_, event), sqls) in enumerate(zip(events, captured, strict=True)):
            # Whichever runs second finds the query's pages in SQLite's cache: take turns.
            for first in ("handler", "bare") if i % 2 else ("bare", "handler"):
                t0 = clock()
                if first == "handler":
                    lambda_handler(event, context)
                    handler_s.append(clock() - t0)
                else:
                    for sql in sqls:
                        conn.execute(sql).fetchall()
                    bare_s.append(clock() - t0)
        out["tools"][tool] = {
            "handler": summary_ms(handler_s),
            "bare_sql": summary_ms(bare_s),
            "ratio_of_totals": round(sum(handler_s) / sum(bare_s), 2),
            "ratio_of_p50": round(summary_ms(handler_s)["p50_ms"] / summary_ms(bare_s)["p50_ms"], 2),
            "added_ms_per_call": round((sum(handler_s) - sum(bare_s)) / len(handler_s) * 1000, 3),
            "statements_per_call": round(sum(map(len, captured)) / len(captured), 2),
        }
    return out


def run(size: int, n_queries: int, workdir: Path, seed: int = 7) -> dict[str, Any]:
    """Runs :func:`worker` in a fresh interpreter over a copy of the cached corpus."""
    import subprocess

    db = corpus.build_db(corpus.CorpusParams(size, seed))
    data_dir = workdir / f"overhead-{size}"
    corpus.working_copy(db, data_dir)
    out_path = workdir / f"overhead-{size}.json"
    env = {**os.environ, "POWERTOOLS_LOG_LEVEL": "INFO"}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.overhead",
            str(data_dir),
            str(size),
            str(n_queries),
            str(seed),
            str(out_path),
        ],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=600,
    )
    return json.loads(out_path.read_text())  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("size", type=int)
    parser.add_argument("n_queries", type=int)
    parser.add_argument("seed", type=int)
    parser.add_argument("out", type=Path)
    a = parser.parse_args()
    a.out.write_text(json.dumps(worker(a.data_dir, a.size, a.n_queries, a.seed)))


if __name__ == "__main__":
    main()
