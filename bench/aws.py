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
from contextlib import AbstractContextManager, contextmanager
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
    """moto's server in its own process on a free loopback port, started as ``make serve-aws``
    starts it (``scripts/local_aws.py moto``: the test suite's patches, tests/support/aws_stack.py
    ``patch_moto``): moto's own ``TransactWriteItems`` deep-copies every table a transaction
    touches, so each ``memory_add`` (a transaction since deduplication) cost what moto had stored
    so far — 64 ms p50 / 684 ms p99 in one run — which DynamoDB does not; and moto's own ``Query``
    lists and sorts the whole table for every query."""
    import http.client

    from tests.support.aws_stack import free_port

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "scripts/local_aws.py", "moto", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
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


def load_corpus(
    backend: Any, workspace_id: str, project_id: str, docs: list[corpus.Doc], *, into_table: bool = True
) -> None:
    """The corpus straight into the index (``_bulk``, external versions, then one refresh) and,
    with ``into_table``, the table (``BatchWriteItem``): loading is not what is measured."""
    from mnemo.backends.aws.items import memory_item
    from mnemo.backends.aws.mapping import doc_id, document
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
    for start in range(0, len(records) if into_table else 0, 25):
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
        #: this process's CPU time per call (every thread: the search's pool thread too) — what a
        #: Lambda instance pays; moto's and OpenSearch's work runs in their own processes
        self.cpu: dict[str, list[float]] = {}
        self.requests: dict[str, Counter[str]] = {}
        self.calls: Counter[str] = Counter()

    def __call__(self, name: str, fn: Callable[[], Any]) -> Any:
        self.counter.reset()
        started, cpu = time.perf_counter(), time.process_time()
        result = fn()
        self.samples.setdefault(name, []).append(time.perf_counter() - started)
        self.cpu.setdefault(name, []).append(time.process_time() - cpu)
        seen = self.requests.setdefault(name, Counter())
        seen.update({f"DynamoDB {op}": n for op, n in self.counter.dynamodb.items()})
        seen.update({f"OpenSearch {op}": n for op, n in self.counter.opensearch.items()})
        self.calls[name] += 1
        return result

    def report(self) -> dict[str, Any]:
        return {
            name: {
                "latency": summary_ms(samples),
                "cpu": summary_ms(self.cpu[name]),
                "requests_per_call": {
                    op: round(n / self.calls[name], 2) for op, n in sorted(self.requests[name].items())
                },
            }
            for name, samples in self.samples.items()
        }


def bench_tenant(backend: Any, name: str) -> tuple[Any, Any, str]:
    """A workspace named ``name`` with the corpus's rate limits, its default project, and a
    read/write key of team-a (the corpus's team): (workspace, project, plain key)."""
    from mnemo.models.records import RateLimits
    from mnemo.service import tenancy

    workspace, project = tenancy.create_workspace(backend, name)
    backend.tenants.set_limits(workspace.id, RateLimits(search=corpus.MAX_PER_MINUTE, write=corpus.MAX_PER_MINUTE))
    key = tenancy.create_key(
        backend, workspace.id, label=name, scopes=["memory:read", "memory:write"], team_ids=["team-a"]
    ).plain
    return workspace, project, key


def _segments(index: Any) -> int:
    """Lucene segments behind the alias (primaries), after a refresh."""
    index.client.indices.refresh(index=index.alias)
    out = index.client.indices.segments(index=index.alias)
    return sum(
        len(copy["segments"])
        for data in out["indices"].values()
        for copies in data["shards"].values()
        for copy in copies
        if copy["routing"]["primary"]
    )


