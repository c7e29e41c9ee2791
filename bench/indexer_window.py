"""The stream indexer and the read-your-writes window under bursts (issue 29 item 4), on the AWS
backend run locally: moto server (its own process) and a real OpenSearch node on 127.0.0.1.

**Indexer.** Stream records as the table's stream carries them (``INSERT`` images of
``items.memory_item``, memories of ``--projects`` projects) are handed to the indexer's own record
handler (``functions.indexer.handler.record_handler``, through Powertools' ``BatchProcessor`` as the
handler does) in batches of each ``--batches`` size. With a parallelisation factor N, each batch's
records are split by partition key (the project: Lambda keeps one key's records in order on one
of the N concurrent batchers) into N groups run at once on N threads — one thread for one
concurrent invocation of the function, each with its own ``BatchProcessor``. Reported: records a
second, and each batch's wall time. The index's write is one request a record (``refresh=false``,
as template.yaml sets for the indexer).

**Window.** A project receives a burst of ``--window`` changes — memories written to the table
with their change log entries (``items.change_item``), not yet in the index, as right after a burst
the indexer has not delivered — over ``--size`` memories already indexed; then ``--searches``
``memory_search`` calls (corpus queries) are timed: wall and this process's CPU, the first search
of the burst (the process has analysed none of its changes) apart from the others.

moto enforces no DynamoDB limit (a partition's 1,000 writes / 3,000 reads a second, a stream
shard's throughput): none can show here; docs/scale.md calculates them.

    python -m bench.indexer_window --records 1000 --batches 10,100,1000 --factors 1,4,10 --bulk \
        --window 100,1000 --label 2026-12-02-indexer-window

With ``--bulk``, each batch size is also measured as one ``_bulk`` request a batch of the same
documents — the lever docs/scale.md names, not built — for comparison.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench import corpus
from bench.aws import available, bench_tenant, load_corpus, local_stack
from bench.stats import summary_ms

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
MOTO_NOTE = (
    "moto enforces no DynamoDB limit — not a partition's 1,000 writes / 3,000 reads a second, not a stream "
    "shard's read throughput — so none shows here; docs/scale.md calculates them. DynamoDB time here is "
    "moto's (one Python process), far above DynamoDB's few milliseconds."
)


def _records(docs: list[corpus.Doc], workspace_id: str, projects: list[str], tag: str) -> list[Any]:
    from mnemo.models.common import utc_now
    from mnemo.models.records import MemoryRecord

    now = utc_now()
    return [
        MemoryRecord(
            id=f"mem_01{tag}{i:018d}",
            workspace_id=workspace_id,
            project_id=projects[i % len(projects)],
            content=doc.content,
            kind=doc.kind,
            tags=doc.tags,
            path=doc.path,
            team_id=doc.team_id,
            source="bench",
            version=1,
            created_at=now,
            updated_at=now,
        )
        for i, doc in enumerate(docs)
    ]


def _stream_record(record: Any, n: int) -> dict[str, Any]:
    from mnemo.backends.aws.items import memory_item

    item = memory_item(record)
    return {
        "eventID": f"{n:032x}",
        "eventName": "INSERT",
        "eventSource": "aws:dynamodb",
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:000000000000:table/bench/stream/0",
        "dynamodb": {
            "ApproximateCreationDateTime": time.time(),
            "Keys": {"pk": item["pk"], "sk": item["sk"]},
            "NewImage": item,
            "SequenceNumber": f"{n:021d}",
            "StreamViewType": "NEW_AND_OLD_IMAGES",
        },
    }


def _invoke(records: list[dict[str, Any]]) -> int:
    """One invocation of the indexer's record handler over ``records``: the failures it reports."""
    from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
    from mnemo.local.stream import _context
    from mnemo.observability import metrics

    from functions.indexer.handler import record_handler

    out = process_partial_response(
        event={"Records": records},
        record_handler=record_handler,
        processor=BatchProcessor(event_type=EventType.DynamoDBStreams),
        context=_context(),
    )
    metrics.clear_metrics()  # the handler's log_metrics flushes them per invocation (to the log)
    return len(out.get("batchItemFailures", []))


def _groups(batch: list[dict[str, Any]], factor: int) -> list[list[dict[str, Any]]]:
    """The batch's records by partition key over ``factor`` concurrent batchers, in order."""
    groups: list[list[dict[str, Any]]] = [[] for _ in range(factor)]
    for record in batch:
        key = record["dynamodb"]["Keys"]["pk"]["S"]
        groups[zlib.crc32(key.encode()) % factor].append(record)
    return [g for g in groups if g]


