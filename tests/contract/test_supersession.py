"""Supersession (docs/contract.md §3, issue 39): memory_add / memory_update ``supersedes``, the
marks, the search tools leaving superseded memories out unless asked, the refusals that change
nothing, the store writing a memory and its marks as one, and what a delete leaves, on every backend."""

from __future__ import annotations

from datetime import timedelta

import pytest
from mnemo.embedding import default_embedder
from mnemo.errors import Conflict, InvalidRequest, NotFound
from mnemo.ids import memory_id
from mnemo.models.common import utc_now
from mnemo.models.records import MemoryRecord
from mnemo.ports import Scope, VersionConflict
from mnemo.service import tenancy
from mnemo.service.pipeline import Service

from tests.contract.conftest import new_tenant

OLD = "we deploy on Fridays"
NEW = "deploys moved to Tuesdays"
UNKNOWN = "mem_01J00000000000000000000000"


def everything_of(tenant) -> dict[str, object]:
    """Every memory of the tenant's project as memory_search lists it, superseded ones included."""
    listed = tenant.call("memory_search", include_superseded=True, limit=100).memories
    return {memory.id: memory for memory in listed}


def test_a_superseding_add_marks_the_old_memory_and_says_what_it_replaced(tenant):
    old = tenant.call("memory_add", content=OLD).memory

    new = tenant.call("memory_add", content=NEW, supersedes=[old.id]).memory
    got = tenant.call("memory_get", id=old.id).memory

    assert new.supersedes == [old.id]
    assert got.content == OLD
    assert got.superseded_by == new.id
    assert got.superseded_at is not None
    assert got.version == old.version + 1
    assert got.updated_at == old.updated_at  # the mark is no change of what the memory says


def test_search_tools_leave_superseded_memories_out_unless_asked(tenant):
    old = tenant.call("memory_add", content="deploy day is Friday").memory
    new = tenant.call("memory_add", content="deploy day is Tuesday", supersedes=[old.id]).memory

    listed = [m.id for m in tenant.call("memory_search", q="deploy day").memories]
    newest = [m.id for m in tenant.call("memory_search").memories]
    strict = [r.reference for r in tenant.call("search_memory", query="deploy day").results]
    loose = [r.reference for r in tenant.call("recall", query="deploy day").results]
    block = tenant.call("recall_context", query="deploy day").references
    everything = [m.id for m in tenant.call("memory_search", q="deploy day", include_superseded=True).memories]

    assert listed == newest == strict == loose == block == [new.id]
    assert set(everything) == {old.id, new.id}


def test_with_include_superseded_the_search_tools_mark_both_ends(tenant):
    old = tenant.call("memory_add", content="deploy day is Friday").memory
    new = tenant.call("memory_add", content="deploy day is Tuesday", supersedes=[old.id]).memory

    for tool in ("search_memory", "recall"):
        results = {r.reference: r for r in tenant.call(tool, query="deploy day", include_superseded=True).results}
        assert results[old.id].superseded_by == new.id, tool
        assert results[new.id].supersedes == [old.id], tool
        assert results[new.id].superseded_by is None, tool
    context = tenant.call("recall_context", query="deploy day", include_superseded=True)
    items = {i.reference: i for i in tenant.call("recall_context", query="deploy day", include_superseded=True,
                                                 output_json=True).items}  # fmt: skip
    assert f"superseded by {new.id}" in context.context
    assert f"supersedes {old.id}" in context.context
    assert items[old.id].superseded_by == new.id
    assert items[new.id].supersedes == [old.id]


def test_an_update_supersedes_too_and_adds_to_what_it_replaced(tenant):
    first = tenant.call("memory_add", content="deploys on Mondays").memory
    second = tenant.call("memory_add", content="deploys on Wednesdays").memory
    keeper = tenant.call("memory_add", content=NEW, supersedes=[first.id]).memory

    updated = tenant.call("memory_update", id=keeper.id, supersedes=[second.id]).memory

    assert updated.supersedes == [first.id, second.id]
    assert updated.version == keeper.version + 1
    assert tenant.call("memory_get", id=second.id).memory.superseded_by == keeper.id
    assert [m.id for m in tenant.call("memory_search").memories] == [keeper.id]