def _measure(cfg: Any, size: int, n_adds: int, n_queries: int, seed: int, in_table: bool) -> dict[str, Any]:
    from mnemo.backends.aws import AwsBackend
    from mnemo.backends.aws.index import OpenSearchIndex
    from mnemo.embedding import default_embedder
    from mnemo.models.records import MemoryRecord
    from mnemo.service.pipeline import Service

    from tests.support.aws_stack import RequestCounter
    from tests.support.stream import StreamDrain

    backend = AwsBackend.from_settings(cfg)
    try:
        workspace, project, key = bench_tenant(backend, "bench")
        started = time.perf_counter()
        # the corpus in the index only: its records are older than the read-your-writes window, so a
        # search's Query of the recent changes reads none of them on DynamoDB, which reads only the
        # key range asked; moto instead sorts and sizes every item of the partition for an index
        # Query (moto 5.2.5, ``Table.query``), which would make the figure moto's (``corpus_in_table``)
        load_corpus(
            backend, workspace.id, project.id, corpus.generate(corpus.CorpusParams(size, seed)), into_table=in_table
        )
        load_s = time.perf_counter() - started
        svc = Service(backend, embedder=default_embedder())
        caller = svc.authenticate(f"Bearer {key}")
        counter = RequestCounter(backend)
        measured = Measured(counter)
        index = backend.index

        def alone(on: bool) -> None:
            """Searches merged with the recent changes (the new path) or the index alone (the old one)."""
            window = cfg.search_recent_window_s if on else 0
            index.read_your_writes(backend.store, window_s=window, first_page=cfg.search_recent_page)

        # Searches, steady state (no change in the project within the window): each query through the
        # new path and the old one (the index alone), taking turns at going first
        queries = corpus.queries(seed, n_queries)
        for tool, field in SEARCH_TOOLS:
            for _, q in queries[:20]:
                svc.invoke(tool, caller, {field: q})
            for i, (_, q) in enumerate(queries):
                for variant in (("new", "before"), ("before", "new"))[i % 2]:
                    alone(variant == "new")
                    name = tool if variant == "new" else f"{tool} (before: the index alone)"
                    measured(name, lambda t=tool, f=field, q=q: svc.invoke(t, caller, {f: q}))
        alone(True)

        n_before = max(10, n_adds // 10)  # the old path takes a second per add
        docs = corpus.generate(corpus.CorpusParams(n_adds + 2 * n_before + 10, seed + 1))
        adds = [
            {k: v for k, v in {"content": d.content, "kind": d.kind, "tags": d.tags, "path": d.path}.items() if v}
            for d in docs
        ]
        for args in adds[:10]:  # warm-up: clients, the tenant cache
            svc.invoke("memory_add", caller, args)
        stream = StreamDrain(cfg, start="LATEST")  # the corpus was loaded into the index in bulk
        stream.drain(backend)  # sets the position: after the corpus and the warm-up

        # memory_add as it is now: the rate bucket and one PutItem
        for args in adds[10 : 10 + n_adds]:
            measured("memory_add", lambda a=args: svc.invoke("memory_add", caller, a))

        # ... and as it was (same run): the same add, then the request's own index write waiting
        # for the refresh; and with a forced refresh per write instead
        def add_then_index(a: dict[str, Any], writer: OpenSearchIndex) -> None:
            memory = svc.invoke("memory_add", caller, a).result.memory
            writer.upsert(MemoryRecord(**memory.model_dump(), workspace_id=workspace.id, project_id=project.id))

        segments: dict[str, int] = {}
        for label, refresh in (("before: + index write, refresh=wait_for", "wait_for"), ("forced refresh", "true")):
            writer = OpenSearchIndex(index.client, index.alias, refresh=refresh)
            writer.ensure()
            segments_before = _segments(index)
            first = 10 + n_adds + (n_before if refresh == "true" else 0)
            for args in adds[first : first + n_before]:
                measured(f"memory_add ({label})", lambda a=args, w=writer: add_then_index(a, w))
            segments[refresh] = _segments(index) - segments_before

        # Searches right after that burst of writes: every recent change is read and merged
        for _, q in queries[:60]:
            measured(
                f"memory_search (after {n_adds + 2 * n_before} writes in the window)",
                lambda q=q: svc.invoke("memory_search", caller, {"q": q}),
            )

        # The stream indexer: what it spends per change (the adds of the new path and the rest)
        counter.reset()
        started = time.perf_counter()
        records = stream.drain(backend)
        drain_s = time.perf_counter() - started
        per_change = {op: round(n / records, 2) for op, n in sorted(counter.opensearch.items())} if records else {}
        return {
            "load_s": round(load_s, 1),
            "calls": measured.report(),
            "indexer": {"stream_records": records, "seconds": round(drain_s, 2), "opensearch_per_change": per_change},
            "segments_added": {"wait_for": segments["wait_for"], "forced_refresh": segments["true"], "adds": n_before},
        }
    finally:
        backend.close()


@contextmanager
def local_stack(moto: Callable[[], AbstractContextManager[str]] = moto_process, **overrides: Any) -> Iterator[Any]:
    """The AWS backend's engines for a bench, run locally: moto's test credentials, the OpenSearch
    test node (fetched once), moto (``moto``: by default in its own process) and fresh tables on it;
    yields their settings (``aws_settings`` with ``overrides``). Stops the node after."""
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
        with moto() as dynamodb_url:
            cfg = aws_settings(dynamodb_url, node.url, **overrides)
            create_tables(dynamodb_client(cfg), Tables.from_settings(cfg).by_logical_id())
            yield cfg
    finally:
        node.stop()


def run(
    size: int = 5000, n_adds: int = 300, n_queries: int = 300, seed: int = 7, corpus_in_table: bool = False
) -> dict[str, Any]:
    ok, reason = available()
    if not ok:
        return {"status": "not run", "reason": reason}
    # the production refresh interval: what a request waiting for a refresh waits for, and the
    # index's own writes (the indexer's) not waiting for a refresh, as deployed
    with local_stack(opensearch_refresh_interval="1s", opensearch_refresh="false") as cfg:
        out = _measure(cfg, size, n_adds, n_queries, seed, corpus_in_table)
    return {"status": "done", "size": size, "refresh_interval": "1s", "corpus_in_table": corpus_in_table, **out}


def markdown(res: dict[str, Any]) -> list[str]:
    lines = [
        f"In process through `Service.invoke`, {res['size']} memories loaded (in {res['load_s']} s) into the index"
        + (" and the table" if res.get("corpus_in_table", True) else "")
        + ", moto in its "
        f"own process, a real OpenSearch node with `refresh_interval` {res['refresh_interval']}. "
        + (
            "The corpus is in the index only (older than the read-your-writes window, DynamoDB's Query of the "
            "recent changes would read none of it; moto sorts and sizes every item of the partition for an "
            "index Query, so with the corpus in the table the figure is moto's: bench/results/"
            "aws-after-corpus-in-table.md). "
            if not res.get("corpus_in_table", True)
            else ""
        )
        + "Searches first, in "
        "steady state (no change in the project within the read-your-writes window), each query through the "
        "current path (index query beside one consistent Query of the recent changes, merged) and *before* "
        "(the index alone, as searches were), taking turns at going first. Then memory_add now (no OpenSearch "
        "request), *before* (the same add plus the request's own index write with `refresh=wait_for`, as the "
        "write path was) and with a forced refresh per write (`refresh=true`); then searches right after those "
        "writes (all in the window).",
        "",
        "",
        "*CPU*: this process's CPU time per call, every thread (what a Lambda instance pays; moto and "
        "OpenSearch run in their own processes).",
        "",
        "| call | n | p50 ms | p90 ms | p99 ms | max ms | CPU p50 ms | CPU p99 ms | requests per call |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, c in res["calls"].items():
        lat = c["latency"]
        cpu = c.get("cpu") or {}
        reqs = ", ".join(f"{n:g} {op}" for op, n in c["requests_per_call"].items()) or "0"
        lines.append(
            f"| {name} | {lat['n']} | {lat['p50_ms']} | {lat['p90_ms']} | {lat['p99_ms']} | {lat['max_ms']} "
            f"| {cpu.get('p50_ms', '')} | {cpu.get('p99_ms', '')} | {reqs} |"
        )
    calls = res["calls"]
    lines += ["", "Same run, ratios of p50:", ""]
    for tool, _ in SEARCH_TOOLS:
        before = calls.get(f"{tool} (before: the index alone)")
        if before and tool in calls:
            ratio = calls[tool]["latency"]["p50_ms"] / before["latency"]["p50_ms"]
            line = f"- {tool}: {ratio:.2f}x the index alone"
            if "cpu" in calls[tool] and before.get("cpu", {}).get("p50_ms"):
                line += f" (CPU {calls[tool]['cpu']['p50_ms'] / before['cpu']['p50_ms']:.2f}x)"
            lines.append(line)
    old = calls.get("memory_add (before: + index write, refresh=wait_for)")
    if old and "memory_add" in calls:
        ratio = old["latency"]["p50_ms"] / calls["memory_add"]["latency"]["p50_ms"]
        lines.append(f"- memory_add: before ÷ now = {ratio:.1f}")
    indexer = res.get("indexer")
    if indexer:
        lines += [
            "",
            f"The stream indexer then delivered {indexer['stream_records']} stream records in {indexer['seconds']} s: "
            f"OpenSearch requests per change {indexer['opensearch_per_change']}.",
        ]
    seg = res.get("segments_added")
    if seg:
        lines += [
            "",
            f"Lucene segments added (primaries, after a refresh) by {seg['adds']} writes: {seg['wait_for']} with "
            f"`refresh=wait_for`, {seg['forced_refresh']} with a forced refresh per write.",
        ]
    return [*lines, ""]
