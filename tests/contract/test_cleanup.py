"""The cleanup job (docs/contract.md §6 Scheduled cleanup), on every backend: expiry, repair, drift between
store and index, bounded resumable runs, and overlapping runs.

Drift is made the way it happens in production — a record written while the index was away, an
index entry left behind by a lost delete — by writing to one side only, through the ports where
they allow it and through the backend's own client where nothing in the service could."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from mnemo import text
from mnemo.errors import NotFound
from mnemo.models.common import utc_now
from mnemo.models.records import MemoryRecord
from mnemo.ports import Comparison, IndexQuery, MemoryFilter, Ports, Scope
from mnemo.service.catalog import TOOLS
from mnemo.service.cleanup import PHASES, CleanupOptions, CleanupSummary, run_cleanup

from tests.contract.conftest import atomic_per_item
from tests.support.records import memory_record

# -- helpers --------------------------------------------------------------------------------


def word() -> str:
    """A term no other memory contains."""
    return "zq" + uuid.uuid4().hex[:12]


def scope_of(record: MemoryRecord) -> Scope:
    return Scope(record.workspace_id, record.project_id)


def indexed(ports: Ports, record: MemoryRecord, term: str) -> bool:
    """Whether the index finds the record by ``term`` (looking as of before it could expire)."""
    query = IndexQuery(scope_of(record), text.query_terms(term), "all", MemoryFilter(now=record.created_at), 100)
    return any(hit.record.id == record.id for hit in ports.index.search(query))


def plant(tenant: Any, content: str, *, expired: bool = False, index: bool = True) -> MemoryRecord:
    """A record written straight through the ports (the service refuses a past ``expires_at``)."""
    now = utc_now()
    record = memory_record(
        content,
        scope=Scope(tenant.workspace_id, tenant.project.id),
        at=now - timedelta(minutes=10),
        expires_at=(now - timedelta(minutes=5)) if expired else None,
    )
    ports = tenant.svc.ports
    ports.store.create(record)
    if index:
        ports.index.upsert(record)
        tenant.svc.indexer.catch_up()
    else:  # the change reached the store, never the index (the stream gave up on it)
        tenant.svc.indexer.catch_up(lose=[record.id])
    return record


def lose_record(tenant: Any, record: MemoryRecord) -> None:
    """The store loses a record behind the index's back (a delete whose index write was lost)."""
    from mnemo.backends.sqlite import SqliteBackend

    ports = tenant.svc.ports
    if isinstance(ports, SqliteBackend):
        with ports.db.write() as conn:
            conn.execute("DELETE FROM memories WHERE id = ?", (record.id,))
        return
    from mnemo.backends.aws.items import memory_key

    store = ports.store  # type: ignore[attr-defined]
    store.client.delete_item(TableName=store.table, Key=memory_key(scope_of(record), record.id))
    tenant.svc.indexer.catch_up(lose=[record.id])  # the REMOVE never reached the indexer


def index_entries(ports: Ports) -> list[Comparison]:
    out: list[Comparison] = []
    cursor = None
    while True:
        page = ports.maintenance.index_walk(cursor, 500)
        out.extend(page.items)
        if page.cursor is None:
            return out
        cursor = page.cursor


def live_orphans(ports: Ports, ids: set[str]) -> list[Comparison]:
    """Live index entries without a record, among ``ids`` (or of unknown memory)."""
    return [
        c
        for c in index_entries(ports)
        if c.record is None
        and c.entry is not None
        and not c.entry.deleted
        and (c.entry.memory_id is None or c.entry.memory_id in ids)
    ]


def until_done(ports: Ports, options: CleanupOptions | None = None, limit: int = 100) -> list[CleanupSummary]:
    """Cleanup runs until a cycle is complete, on a store whose changes the index has all been
    given (or lost, where a test said so): what is left is the drift cleanup exists for."""
    _indexer[0].catch_up()
    runs = []
    for _ in range(limit):
        runs.append(run_cleanup(ports, options))
        if not runs[-1].more:
            return runs
    raise AssertionError(f"cleanup still had work after {limit} runs")


def total(runs: list[CleanupSummary], name: str) -> int:
    return sum(r.counts[name] for r in runs)


#: this test's Indexer (tests/contract/conftest.py), for the helpers
_indexer: list[Any] = []


@pytest.fixture(autouse=True)
def clean_start(ports: Ports, indexer: Any) -> None:
    """Every test starts with nothing left to clean and each walk at its beginning: an AWS stack
    is shared by the session, and the counts asserted here are this test's own."""
    _indexer[:] = [indexer]
    for name in PHASES:
        ports.maintenance.save_checkpoint(name, None)
    until_done(ports)


# -- expiry ---------------------------------------------------------------------------------


READS = [name for name in ("memory_search", "search_memory", "recall", "recall_context") if name in TOOLS]


def test_an_expired_memory_is_invisible_to_every_read_before_cleanup(tenant):
    term = word()
    record = plant(tenant, f"short lived {term}", expired=True)

    with pytest.raises(NotFound):
        tenant.call("memory_get", id=record.id)
    assert record.id not in [m.id for m in tenant.call("memory_search", q="").memories]
    assert tenant.call("memory_search", q=term).memories == []
    for tool in READS[1:]:
        result = tenant.call(tool, query=term).model_dump()
        assert record.id not in str(result), tool


def test_cleanup_removes_an_expired_memory_from_store_and_index(tenant):
    term = word()
    record = plant(tenant, f"short lived {term}", expired=True)
    kept = plant(tenant, f"long lived {term}")
    ports = tenant.svc.ports

    runs = until_done(ports)

    assert total(runs, "expired") == 1
    assert ports.store.get(scope_of(record), record.id) is None
    assert not indexed(ports, record, term)
    assert ports.store.get(scope_of(kept), kept.id) == kept
    assert indexed(ports, kept, term)