def test_twenty_at_once_are_superseded_and_a_repeated_id_counts_once(tenant):
    olds = [tenant.call("memory_add", content=f"deploy rule {i}").memory for i in range(19)]

    new = tenant.call("memory_add", content=NEW, supersedes=[m.id for m in olds] + [olds[0].id]).memory

    assert new.supersedes == [m.id for m in olds]
    assert {m.superseded_by for m in everything_of(tenant).values() if m.id != new.id} == {new.id}


def _refused_add_changes_nothing(tenant, supersedes, error, before):
    with pytest.raises(error) as refused:
        tenant.call("memory_add", content=NEW, supersedes=supersedes)
    assert everything_of(tenant) == before
    return refused.value


@pytest.mark.parametrize(
    ("case", "error"),
    [
        ("another workspace", NotFound),
        ("another project", NotFound),
        ("unknown", NotFound),
        ("deleted", NotFound),
        ("a good one and another workspace's", NotFound),
        ("more than 20", InvalidRequest),
        ("superseded already", Conflict),
    ],
)
def test_refused_adds_change_nothing(tenant, svc, case, error):
    old = tenant.call("memory_add", content=OLD).memory
    stranger = new_tenant(svc, "other")
    theirs = stranger.call("memory_add", content="their memory").memory
    project = tenancy.create_project(svc.ports, tenant.workspace_id, "second")
    sibling = tenant.call("memory_add", content="the other project's", project=project.slug).memory
    gone = tenant.call("memory_add", content="deleted soon").memory
    tenant.call("memory_delete", id=gone.id)
    if case == "superseded already":
        tenant.call("memory_add", content="deploys on Mondays", supersedes=[old.id])
    ids = {
        "another workspace": [theirs.id],
        "another project": [sibling.id],
        "unknown": [UNKNOWN],
        "deleted": [gone.id],
        "a good one and another workspace's": [old.id, theirs.id],
        "more than 20": [old.id] + [f"mem_01J0000000000000000000{i:04d}" for i in range(20)],
        "superseded already": [old.id],
    }[case]
    before = everything_of(tenant)

    refusal = _refused_add_changes_nothing(tenant, ids, error, before)

    assert refusal.code == error.code
    assert refusal.message
    assert stranger.call("memory_get", id=theirs.id).memory == theirs
    assert tenant.call("memory_get", id=sibling.id, project=project.slug).memory == sibling


def test_another_tenants_id_is_refused_exactly_as_an_unknown_one(tenant, svc):
    theirs = new_tenant(svc, "other").call("memory_add", content="their memory").memory

    with pytest.raises(NotFound) as foreign:
        tenant.call("memory_add", content=NEW, supersedes=[theirs.id])
    with pytest.raises(NotFound) as unknown:
        tenant.call("memory_add", content=NEW, supersedes=[UNKNOWN])

    assert (foreign.value.message, foreign.value.code) == (unknown.value.message, unknown.value.code)


def test_an_already_superseded_memory_is_refused_and_itself_is_refused(tenant):
    old = tenant.call("memory_add", content=OLD).memory
    tenant.call("memory_add", content=NEW, supersedes=[old.id])
    third = tenant.call("memory_add", content="deploys on Wednesdays").memory
    before = everything_of(tenant)

    with pytest.raises(Conflict):
        tenant.call("memory_update", id=third.id, supersedes=[old.id])
    with pytest.raises(InvalidRequest):
        tenant.call("memory_update", id=third.id, supersedes=[third.id])

    assert everything_of(tenant) == before


def test_with_if_version_an_update_supersedes_a_superseded_memory_again(tenant):
    old = tenant.call("memory_add", content=OLD).memory
    tenant.call("memory_add", content=NEW, supersedes=[old.id])
    third = tenant.call("memory_add", content="deploys on Wednesdays").memory

    updated = tenant.call("memory_update", id=third.id, supersedes=[old.id], if_version=third.version).memory

    assert updated.supersedes == [old.id]
    assert tenant.call("memory_get", id=old.id).memory.superseded_by == third.id


def test_an_update_that_would_make_a_cycle_is_refused(tenant):
    old = tenant.call("memory_add", content=OLD).memory
    new = tenant.call("memory_add", content=NEW, supersedes=[old.id]).memory
    newest = tenant.call("memory_add", content="deploys on Wednesdays", supersedes=[new.id]).memory
    before = everything_of(tenant)

    with pytest.raises(Conflict):
        tenant.call("memory_update", id=old.id, supersedes=[new.id], if_version=2)
    with pytest.raises(Conflict):  # through a chain: old ← new ← newest
        tenant.call("memory_update", id=old.id, supersedes=[newest.id], if_version=2)

    assert everything_of(tenant) == before