def indexer(records: list[dict[str, Any]], batch_size: int, factor: int) -> dict[str, Any]:
    batches = [records[i : i + batch_size] for i in range(0, len(records), batch_size)]
    times: list[float] = []
    failures = 0
    pool = ThreadPoolExecutor(max_workers=factor)
    started, cpu = time.perf_counter(), time.process_time()
    try:
        for batch in batches:
            began = time.perf_counter()
            failures += sum(pool.map(_invoke, _groups(batch, factor)))
            times.append(time.perf_counter() - began)
    finally:
        pool.shutdown()
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "batch_size": batch_size,
        "factor": factor,
        "records": len(records),
        "seconds": round(wall, 2),
        "records_per_s": round(len(records) / wall, 1),
        "cpu_ms_per_record": round(cpu * 1000 / len(records), 2),
        "batch": summary_ms(times),
        "failures": failures,
    }


def bulk(backend: Any, records: list[Any], batch_size: int) -> dict[str, Any]:
    """The lever not built: the same documents, one ``_bulk`` request a batch (external versions,
    as the indexer writes them), for comparison with one request a record."""
    from mnemo.backends.aws.mapping import doc_id, document
    from opensearchpy import helpers

    index = backend.index
    times: list[float] = []
    started, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(records), batch_size):
        began = time.perf_counter()
        actions = [
            {
                "_index": index.alias,
                "_id": doc_id(r.project_id, r.id),
                "_routing": r.project_id,
                "_version": r.version,
                "_version_type": "external_gte",
                "_source": document(r),
            }
            for r in records[start : start + batch_size]
        ]
        helpers.bulk(index.client, actions, chunk_size=batch_size, raise_on_error=False)
        times.append(time.perf_counter() - began)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "batch_size": batch_size,
        "factor": "_bulk",
        "records": len(records),
        "seconds": round(wall, 2),
        "records_per_s": round(len(records) / wall, 1),
        "cpu_ms_per_record": round(cpu * 1000 / len(records), 2),
        "batch": summary_ms(times),
        "failures": 0,
    }


