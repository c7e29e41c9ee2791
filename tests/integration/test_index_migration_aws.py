"""Moving the index behind the alias to the ``hnsw`` vector layout with no downtime
(``mnemo.backends.aws.reindex``; docs/operations.md, "Changing the index's mapping").

An index of the ``exact`` layout holds a project's memories; while one thread keeps adding memories
through the service, one keeps the stream indexer draining, and one keeps searching (a lexical
``search_memory`` for a just-acknowledged memory, a hybrid ``recall`` of an older one's content),
the migration is started, stopped after one page, and started again to the end. Every call must
answer, every acknowledged memory must be found the moment its add returned (read-your-writes),
and afterwards the alias must stand on the new index, with the HNSW mapping, holding every memory,
and the searches must have used the ``knn`` query. moto server + the session's OpenSearch node.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from mnemo.backends.aws import AwsBackend, Tables
from mnemo.backends.aws.index import OpenSearchIndex
from mnemo.backends.aws.mapping import DEFAULT_DIM, IndexSetup, layout_of, vector_field
from mnemo.backends.aws.reindex import IndexMigration
from mnemo.embedding import default_embedder
from mnemo.models.records import RateLimits
from mnemo.service import tenancy
from mnemo.service.pipeline import Service

from tests.contract.conftest import new_tenant
from tests.support.stream import StreamDrain

pytestmark = [pytest.mark.slow, pytest.mark.aws]

#: how long a writer trusts what it read of the layout and the write targets, here
TTL_S = 0.5
DEADLINE_S = 120.0


def _wait(condition: Any, what: Any, deadline_s: float = DEADLINE_S) -> None:
    end = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"not within {deadline_s:g} s: {what()}")
        time.sleep(0.05)


@dataclass
class Traffic:
    """The three threads' shared state: acknowledged memories, calls made, failures seen."""

    acked: list[tuple[str, str, str]] = field(default_factory=list)  # (id, token, content)
    searches: int = 0
    knn_searches: int = 0
    failures: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def fail(self, what: str) -> None:
        with self.lock:
            self.failures.append(what)


@pytest.fixture
def stack(aws_stack):
    """Tables and an alias of its own (the back-fill copies every memory of the table: on the
    session's table, every test's before it, into an HNSW index — 227 s in a CI run): an
    ``exact`` index, writers that re-read the write targets and searchers that ask ``knn`` again
    every ``TTL_S``, the stream drained into this backend."""
    from tests.support.aws_stack import own_stack

    with own_stack(aws_stack, opensearch_vectors="exact") as cfg:
        yield from _stack(cfg)


def _stack(cfg: Any) -> Any:
    alias = cfg.opensearch_index
    base = AwsBackend.from_settings(cfg)
    index = OpenSearchIndex(
        base.index.client,
        alias,
        refresh=cfg.opensearch_refresh,
        refresh_interval=cfg.opensearch_refresh_interval,
        vectors="exact",
        layout_ttl_s=TTL_S,
        knn_retry_s=TTL_S,
    )
    backend = AwsBackend(base.dynamodb, index, Tables.from_settings(cfg))
    drain = StreamDrain(cfg)
    yield cfg, backend, drain
    backend.close()