def test_a_deduplicated_add_supersedes_nothing(tenant):
    kept = tenant.call("memory_add", content=NEW).memory
    old = tenant.call("memory_add", content=OLD).memory

    again = tenant.call("memory_add", content=NEW, supersedes=[old.id])

    assert again.deduplicated is True
    assert again.memory == kept
    assert tenant.call("memory_get", id=old.id).memory == old


def test_deleting_or_forgetting_the_new_memory_leaves_the_marks(tenant):
    old = tenant.call("memory_add", content=OLD).memory
    other = tenant.call("memory_add", content="deploys on Mondays").memory
    new = tenant.call("memory_add", content=NEW, supersedes=[old.id]).memory
    newer = tenant.call("memory_add", content="deploys on Wednesdays", supersedes=[other.id]).memory

    tenant.call("memory_delete", id=new.id)
    tenant.call("forget", reference=newer.id)

    assert tenant.call("memory_get", id=old.id).memory.superseded_by == new.id
    assert tenant.call("memory_get", id=other.id).memory.superseded_by == newer.id
    assert tenant.call("memory_search").memories == []
    assert tenant.call("recall", query="deploys").results == []


def _record(scope: Scope, content: str, **fields) -> MemoryRecord:
    fields = {"created_at": utc_now(), "updated_at": utc_now(), **fields}
    return MemoryRecord(id=memory_id(), workspace_id=scope.workspace_id, project_id=scope.project_id,
                        content=content, source="test", version=1, **fields)  # fmt: skip


def _marked(record: MemoryRecord, by: str) -> MemoryRecord:
    return record.model_copy(update={"superseded_by": by, "superseded_at": utc_now(), "version": record.version + 1})


@pytest.mark.parametrize("write", ["create", "replace"])
def test_the_store_writes_a_memory_and_its_marks_all_or_none(ports, write):
    _, project = tenancy.create_workspace(ports, "store")
    scope = Scope(project.workspace_id, project.id)
    fresh = _record(scope, "marked fine")
    stale = _record(scope, "changed meanwhile")
    writer = _record(scope, "the writer")
    for record in (fresh, stale, writer):
        ports.store.create(record)
    ports.store.replace(stale.model_copy(update={"version": 2}), expected_version=1)  # now at 2
    new = _record(scope, NEW, supersedes=[fresh.id, stale.id])
    marks = [_marked(fresh, new.id), _marked(stale, new.id)]  # stale's mark expects version 1

    with pytest.raises(VersionConflict):
        if write == "create":
            ports.store.create(new, dedupe=True, marks=marks)
        else:
            update = writer.model_copy(update={"version": 2, "content": "the writer, changed"})
            ports.store.replace(update, expected_version=1, previous=writer, marks=marks)

    assert ports.store.get(scope, new.id) is None
    assert ports.store.get(scope, fresh.id) == fresh
    assert ports.store.get(scope, stale.id).version == 2
    assert ports.store.get(scope, writer.id) == writer


def test_a_mark_is_read_at_once_before_the_index_has_it(ports, indexer):
    """A plain service: nothing drains the stream unless the test says so (the index lags on AWS).
    The old memory was written a day ago (as an import writes it), so only the mark's own change
    makes it a recent change the searches read beside the index."""
    tenant = new_tenant(Service(ports, embedder=default_embedder()))
    scope = Scope(tenant.workspace_id, tenant.project.id)
    day_ago = utc_now() - timedelta(days=1)
    old = _record(scope, "deploy day is Friday", created_at=day_ago, updated_at=day_ago)
    ports.store.create(old)
    indexer.catch_up()  # the index holds the old memory, unmarked
    assert [r.reference for r in tenant.call("search_memory", query="deploy day").results] == [old.id]

    new = tenant.call("memory_add", content="deploy day is Tuesday", supersedes=[old.id]).memory

    for _ in range(2):  # before the index has the mark, and after
        assert [m.id for m in tenant.call("memory_search", q="deploy day").memories] == [new.id]
        assert [r.reference for r in tenant.call("search_memory", query="deploy day").results] == [new.id]
        assert [r.reference for r in tenant.call("recall", query="deploy day").results] == [new.id]
        assert [m.id for m in tenant.call("memory_search").memories] == [new.id]
        indexer.catch_up()
