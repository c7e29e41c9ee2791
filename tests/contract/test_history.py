"""A memory's history (docs/contract.md §3, issue 39 item 2): every update and every supersession
mark keeps the version it replaces; memory_history answers them newest first with the chain; the
bounds drop the oldest and count them; a delete, forget or expiry erases every version; another tenant
learns nothing — on every backend (on AWS the versions are table items the index never holds)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from mnemo.errors import InvalidRequest, NotFound
from mnemo.models.common import utc_now
from mnemo.ports import MAX_HISTORY_BYTES, MAX_VERSIONS, Scope
from mnemo.service.cleanup import PHASES, run_cleanup

from tests.contract.conftest import new_tenant


def test_updates_keep_every_earlier_version_newest_first(tenant):
    memory = tenant.call("memory_add", content="v1 deploys on Fridays", kind="decision", tags=["ops"]).memory
    tenant.call("memory_update", id=memory.id, content="v2 deploys on Tuesdays")
    tenant.call("memory_update", id=memory.id, tags=["ops", "release"], path="ops/deploys")

    history = tenant.call("memory_history", id=memory.id)

    assert history.memory.version == 3
    assert [(v.version, v.content, v.tags, v.path) for v in history.versions] == [
        (2, "v2 deploys on Tuesdays", ["ops"], None),
        (1, "v1 deploys on Fridays", ["ops"], None),
    ]
    assert history.versions[1].kind == "decision"
    assert history.versions[1].updated_at == memory.updated_at
    assert history.dropped == 0
    assert tenant.call("memory_history", id=memory.id, limit=1).versions[0].version == 2


def test_the_chain_says_what_it_replaced_and_what_replaced_it(tenant):
    first = tenant.call("memory_add", content="deploys on Fridays").memory
    second = tenant.call("memory_add", content="deploys on Tuesdays", supersedes=[first.id]).memory
    third = tenant.call("memory_add", content="deploys on Wednesdays", supersedes=[second.id]).memory

    oldest = tenant.call("memory_history", id=first.id)
    middle = tenant.call("memory_history", id=second.id)

    assert oldest.superseded_by == [second.id, third.id]
    assert middle.supersedes == [first.id]
    assert middle.superseded_by == [third.id]
    # the mark is a change: the version before it is kept
    assert [(v.version, v.content) for v in oldest.versions] == [(1, "deploys on Fridays")]
    assert oldest.memory.superseded_by == second.id


def test_the_oldest_versions_go_first_beyond_the_bounds_and_are_counted(tenant):
    memory = tenant.call("memory_add", content="version 1").memory
    for n in range(2, MAX_VERSIONS + 5):
        tenant.call("memory_update", id=memory.id, content=f"version {n}")

    history = tenant.call("memory_history", id=memory.id, limit=100)

    assert len(history.versions) == MAX_VERSIONS
    assert history.versions[0].version == MAX_VERSIONS + 3
    assert history.versions[-1].version == 4
    assert history.dropped == 3


def test_big_contents_are_kept_within_the_byte_bound(tenant):
    big = 4000
    memory = tenant.call("memory_add", content="a" * big).memory
    for letter in "bcdefghijklmnopqrstu":
        tenant.call("memory_update", id=memory.id, content=letter * big)

    history = tenant.call("memory_history", id=memory.id, limit=100)

    assert len(history.versions) == MAX_HISTORY_BYTES // big  # 16 of the 20 earlier versions
    assert history.dropped == 20 - MAX_HISTORY_BYTES // big
    assert history.versions[0].content == "t" * big


@pytest.mark.parametrize("how", ["memory_delete", "forget"])
def test_a_delete_or_forget_erases_every_version(tenant, ports, how):
    memory = tenant.call("memory_add", content="a secret plan, first draft").memory
    tenant.call("memory_update", id=memory.id, content="a secret plan, second draft")
    scope = Scope(tenant.workspace_id, tenant.project.id)
    assert len(ports.store.history(scope, memory.id, below=10, limit=10)[0]) == 1

    if how == "forget":
        tenant.call("forget", reference=memory.id)
    else:
        tenant.call("memory_delete", id=memory.id)

    assert ports.store.history(scope, memory.id, below=10, limit=10) == ([], 0)
    with pytest.raises(NotFound):
        tenant.call("memory_history", id=memory.id)


def test_expiry_erases_every_version(tenant, ports):
    expires = utc_now() + timedelta(hours=1)
    memory = tenant.call("memory_add", content="a one-off code, first draft", expires_at=expires).memory
    tenant.call("memory_update", id=memory.id, content="a one-off code, second draft")
    scope = Scope(tenant.workspace_id, tenant.project.id)
    assert len(ports.store.history(scope, memory.id, below=10, limit=10)[0]) == 1
    later = expires + timedelta(minutes=1)  # the memory has expired by then (as test_memory_tools reads later)

    # expired, it is unreadable at once, its history too
    with pytest.raises(NotFound):
        tenant.svc.invoke("memory_history", tenant.admin, {"id": memory.id}, now=later)
    # the cleanup job run then deletes it, from the first record of each walk (a shared AWS stack
    # holds other tests' records and checkpoints: as test_cleanup.py's runs, until a cycle is done)
    for name in PHASES:
        ports.maintenance.save_checkpoint(name, None)
    for _ in range(100):
        if not run_cleanup(ports, now=later).more:
            break
    else:
        raise AssertionError("cleanup still had work after 100 runs")

    assert ports.store.get(scope, memory.id) is None
    assert ports.store.history(scope, memory.id, below=10, limit=10) == ([], 0)
    with pytest.raises(NotFound):  # now, when it had not expired yet: it is gone
        tenant.call("memory_history", id=memory.id)


def test_another_tenant_learns_nothing_and_bad_limits_are_refused(tenant, svc):
    memory = tenant.call("memory_add", content="ours").memory
    tenant.call("memory_update", id=memory.id, content="ours, changed")
    stranger = new_tenant(svc, "other")

    with pytest.raises(NotFound) as foreign:
        stranger.call("memory_history", id=memory.id)
    with pytest.raises(NotFound) as unknown:
        stranger.call("memory_history", id="mem_01J00000000000000000000000")
    for limit in (0, 101):
        with pytest.raises(InvalidRequest):
            tenant.call("memory_history", id=memory.id, limit=limit)

    assert foreign.value.message == unknown.value.message


def test_versions_never_reach_the_index(tenant, ports):
    memory = tenant.call("memory_add", content="zebra crossing policy").memory
    tenant.call("memory_update", id=memory.id, content="pedestrian crossing policy")

    assert tenant.call("search_memory", query="zebra").results == []
    assert tenant.call("memory_search", q="zebra", include_superseded=True).memories == []
    assert [m.id for m in tenant.call("memory_search").memories] == [memory.id]
