"""A memory's session (docs/contract.md §2): stored, returned, filterable, exported; and the store's
``neighbours`` (the memories saved just before and after one, in its session), on every backend."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from mnemo.errors import InvalidRequest
from mnemo.models.common import utc_now
from mnemo.ports import MemoryFilter, Scope
from mnemo.service import tenancy, transfer

S1 = "claude:7f3e2a10-4b1c-4d5e-9f00-aa11bb22cc33"
S2 = "conversation-2"


def _add(tenant, content, caller=None, **fields):
    memory = tenant.call("memory_add", caller, content=content, **fields).memory
    time.sleep(0.002)  # distinct milliseconds: creation order is id order
    return memory


def test_add_stores_and_returns_the_session(tenant):
    added = _add(tenant, "the deploy runs on fridays", session=S1)

    assert added.session == S1
    assert tenant.call("memory_get", id=added.id).memory.session == S1
    assert _add(tenant, "no session here").session is None


@pytest.mark.parametrize("bad", ["", "has space", "x" * 129, "tab\there", "ünïcode"])
def test_a_malformed_session_is_refused_and_nothing_is_saved(tenant, bad):
    with pytest.raises(InvalidRequest):
        tenant.call("memory_add", content="never saved", session=bad)

    assert tenant.call("memory_search", q="never saved").memories == []


def test_update_cannot_change_the_session(tenant):
    added = _add(tenant, "a fixed session", session=S1)

    with pytest.raises(InvalidRequest):
        tenant.call("memory_update", id=added.id, session=S2)

    edited = tenant.call("memory_update", id=added.id, content="edited, same session").memory
    assert edited.session == S1


def test_every_search_tool_filters_by_session(tenant):
    mine = _add(tenant, "cache the pricing table", session=S1)
    _add(tenant, "cache the pricing table too", session=S2)
    _add(tenant, "cache the pricing table, no session")

    assert [m.id for m in tenant.call("memory_search", q="pricing", session=S1).memories] == [mine.id]
    assert [m.id for m in tenant.call("memory_search", q="", session=S1).memories] == [mine.id]
    assert [r.reference for r in tenant.call("search_memory", query="pricing", session=S1).results] == [mine.id]
    assert [r.reference for r in tenant.call("recall", query="pricing table", session=S1, limit=10).results] == [
        mine.id
    ]
    packed = tenant.call("recall_context", query="pricing", session=S1, output_json=True)
    assert [item.reference for item in packed.items] == [mine.id]


def test_a_miss_names_the_session_filter_that_excluded_the_matches(tenant):
    _add(tenant, "rotate the signing keys monthly", session=S1)

    answer = tenant.call("search_memory", query="signing keys", session=S2)

    assert (answer.matched, answer.no_match.cause) == (False, "filtered_out")
    assert "but session excludes" in answer.no_match.reason


def test_export_and_import_keep_the_session(tenant):
    _add(tenant, "exported with its session", session=S1)
    _add(tenant, "exported without one")
    ports = tenant.svc.ports
    exported = list(transfer.export_project(ports, tenant.project))
    copy = tenancy.create_project(ports, tenant.workspace_id, "copy")

    transfer.import_records(ports, copy, lambda: exported)

    again = {r.content: r.session for r in transfer.export_project(ports, copy)}
    assert again == {"exported with its session": S1, "exported without one": None}


# ---- MemoryStore.neighbours -----------------------------------------------------------------


def _records(tenant, memories):
    """The scope of the tenant's project and the stored records of ``memories``."""
    where = Scope(tenant.workspace_id, tenant.project.id)
    return where, [tenant.svc.ports.store.get(where, m.id) for m in memories]


def _visible(now=None, teams=None):
    return MemoryFilter(now=now or utc_now(), visible_teams=teams)


def _ids(found):
    return {anchor: [r.content for r in records] for anchor, records in found.items()}


def test_neighbours_are_the_memories_just_before_and_after_in_the_session(tenant):
    a1 = _add(tenant, "a1", session=S1)
    _add(tenant, "b1", session=S2)
    a2 = _add(tenant, "a2", session=S1)
    _add(tenant, "loose")
    a3 = _add(tenant, "a3", session=S1)
    a4 = _add(tenant, "a4", session=S1)
    scope, (r1, r2, r4) = _records(tenant, [a1, a2, a4])

    found = tenant.svc.ports.store.neighbours(scope, [r1, r2, r4], _visible())

    assert _ids(found) == {a1.id: ["a2"], a2.id: ["a1", "a3"], a4.id: ["a3"]}
    two = tenant.svc.ports.store.neighbours(scope, [r2], _visible(), per_side=2)
    assert _ids(two) == {a2.id: ["a1", "a3", "a4"]}
    assert a3.id not in found


def test_neighbours_without_a_session_are_adjacent_in_the_project(tenant):
    _add(tenant, "first", session=S1)
    middle = _add(tenant, "middle")
    _add(tenant, "last", session=S2)
    tagged = _add(tenant, "tagged", session=S2)
    scope, (rm, rt) = _records(tenant, [middle, tagged])

    found = tenant.svc.ports.store.neighbours(scope, [rm], _visible())
    across = tenant.svc.ports.store.neighbours(scope, [rt], _visible(), same_session=False)

    assert _ids(found) == {middle.id: ["first", "last"]}
    assert _ids(across) == {tagged.id: ["last"]}


def test_deleted_expired_and_hidden_neighbours_are_skipped_not_gaps(tenant):
    red = tenant.key(["memory:read", "memory:write"], team_ids=["red"])
    _add(tenant, "far before", session=S1)
    gone = _add(tenant, "deleted", session=S1)
    anchor = _add(tenant, "anchor", session=S1)
    _add(tenant, "red only", red, session=S1, team_id="red")
    soon = _add(tenant, "expires", session=S1, expires_at=utc_now() + timedelta(minutes=5))
    _add(tenant, "far after", session=S1)
    tenant.call("memory_delete", id=gone.id)
    scope, (ra, _) = _records(tenant, [anchor, soon])
    later = utc_now() + timedelta(minutes=10)  # the "expires" memory is expired by then

    unteamed = tenant.svc.ports.store.neighbours(scope, [ra], _visible(now=later, teams=frozenset()))
    as_red = tenant.svc.ports.store.neighbours(scope, [ra], _visible(teams=frozenset({"red"})))

    assert _ids(unteamed) == {anchor.id: ["far before", "far after"]}
    assert _ids(as_red) == {anchor.id: ["far before", "red only"]}


def test_neighbours_never_cross_projects(tenant):
    _add(tenant, "home before", session=S1)
    anchor = _add(tenant, "home anchor", session=S1)
    other = tenancy.create_project(tenant.svc.ports, tenant.workspace_id, "other")
    tenant.call("memory_add", content="other project, same session", session=S1, project="other")
    scope, (ra,) = _records(tenant, [anchor])

    found = tenant.svc.ports.store.neighbours(scope, [ra], _visible())
    elsewhere = tenant.svc.ports.store.neighbours(Scope(tenant.workspace_id, other.id), [ra], _visible())

    assert _ids(found) == {anchor.id: ["home before"]}
    assert elsewhere == {anchor.id: []}