def test_a_live_memory_with_a_future_expiry_is_kept(tenant):
    term = word()
    record = tenant.call("memory_add", content=f"later {term}", expires_at=utc_now() + timedelta(hours=1)).memory

    until_done(tenant.svc.ports)

    assert tenant.call("memory_get", id=record.id).memory == record
    assert [m.id for m in tenant.call("memory_search", q=term).memories] == [record.id]


# -- repair and drift -----------------------------------------------------------------------


def test_a_record_marked_for_repair_is_indexed_and_unmarked(tenant):
    term = word()
    record = plant(tenant, f"written while the index was away {term}", index=False)
    ports = tenant.svc.ports
    ports.store.mark_for_repair(record)

    runs = until_done(ports)

    assert total(runs, "repaired") == 1
    assert indexed(ports, record, term)
    marks = ports.maintenance.repair_marks(None, 1000).items
    assert record.id not in [m.memory_id for m in marks]


def test_a_record_missing_from_the_index_is_reindexed(tenant):
    term = word()
    record = plant(tenant, f"never reached the index {term}", index=False)
    assert tenant.call("memory_search", q=term).memories == []

    runs = until_done(tenant.svc.ports)

    assert total(runs, "reindexed") == 1
    assert [m.id for m in tenant.call("memory_search", q=term).memories] == [record.id]


def test_an_index_entry_without_a_record_is_removed(tenant):
    term = word()
    ports = tenant.svc.ports
    record = plant(tenant, f"deleted behind the index's back {term}")
    lose_record(tenant, record)
    assert live_orphans(ports, {record.id})

    runs = until_done(ports)

    assert total(runs, "unindexed") >= 1
    assert live_orphans(ports, {record.id}) == []
    assert not indexed(ports, record, term)


def test_a_clean_store_and_index_need_nothing(tenant):
    for i in range(3):
        tenant.call("memory_add", content=f"clean {i} {word()}")
    until_done(tenant.svc.ports)  # whatever earlier tests left behind

    runs = until_done(tenant.svc.ports)

    work = {name: total(runs, name) for name in ("expired", "repaired", "reindexed", "unindexed", "conflicts")}
    assert work == dict.fromkeys(work, 0)


# -- bounded, resumable, overlapping --------------------------------------------------------


@pytest.fixture
def alone(tenant: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """The tenant on a backend of its own: on AWS, tables and an index of their own (a walk at
    3 items a run over the session's shared table, which every AWS suite writes to, would take
    more runs than ``until_done`` allows)."""
    from mnemo.backends.sqlite import SqliteBackend

    if isinstance(tenant.svc.ports, SqliteBackend):
        yield tenant
        return
    from mnemo.backends.aws import AwsBackend

    from tests.contract.conftest import Indexer, IndexerKeepsUp, new_tenant
    from tests.support.aws_stack import own_stack
    from tests.support.stream import StreamDrain

    with own_stack(request.getfixturevalue("aws_stack")) as cfg:
        backend = AwsBackend.from_settings(cfg)
        own = Indexer(backend, StreamDrain(cfg))  # the stream of its own table, drained as the suite's
        _indexer[:] = [own]
        yield new_tenant(IndexerKeepsUp(backend, own))
        backend.close()


def test_small_budgets_resume_where_the_last_run_stopped(alone):
    term = word()
    expired = [plant(alone, f"batch {i} {term}", expired=True) for i in range(7)]
    ports = alone.svc.ports

    runs = until_done(ports, CleanupOptions(max_items=3, page_size=2))

    assert len(runs) > 1
    assert runs[0].more
    assert total(runs, "expired") == 7
    assert all(ports.store.get(scope_of(r), r.id) is None for r in expired)


def test_a_past_deadline_starts_no_work_and_reports_more(tenant):
    plant(tenant, f"stays for now {word()}", expired=True)

    summary = run_cleanup(tenant.svc.ports, CleanupOptions(deadline=0.0))

    assert summary.more
    assert summary.counts["examined"] == 0
    assert set(summary.phases.values()) == {"paused"}


def test_two_runs_started_together_finish_like_one(tenant, request):
    term = word()
    ports = atomic_per_item(tenant.svc.ports, request)
    expired = [plant(tenant, f"together expired {i} {term}", expired=True) for i in range(6)]
    unindexed = [plant(tenant, f"together unindexed {i} {term}", index=False) for i in range(4)]
    for record in unindexed[:2]:
        ports.store.mark_for_repair(record)
    orphan = plant(tenant, f"together orphan {term}")
    lose_record(tenant, orphan)
    start = threading.Barrier(2)
    results: list[CleanupSummary] = []

    def run() -> None:
        start.wait()
        results.append(run_cleanup(ports))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    until_done(ports)  # anything either run left for later (none expected, but never hide it)

    assert len(results) == 2
    assert sum(r.counts["expired"] for r in results) == 6  # each expired record deleted exactly once
    assert all(ports.store.get(scope_of(r), r.id) is None for r in expired)
    assert all(indexed(ports, r, term) for r in unindexed)
    assert live_orphans(ports, {orphan.id}) == []
    listed = tenant.call("memory_search", q=term, limit=100).memories
    assert sorted(m.id for m in listed) == sorted(r.id for r in unindexed)


def test_the_summary_never_carries_memory_contents(tenant):
    secret = word()
    plant(tenant, f"secret {secret}", expired=True)

    summary = run_cleanup(tenant.svc.ports)

    assert secret not in str(summary.as_dict())