def window(backend: Any, svc: Any, caller: Any, workspace_id: str, n: int, searches: int) -> dict[str, Any]:
    from mnemo.backends.aws.items import change_item, memory_item
    from mnemo.ports import Scope
    from mnemo.service import tenancy

    project = tenancy.create_project(backend, workspace_id, f"window-{n}", f"window {n}")
    records = _records(corpus.generate(corpus.CorpusParams(n, 100 + n)), workspace_id, [project.id], f"W{n}")
    scope = Scope(workspace_id, project.id)
    table = backend.store.table
    puts = []
    for r in records:
        puts.append({"PutRequest": {"Item": change_item(scope, r.id, r.updated_at)}})
        puts.append({"PutRequest": {"Item": memory_item(r)}})
    for start in range(0, len(puts), 25):
        request = {table: puts[start : start + 25]}
        while request:
            request = backend.dynamodb.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}
    queries = [q for _, q in corpus.queries(5, searches)]
    walls, cpus = [], []
    for q in queries:
        began, cpu = time.perf_counter(), time.process_time()
        svc.invoke("memory_search", caller, {"q": q, "project": project.id, "limit": 10})
        walls.append(time.perf_counter() - began)
        cpus.append(time.process_time() - cpu)
    return {
        "changes": n,
        "searches": len(queries),
        "first": {"wall_ms": round(walls[0] * 1000, 1), "cpu_ms": round(cpus[0] * 1000, 1)},
        "rest": {"wall": summary_ms(walls[1:]), "cpu": summary_ms(cpus[1:])},
        "all": {"wall": summary_ms(walls), "cpu": summary_ms(cpus)},
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    ok, reason = available()
    if not ok:
        return {"status": "not run", "reason": reason}
    from mnemo import runtime
    from mnemo.backends.aws import AwsBackend
    from mnemo.embedding import default_embedder
    from mnemo.service.pipeline import Service

    out: dict[str, Any] = {"status": "done", "indexer": [], "window": []}
    # loading a burst on moto here takes longer than 60 s: a window of 10 minutes
    refresh = {"opensearch_refresh_interval": "1s", "opensearch_refresh": "false"}
    with local_stack(**refresh, search_recent_window_s=600) as cfg:
        backend = AwsBackend.from_settings(cfg)
        try:
            workspace, project, key = bench_tenant(backend, "bench")
            svc = Service(backend, embedder=default_embedder())
            caller = svc.authenticate(f"Bearer {key}")
            backend.index.ensure()
            projects = [f"prj_bench{i:03d}" for i in range(args.projects)]
            docs = corpus.generate(corpus.CorpusParams(args.records, 23))
            threading.current_thread().name = "bench"
            with runtime.using(svc, cfg):
                _invoke([_stream_record(r, 0) for r in _records(docs[:20], workspace.id, projects, "WARM")])
                runs = 0
                for batch_size in args.batches:
                    for factor in args.factors:
                        runs += 1
                        tag = f"B{batch_size}F{factor}"
                        stream = [
                            _stream_record(r, runs * 10**7 + i)
                            for i, r in enumerate(_records(docs, workspace.id, projects, tag))
                        ]
                        res = indexer(stream, batch_size, factor)
                        out["indexer"].append(res)
                        print(json.dumps(res), flush=True)
                    if args.bulk:
                        res = bulk(backend, _records(docs, workspace.id, projects, f"K{batch_size}"), batch_size)
                        out["indexer"].append(res)
                        print(json.dumps(res), flush=True)
            if args.window:
                base = corpus.generate(corpus.CorpusParams(args.size, 7))
                load_corpus(backend, workspace.id, project.id, base, into_table=False)
                for n in args.window:
                    res = window(backend, svc, caller, workspace.id, n, args.searches)
                    out["window"].append(res)
                    print(json.dumps(res), flush=True)
        finally:
            backend.close()
    return out


def markdown(res: dict[str, Any], command: str) -> str:
    lines = [
        "# The stream indexer and the read-your-writes window under bursts (bench/indexer_window.py)",
        "",
        f"`{command}`",
        "",
        MOTO_NOTE,
        "",
    ]
    if res["indexer"]:
        lines += [
            "Indexer: stream records through the indexer's record handler, one index request a record; factor N = "
            "the batch split by project over N concurrent invocations (threads of this process).",
            "",
            "| batch size | factor | records | records/s | CPU ms/record | batch p50 / p99 ms | failures |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in res["indexer"]:
            lines.append(
                f"| {r['batch_size']} | {r['factor']} | {r['records']} | {r['records_per_s']} "
                f"| {r['cpu_ms_per_record']} | {r['batch']['p50_ms']} / {r['batch']['p99_ms']} | {r['failures']} |"
            )
        lines.append("")
    if res["window"]:
        lines += [
            "Window: `memory_search` right after a burst of changes not yet indexed (table + change log).",
            "",
            "| changes | first search wall / CPU ms | next searches wall p50 / p99 ms | CPU p50 / p99 ms "
            "| all searches wall p50 / p99 ms | CPU p50 / p99 ms |",
            "|---|---|---|---|---|---|",
        ]
        for w in res["window"]:
            cells = [f"{w['changes']}", f"{w['first']['wall_ms']} / {w['first']['cpu_ms']}"]
            for part in (w["rest"], w["all"]):
                for what in ("wall", "cpu"):
                    cells.append(f"{part[what]['p50_ms']} / {part[what]['p99_ms']}")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join([*lines, ""])


def main(argv: list[str] | None = None) -> int:
    def ints(value: str) -> list[int]:
        return [int(x) for x in value.split(",") if x.strip()]

    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--records", type=int, default=2000, help="stream records per indexer run")
    parser.add_argument("--projects", type=int, default=20, help="projects (partition keys) they belong to")
    parser.add_argument("--batches", type=ints, default=[10, 100, 1000], help="batch sizes")
    parser.add_argument("--factors", type=ints, default=[1, 4, 10], help="parallelisation factors")
    parser.add_argument("--bulk", action="store_true", help="also one _bulk request a batch (not built)")
    parser.add_argument("--window", type=ints, default=[100, 1000], help="changes in the window (bursts)")
    parser.add_argument("--size", type=int, default=2000, help="memories indexed before the window's bursts")
    parser.add_argument("--searches", type=int, default=20, help="searches timed after each burst")
    parser.add_argument("--label", default="", help="write bench/results/<label>.md and .json")
    args = parser.parse_args(argv)
    res = run(args)
    if res["status"] != "done":
        print(res)
        return 1
    command = "python -m bench.indexer_window " + shlex.join(argv if argv is not None else sys.argv[1:])
    text = markdown(res, command)
    print(text)
    if args.label:
        (RESULTS / f"{args.label}.md").write_text(text)
        (RESULTS / f"{args.label}.json").write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
