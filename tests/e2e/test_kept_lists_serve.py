"""``mnemo serve``'s handler instances are processes, each with the posting lists its index keeps
(``backends/sqlite/kept.py``): a memory added through one instance must count in every other's
next search. Real ``mnemo serve`` with three instances, calls made concurrently so that several
instances keep lists; after each batch of adds, every recall's answer is the one an index that keeps
nothing gives over the same database file (the reference, in this process)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from mnemo.backends.sqlite import SqliteBackend
from mnemo.service.pipeline import Service

from tests.support.http import call
from tests.support.server import RunningServer, start_server, stop_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

WORDS = ["alpha", "beta", "gamma", "delta", "omega", "kappa", "deploys", "deployment", "数据库", "缓存"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, Path]]:
    data = tmp_path_factory.mktemp("kept-serve")
    limits = {"MNEMO_SEARCH_PER_MINUTE": "100000", "MNEMO_WRITE_PER_MINUTE": "100000"}
    running = start_server(data, {"MNEMO_EMBEDDER": "none", **limits}, ("--workers", "3"))
    yield running, data / "mnemo.db"
    stop_server(running)


def _add(server: RunningServer, content: str) -> None:
    reply = call(server, "memory_add", {"content": content})
    assert reply.status == 200, reply.raw


def _ids(body: dict[str, Any]) -> list[str]:
    return [item["reference"] for item in body["results"]]


def test_adds_through_one_instance_count_in_every_instances_search(served) -> None:
    server, path = served
    rng = random.Random(3)
    contents = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8))) for _ in range(400)]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda content: _add(server, content), contents))
    queries = [{"query": " ".join(rng.sample(WORDS, rng.randint(3, 6))), "mode": "lexical"} for _ in range(24)]
    reference = SqliteBackend(path)
    reference.index.kept = None  # SQLite's own lookups: nothing kept
    service = Service(reference, embedder=None)
    caller = service.authenticate(f"Bearer {server.key}")
    try:
        for batch in range(3):
            # Every instance answers some of the queries (they run four at a time) and keeps lists
            with ThreadPoolExecutor(4) as pool:
                replies = list(pool.map(lambda q: call(server, "recall", q), queries * 3))
            expected = [_ids(service.invoke("recall", caller, q).result.model_dump(mode="json")) for q in queries]
            for n, reply in enumerate(replies):
                assert reply.status == 200, reply.raw
                assert _ids(reply.body) == expected[n % len(queries)], (batch, queries[n % len(queries)])
            # When memories holding the queries' words are added (through whichever instance is free)
            for q in queries[batch::3]:
                _add(server, q["query"])
                _add(server, q["query"] + " " + q["query"].split()[0])
    finally:
        reference.close()
