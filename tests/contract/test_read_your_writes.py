"""Read your writes while the index lags (docs/aws.md, "Read your writes").

On AWS the service writes the table only; the index follows through the stream. Here nothing
drains the stream unless the test says so (a plain ``Service``, not the suite's
``IndexerKeepsUp``), so the index is deliberately behind, and each test first proves that it is.
Every search tool must still reflect each add, update, delete and forget made before it began;
once the indexer catches up, the index equals the store. On SQLite the store writes its index
rows in the same transaction, so the index is never behind: the same searches hold there, and
the index equals the store at every step.
"""

from __future__ import annotations

import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
from mnemo.embedding import default_embedder
from mnemo.models.common import utc_now
from mnemo.ports import Ports, Scope
from mnemo.service.pipeline import Service

from tests.contract.conftest import Indexer, Tenant, new_tenant

SEARCHES = ("memory_search", "search_memory", "recall", "recall_context")


def word() -> str:
    return "w" + uuid.uuid4().hex[:10]


def is_aws(ports: Ports) -> bool:
    from mnemo.backends.sqlite import SqliteBackend

    return not isinstance(ports, SqliteBackend)


def indexed(ports: Ports, scope: Scope, ids: list[str]) -> dict[str, int]:
    """memory id → version of the live (not tombstoned) entries the index holds, read directly."""
    if not is_aws(ports):
        entries = ports.index.entries([(scope.project_id, i) for i in ids])  # type: ignore[attr-defined]
        return {memory_id: entry.version for (_, memory_id), entry in entries.items()}
    from mnemo.backends.aws.mapping import doc_id

    index = ports.index  # type: ignore[attr-defined]
    docs = [{"_id": doc_id(scope.project_id, i), "routing": scope.project_id} for i in ids]
    if not index.client.indices.exists_alias(index=index.alias, name=index.alias):
        return {}
    out = index.client.mget(index=index.alias, body={"docs": docs})
    live = [d for d in out["docs"] if d.get("found") and not d["_source"].get("deleted")]
    return {d["_source"]["id"]: int(d["_version"]) for d in live}


def stored(ports: Ports, scope: Scope, ids: list[str]) -> dict[str, int]:
    return {i: r.version for i in ids if (r := ports.store.get(scope, i)) is not None}


def found(tenant: Tenant, tool: str, query: str) -> list[tuple[str, int | None]]:
    """(id, version where the tool says it) of what one search tool returns for ``query``. recall
    and recall_context by words (``lexical``): what these tests change is the word index, and with
    meaning a random word is near enough to an updated memory's other words to find it by chance
    (cosine ≥ 0.35 for 22 of 300 pairs with the static model; the vector half's own read-your-writes
    tests are below)."""
    if tool == "memory_search":
        return [(m.id, m.version) for m in tenant.call(tool, q=query).memories]
    if tool == "recall_context":
        return [(ref, None) for ref in tenant.call(tool, query=query, mode="lexical").references]
    if tool == "recall":
        return [(item.reference, None) for item in tenant.call(tool, query=query, mode="lexical").results]
    return [(item.reference, None) for item in tenant.call(tool, query=query).results]


def everywhere(ids: list[str]) -> dict[str, list[str]]:
    return {tool: list(ids) for tool in SEARCHES}


def ids_found(tenant: Tenant, query: str) -> dict[str, list[str]]:
    return {tool: [ref for ref, _ in found(tenant, tool, query)] for tool in SEARCHES}


@pytest.fixture
def lagging(ports: Ports) -> Tenant:
    """A tenant whose writes nothing brings to the index (on AWS) until the test catches up."""
    return new_tenant(Service(ports, embedder=default_embedder()))


def expect_lag(ports: Ports, scope: Scope, memory_id: str, version: int | None) -> None:
    """On AWS: the index does not hold the memory's current state (the test's premise). On
    SQLite: it does (the store wrote it in the same transaction)."""
    now = indexed(ports, scope, [memory_id]).get(memory_id)
    if is_aws(ports):
        assert now != version, "the index already holds this change: the test would prove nothing"
    else:
        assert now == version


