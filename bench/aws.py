"""The AWS backend in process: ``memory_add`` and the retrieval tools through ``Service.invoke``,
against DynamoDB (a moto server in a process of its own, so its work does not share this
process's GIL, as a remote service would not) and a real OpenSearch node with the production
``refresh_interval`` (1 s), over a corpus loaded in bulk (``bench.corpus``, 5 000 memories).

Measured per call: wall time, and the DynamoDB and OpenSearch requests it made
(``tests.support.aws_stack.RequestCounter``). The bench's key is the corpus's (read + write,
one team), authenticated once, as a warm Lambda instance would have it cached.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench import corpus
from bench.stats import summary_ms

ROOT = Path(__file__).resolve().parent.parent
SEARCH_TOOLS = (("memory_search", "q"), ("search_memory", "query"), ("recall", "query"))


def available() -> tuple[bool, str]:
    sys.path.insert(0, str(ROOT))
    from tests.support.opensearch_node import available as node_available

    return node_available()


@contextmanager
def moto_process() -> Iterator[str]:
    """``moto_server`` in its own process on a free loopback port."""
    import http.client

    from tests.support.aws_stack import free_port

    port = free_port()
    exe = Path(sys.executable).with_name("moto_server")
    proc = subprocess.Popen(
        [str(exe), "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
                conn.request("GET", "/moto-api/")
                conn.getresponse().read()
                conn.close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("moto_server did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def load_corpus(backend: Any, workspace_id: str, project_id: str, docs: list[corpus.Doc]) -> None:
    """The corpus straight into the table (``BatchWriteItem``) and the index (``_bulk``, external
    versions), then one refresh: loading is not what is measured."""
    from mnemo.backends.aws.index import doc_id, document
    from mnemo.backends.aws.items import memory_item
    from mnemo.models.records import MemoryRecord
    from opensearchpy import helpers

    records = []
    for i, doc in enumerate(docs):
        records.append(
            MemoryRecord(
                id=f"mem_01BENCH{i:018d}",
                workspace_id=workspace_id,
                project_id=project_id,
                content=doc.content,
                kind=doc.kind,
                tags=doc.tags,
                path=doc.path,
                team_id=doc.team_id,
                source="bench",
                expires_at=doc.expires_at,
                version=1,
                created_at=doc.created_at,
                updated_at=doc.created_at,
            )
        )
    table = backend.store.table
    for start in range(0, len(records), 25):
        request = {table: [{"PutRequest": {"Item": memory_item(r)}} for r in records[start : start + 25]]}
        while request:
            request = backend.dynamodb.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}
    index = backend.index
    index.ensure()
    actions = (
        {
            "_index": index.alias,
            "_id": doc_id(r.project_id, r.id),
            "_routing": r.project_id,
            "_version": r.version,
            "_version_type": "external",
            "_source": document(r),
        }
        for r in records
    )
    helpers.bulk(index.client, actions, chunk_size=500, raise_on_error=False)
    index.client.indices.refresh(index=index.alias)


class Measured:
    """Times calls and counts the requests each made."""

    def __init__(self, counter: Any) -> None:
        self.counter = counter
        self.samples: dict[str, list[float]] = {}
        self.requests: dict[str, Counter[str]] = {}
        self.calls: Counter[str] = Counter()

    def __call__(self, name: str, fn: Callable[[], Any]) -> Any:
        self.counter.reset()
        started = time.perf_counter()
        result = fn()
        self.samples.setdefault(name, []).append(time.perf_counter() - started)
        seen = self.requests.setdefault(name, Counter())
        seen.update({f"DynamoDB {op}": n for op, n in self.counter.dynamodb.items()})
        seen.update({f"OpenSearch {op}": n for op, n in self.counter.opensearch.items()})
        self.calls[name] += 1
        return result

    def report(self) -> dict[str, Any]:
        return {
            name: {
                "latency": summary_ms(samples),
                "requests_per_call": {
                    op: round(n / self.calls[name], 2) for op, n in sorted(self.requests[name].items())
                },
            }
            for name, samples in self.samples.items()
        }


def _measure(cfg: Any, size: int, n_adds: int, n_queries: int, seed: int) -> dict[str, Any]:
    from mnemo.backends.aws import AwsBackend
    from mnemo.models.records import RateLimits
    from mnemo.service import tenancy
    from mnemo.service.pipeline import Service

    from tests.support.aws_stack import RequestCounter

    backend = AwsBackend.from_settings(cfg)
    try:
        workspace, project = tenancy.create_workspace(backend, "bench")
        limits = RateLimits(search=corpus.MAX_PER_MINUTE, write=corpus.MAX_PER_MINUTE)
        backend.tenants.set_limits(workspace.id, limits)
        key = tenancy.create_key(
            backend, workspace.id, label="bench", scopes=["memory:read", "memory:write"], team_ids=["team-a"]
        ).plain
        started = time.perf_counter()
        load_corpus(backend, workspace.id, project.id, corpus.generate(corpus.CorpusParams(size, seed)))
        load_s = time.perf_counter() - started
        svc = Service(backend)
        caller = svc.authenticate(f"Bearer {key}")
        measured = Measured(RequestCounter(backend))

        docs = corpus.generate(corpus.CorpusParams(n_adds + 10, seed + 1))
        adds = [
            {k: v for k, v in {"content": d.content, "kind": d.kind, "tags": d.tags, "path": d.path}.items() if v}
            for d in docs
        ]
        for args in adds[:10]:  # warm-up: clients, the alias check, the tenant cache
            svc.invoke("memory_add", caller, args)
        for args in adds[10:]:
            measured("memory_add", lambda a=args: svc.invoke("memory_add", caller, a))

        queries = corpus.queries(seed, n_queries)
        for tool, field in SEARCH_TOOLS:
            for _, q in queries[:20]:
                svc.invoke(tool, caller, {field: q})
            for _, q in queries:
                measured(tool, lambda t=tool, f=field, q=q: svc.invoke(t, caller, {f: q}))
        return {"load_s": round(load_s, 1), "calls": measured.report()}
    finally:
        backend.close()


def run(size: int = 5000, n_adds: int = 60, n_queries: int = 300, seed: int = 7) -> dict[str, Any]:
    ok, reason = available()
    if not ok:
        return {"status": "not run", "reason": reason}
    from mnemo.backends.aws import Tables
    from mnemo.backends.aws.clients import dynamodb_client
    from mnemo.local.tables import create_tables

    from tests.support.aws_stack import aws_settings
    from tests.support.opensearch_node import OpenSearchNode, fetch

    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
        os.environ.setdefault(name, value)  # moto accepts any; never real credentials here
    fetch()
    node = OpenSearchNode().start()
    try:
        with moto_process() as dynamodb_url:
            # the production refresh interval: what a request waiting for a refresh waits for
            cfg = aws_settings(dynamodb_url, node.url, opensearch_refresh_interval="1s")
            create_tables(dynamodb_client(cfg), Tables.from_settings(cfg).by_logical_id())
            out = _measure(cfg, size, n_adds, n_queries, seed)
    finally:
        node.stop()
    return {"status": "done", "size": size, "refresh_interval": "1s", **out}


def markdown(res: dict[str, Any]) -> list[str]:
    lines = [
        f"In process through `Service.invoke`, {res['size']} memories loaded (in {res['load_s']} s), moto in its "
        f"own process, a real OpenSearch node with `refresh_interval` {res['refresh_interval']}.",
        "",
        "| call | n | p50 ms | p90 ms | p99 ms | max ms | requests per call |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, c in res["calls"].items():
        lat = c["latency"]
        reqs = ", ".join(f"{n:g} {op}" for op, n in c["requests_per_call"].items()) or "0"
        lines.append(
            f"| {name} | {lat['n']} | {lat['p50_ms']} | {lat['p90_ms']} | {lat['p99_ms']} | {lat['max_ms']} | {reqs} |"
        )
    return [*lines, ""]