def _count_knn(client: Any, traffic: Traffic) -> None:
    """Count the searches the ``knn`` query answered (a wrapper around the client's transport)."""
    transport = client.transport
    original = transport.perform_request

    def perform_request(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        out = original(method, url, *args, **kwargs)  # (a refused knn query raises: not counted)
        body = kwargs.get("body")
        if url.endswith("/_search") and isinstance(body, dict) and "knn" in (body.get("query") or {}):
            with traffic.lock:
                traffic.knn_searches += 1
        return out

    transport.perform_request = perform_request


def test_moving_to_hnsw_under_load_loses_no_search_and_no_write(stack):
    cfg, backend, drain = stack
    svc = Service(backend, embedder=default_embedder())
    tenant = new_tenant(svc)
    tenancy.set_limits(backend, tenant.workspace_id, RateLimits(search=1_000_000, write=1_000_000))
    traffic = Traffic()
    _count_knn(backend.index.client, traffic)

    def add(n: int) -> None:
        token = f"tok{uuid.uuid4().hex[:10]}"
        content = f"migration note {n} about {token} and the lantern harbour"
        memory = tenant.call("memory_add", content=content).memory
        with traffic.lock:
            traffic.acked.append((memory.id, token, content))

    # Given an index of the exact layout, behind the alias, holding 40 memories
    for n in range(40):
        add(n)
    drain.drain(backend)
    client = backend.index.client
    assert set(client.indices.get_alias(index=cfg.opensearch_index, name=cfg.opensearch_index)) == {
        f"{cfg.opensearch_index}-v1"
    }

    def writer() -> None:
        n = 40
        while not traffic.stop.is_set():
            try:
                add(n)
            except Exception as exc:  # every failure is the test's finding
                traffic.fail(f"add: {type(exc).__name__}: {exc}")
            n += 1
            time.sleep(0.1)

    def indexer() -> None:
        while not traffic.stop.is_set():
            try:
                drain.drain(backend)
            except Exception as exc:
                traffic.fail(f"indexer: {type(exc).__name__}: {exc}")
            time.sleep(0.05)

    def searcher() -> None:
        rng = random.Random(7)
        while not traffic.stop.is_set():
            with traffic.lock:
                latest, older = traffic.acked[-1], rng.choice(traffic.acked)
            try:
                found = tenant.call("search_memory", query=latest[1]).results
                if latest[0] not in {r.reference for r in found}:
                    traffic.fail(f"search_memory lost acknowledged {latest[0]}")
                recalled = tenant.call("recall", query=older[2], limit=10).results
                if older[0] not in {r.reference for r in recalled}:
                    traffic.fail(f"recall lost acknowledged {older[0]}")
            except Exception as exc:
                traffic.fail(f"search: {type(exc).__name__}: {exc}")
            with traffic.lock:
                traffic.searches += 1

    threads = [threading.Thread(target=f, daemon=True) for f in (writer, indexer, searcher)]
    for thread in threads:
        thread.start()
    try:
        _wait(lambda: traffic.searches >= 5, lambda: "searches under way")

        # When the migration runs (its own client set-up, as the command's), is stopped after one
        # page of the back-fill, and is started again to the end
        job_setup = IndexSetup(client, cfg.opensearch_index)
        job = IndexMigration(
            backend.dynamodb, cfg.memories_table, job_setup, vectors="hnsw", segments=2, page=10, settle_s=4 * TTL_S
        )
        acked_at_start = len(traffic.acked)
        first = job.run(max_pages=1)
        assert not first.switched and first.target == f"{cfg.opensearch_index}-v2"
        second = job.run()
        assert second.switched and second.target == first.target
        assert first.indexed + second.indexed + second.kept >= 40
        acked_at_switch = len(traffic.acked)
        searches_at_switch = traffic.searches
        assert traffic.knn_searches == 0  # the exact layout refused every knn query until the switch

        # (traffic goes on until the searches have used the new layout for a while)
        def state() -> str:
            calls = f"{traffic.searches} searches ({traffic.knn_searches} knn), {len(traffic.acked)} adds"
            return f"{calls}, failures {traffic.failures[:3]}"

        _wait(lambda: traffic.knn_searches >= 10, lambda: f"knn searches after the switch; {state()}")
        _wait(lambda: traffic.searches >= searches_at_switch + 10, lambda: f"searches after the switch; {state()}")
    finally:
        traffic.stop.set()
        for thread in threads:
            thread.join(timeout=60)

    # Then every call answered and found what was acknowledged before it
    assert traffic.failures == []
    assert acked_at_switch > acked_at_start  # writes were acknowledged during the migration
    # and the alias stands on v2 alone, with the HNSW mapping, v1 kept
    alias = cfg.opensearch_index
    assert set(client.indices.get_alias(index=alias, name=alias)) == {f"{alias}-v2"}
    assert not client.indices.exists_alias(index=f"{alias}-next", name=f"{alias}-next")
    mapping = client.indices.get_mapping(index=f"{alias}-v2")[f"{alias}-v2"]["mappings"]
    assert layout_of(mapping) == "hnsw"
    assert mapping["properties"][vector_field(DEFAULT_DIM)]["method"]["engine"] == "lucene"
    assert client.indices.exists(index=f"{alias}-v1")

    # and, once the stream is drained, v2 holds every acknowledged memory
    drain.drain(backend)
    want = {memory_id for memory_id, _, _ in traffic.acked}

    def held() -> set[str]:
        client.indices.refresh(index=f"{alias}-v2")
        live = [{"term": {"deleted": False}}, {"term": {"project_id": tenant.project.id}}]
        body = {"size": 10_000, "query": {"bool": {"filter": live}}, "_source": ["id"]}
        hits = client.search(index=f"{alias}-v2", body=body)["hits"]["hits"]
        return {hit["_source"]["id"] for hit in hits}

    _wait(lambda: want <= held(), lambda: f"v2 holds every acknowledged memory: {len(want - held())} missing")
    assert held() == want