def test_each_search_tool_reflects_an_add_update_delete_and_forget_while_the_index_lags(
    ports: Ports, lagging: Tenant, indexer: Indexer
) -> None:
    scope = Scope(lagging.workspace_id, lagging.project.id)
    old, new, other = word(), word(), word()

    # Given a memory just added, which the index has not received
    memory = lagging.call("memory_add", content=f"lagging {old} first words").memory
    expect_lag(ports, scope, memory.id, 1)
    # Then every search tool finds it at once
    assert ids_found(lagging, old) == everywhere([memory.id])

    # Given the index caught up with version 1, then an update it has not received
    indexer.catch_up()
    assert indexed(ports, scope, [memory.id]) == {memory.id: 1}
    lagging.call("memory_update", id=memory.id, content=f"lagging {new} second words")
    expect_lag(ports, scope, memory.id, 2)
    # Then the old words find nothing (the stale hit is removed), the new ones version 2
    assert ids_found(lagging, old) == everywhere([])
    assert ids_found(lagging, new) == everywhere([memory.id])
    assert found(lagging, "memory_search", new) == [(memory.id, 2)]

    # Given the index holds version 2, then a delete it has not received
    indexer.catch_up()
    lagging.call("memory_delete", id=memory.id)
    expect_lag(ports, scope, memory.id, None)
    # Then nothing finds it
    assert ids_found(lagging, new) == everywhere([])

    # Given another memory indexed, then forgotten without the index knowing
    gone = lagging.call("memory_add", content=f"forgotten {other}").memory
    indexer.catch_up()
    lagging.call("forget", reference=gone.id)
    expect_lag(ports, scope, gone.id, None)
    # Then nothing finds it either
    assert ids_found(lagging, other) == everywhere([])

    # When the indexer catches up, the index equals the store
    indexer.catch_up()
    ids = [memory.id, gone.id]
    assert indexed(ports, scope, ids) == stored(ports, scope, ids) == {}


def test_a_burst_of_writes_is_found_in_full_and_the_index_then_equals_the_store(
    ports: Ports, lagging: Tenant, indexer: Indexer
) -> None:
    # Given twelve memories added, half of them updated and a third deleted, none indexed
    scope = Scope(lagging.workspace_id, lagging.project.id)
    term = word()
    added = [lagging.call("memory_add", content=f"burst {term} {i}").memory for i in range(12)]
    for memory in added[:6]:
        lagging.call("memory_update", id=memory.id, tags=["touched"])
    for memory in added[::3]:
        lagging.call("memory_delete", id=memory.id)
    ids = [m.id for m in added]
    live = {m.id: (2 if i < 6 else 1) for i, m in enumerate(added) if i % 3}
    if is_aws(ports):
        assert indexed(ports, scope, ids) == {}

    # Then a search sees exactly the live ones, each at its current version
    result = lagging.call("memory_search", q=term, limit=100).memories
    assert {m.id: m.version for m in result} == live
    assert {m.id for m in lagging.call("memory_search", q=term, tags=["touched"]).memories} == {
        i for i, v in live.items() if v == 2
    }

    # And once the indexer catches up, the index holds exactly what the store holds
    indexer.catch_up()
    assert indexed(ports, scope, ids) == stored(ports, scope, ids) == live


def test_a_fresh_memory_matching_every_term_ranks_above_weaker_indexed_matches(
    ports: Ports, lagging: Tenant, indexer: Indexer
) -> None:
    # Given six indexed memories that each hold one of two terms
    a, b = word(), word()
    for i in range(3):
        lagging.call("memory_add", content=f"weaker {a} {i}")
        lagging.call("memory_add", content=f"weaker {b} {i}")
    indexer.catch_up()

    # When a memory holding both terms is added (the index has not received it)
    fresh = lagging.call("memory_add", content=f"stronger {a} {b}").memory
    expect_lag(ports, Scope(lagging.workspace_id, lagging.project.id), fresh.id, 1)

    # Then recall (any term) ranks it first, within a page of three
    ranked = [item.reference for item in lagging.call("recall", query=f"{a} {b}", limit=3).results]
    assert ranked[:1] == [fresh.id]
    # and a search for one term still finds it among the others
    assert fresh.id in {m.id for m in lagging.call("memory_search", q=a).memories}


def test_a_fresh_memory_outside_the_filters_stays_out(ports: Ports, lagging: Tenant) -> None:
    term = word()
    lagging.call("memory_add", content=f"filtered {term}", kind="note", tags=["x"])
    kept = lagging.call("memory_add", content=f"filtered {term}", kind="insight", tags=["y"]).memory

    assert [m.id for m in lagging.call("memory_search", q=term, kind="insight").memories] == [kept.id]
    assert [m.id for m in lagging.call("memory_search", q=term, tags=["y"]).memories] == [kept.id]


def test_an_expired_memory_is_not_found_while_the_index_lags(ports: Ports, lagging: Tenant) -> None:
    term = word()
    soon = utc_now() + timedelta(seconds=2)  # unexpired when stored, however slow the add
    lagging.call("memory_add", content=f"expiring {term}", expires_at=soon)

    time.sleep(max(0.0, (soon - utc_now()).total_seconds()) + 0.1)
    assert ids_found(lagging, term) == everywhere([])


def test_the_time_window_holds_for_changes_the_index_has_not_received(
    ports: Ports, lagging: Tenant, indexer: Indexer
) -> None:
    # Given a memory indexed at version 1, then updated (the index still holds version 1)
    term = word()
    memory = lagging.call("memory_add", content=f"windowed {term}").memory
    indexer.catch_up()
    between = utc_now()
    time.sleep(0.01)
    lagging.call("memory_update", id=memory.id, tags=["later"])
    fresh = lagging.call("memory_add", content=f"windowed {term} fresh").memory
    expect_lag(ports, Scope(lagging.workspace_id, lagging.project.id), memory.id, 2)

    # Then a window that ends before the update finds neither (the index's version-1 hit is
    # dropped: the memory's current version is outside the window), one that starts there both
    def window(**bounds: Any) -> list[str]:
        return sorted(m.id for m in lagging.call("memory_search", q=term, **bounds).memories)

    assert window(updated_before=between) == []
    assert window(updated_after=between) == sorted([memory.id, fresh.id])
    found = lagging.call("search_memory", query=term, updated_after=between).results
    assert sorted(item.reference for item in found) == sorted([memory.id, fresh.id])


def test_a_deduplicated_add_is_found_once_while_the_index_lags(ports: Ports, lagging: Tenant) -> None:
    # Given the same memory added twice (the second answers the first: #16's dedup claim)
    term = word()
    first = lagging.call("memory_add", content=f"said twice {term}")
    second = lagging.call("memory_add", content=f"said twice {term}")
    assert (second.deduplicated, second.memory.id) == (True, first.memory.id)

    # Then a search finds that one memory once: no claim item is taken for a change
    assert ids_found(lagging, term) == everywhere([first.memory.id])


def by_meaning(tenant: Tenant, query: str, **args: Any) -> list[tuple[str, float]]:
    """(id, similarity) of what recall finds by meaning alone."""
    result = tenant.call("recall", query=query, mode="semantic", explain=True, **args)
    return [(item.reference, round(item.explanation.similarity, 4)) for item in result.results]


def test_recall_by_meaning_reflects_an_add_update_and_delete_while_the_index_lags(
    ports: Ports, lagging: Tenant, indexer: Indexer
) -> None:
    """The vector half of a search merges the recent changes too, exactly: what meaning finds
    while the index lags is what it finds once the index has caught up, similarities included."""
    scope = Scope(lagging.workspace_id, lagging.project.id)
    weekend, frozen = "weekend database access", "when are deployments frozen"
    settled = lagging.call("memory_add", content="The kitchen closes at 3pm").memory
    indexer.catch_up()

    # Given a memory just added, which the index has not received
    memory = lagging.call("memory_add", content="The staging database is read-only on Sundays").memory
    expect_lag(ports, scope, memory.id, 1)
    # Then meaning finds it at once, first, as the caught-up index does
    lag = {query: by_meaning(lagging, query) for query in (weekend, frozen)}
    assert lag[weekend][0][0] == memory.id
    indexer.catch_up()
    assert {query: by_meaning(lagging, query) for query in (weekend, frozen)} == lag

    # Given an update of its content the index has not received
    lagging.call("memory_update", id=memory.id, content="Deploys freeze on Fridays")
    expect_lag(ports, scope, memory.id, 2)
    # Then its similarity is the new content's: first for the new meaning, no longer for the old
    lag = {query: by_meaning(lagging, query) for query in (weekend, frozen)}
    assert lag[frozen][0][0] == memory.id
    assert dict(lag[weekend]).get(memory.id, -1.0) < dict(lag[frozen])[memory.id]
    indexer.catch_up()
    assert {query: by_meaning(lagging, query) for query in (weekend, frozen)} == lag

    # And a filter the update no longer passes hides it while the index lags
    lagging.call("memory_update", id=memory.id, kind="decision")
    assert [ref for ref, _ in by_meaning(lagging, frozen, memory_type="note")] == []
    assert [ref for ref, _ in by_meaning(lagging, frozen, memory_type="decision")] == [memory.id]
    indexer.catch_up()

    # Given a delete the index has not received
    lagging.call("memory_delete", id=memory.id)
    expect_lag(ports, scope, memory.id, None)
    # Then meaning no longer finds it; the settled memory stays as it was
    assert memory.id not in [ref for ref, _ in by_meaning(lagging, frozen)]
    assert memory.id not in [ref for ref, _ in by_meaning(lagging, weekend)]
    lag = {query: by_meaning(lagging, query) for query in (weekend, frozen)}
    indexer.catch_up()
    assert {query: by_meaning(lagging, query) for query in (weekend, frozen)} == lag
    assert stored(ports, scope, [settled.id, memory.id]) == {settled.id: 1}
