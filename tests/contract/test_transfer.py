"""Export and import of a project (docs/contract.md §6 CLI): a lossless round trip, on every backend."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from mnemo.errors import Conflict, InvalidRequest, NotFound, SecretDetected
from mnemo.models.admin import ExportedMemory
from mnemo.models.common import utc_now
from mnemo.ports import Scope, VersionConflict
from mnemo.service import tenancy, transfer
from pydantic import ValidationError

from tests.contract.conftest import new_tenant


def _fill(tenant):
    """A project with every kind of field: teams, tags, paths, expiry, several versions, CJK."""
    member = tenant.key(["memory:read", "memory:write"], team_ids=["red"])
    later = utc_now() + timedelta(days=30)
    tenant.call("memory_add", content="pricing decision: annual plans get 2 months free", kind="decision")
    tenant.call("memory_add", member, content="red team launch plan", team_id="red", tags=["launch", "q3"])
    tenant.call(
        "memory_add", content="数据库延迟很高，需要加缓存", path="infra/db", source="claude-code", session="s-1"
    )
    edited = tenant.call("memory_add", content="draft one", kind="working", expires_at=later).memory
    time.sleep(0.002)
    tenant.call("memory_update", id=edited.id, content="draft two", tags=["edited"])
    tenant.call("memory_update", id=edited.id, path="notes/drafts")


def _without_home(records):
    return [r.model_dump(exclude={"workspace_id", "project_id"}) for r in records]


def test_export_then_import_into_an_empty_project_reproduces_it(tenant):
    _fill(tenant)
    ports = tenant.svc.ports
    exported = list(transfer.export_project(ports, tenant.project))
    copy = tenancy.create_project(ports, tenant.workspace_id, "copy")

    report = transfer.import_records(ports, copy, lambda: exported)

    assert sorted(report.imported) == sorted(r.id for r in exported) and report.skipped == []
    reimported = list(transfer.export_project(ports, copy))
    assert _without_home(reimported) == _without_home(exported)
    assert {(r.workspace_id, r.project_id) for r in reimported} == {(tenant.workspace_id, copy.id)}
    assert max(r.version for r in reimported) == 3


def test_imported_memories_are_searchable_and_keep_their_team(tenant):
    _fill(tenant)
    ports = tenant.svc.ports
    exported = list(transfer.export_project(ports, tenant.project))
    copy = tenancy.create_project(ports, tenant.workspace_id, "copy")
    outsider = tenant.key(["memory:read"])

    transfer.import_records(ports, copy, lambda: exported)

    found = tenant.call("memory_search", q="延迟", project="copy").memories
    assert [m.content for m in found] == ["数据库延迟很高，需要加缓存"]
    assert [m.team_id for m in tenant.call("memory_search", q="launch", project="copy").memories] == ["red"]
    assert tenant.call("memory_search", outsider, q="launch", project="copy").memories == []
    original = {m.id: m for m in tenant.call("memory_search", q="", limit=100).memories}
    for memory in tenant.call("memory_search", q="", limit=100, project="copy").memories:
        assert tenant.call("memory_get", id=memory.id, project="copy").memory == original[memory.id]


def test_import_refuses_records_of_another_workspace_unless_forced(svc, tenant):
    _fill(tenant)
    other = new_tenant(svc, "other")
    exported = list(transfer.export_project(svc.ports, tenant.project))

    with pytest.raises(InvalidRequest):
        transfer.import_records(svc.ports, other.project, lambda: exported)
    assert other.call("memory_search", q="").memories == []

    transfer.import_records(svc.ports, other.project, lambda: exported, force_workspace=True)

    moved = list(transfer.export_project(svc.ports, other.project))
    assert _without_home(moved) == _without_home(exported)
    assert {r.workspace_id for r in moved} == {other.workspace_id}
    assert len(other.call("memory_search", q="pricing").memories) == 1


def test_existing_ids_fail_the_whole_import_before_anything_is_written(tenant):
    _fill(tenant)
    ports = tenant.svc.ports
    exported = list(transfer.export_project(ports, tenant.project))
    copy = tenancy.create_project(ports, tenant.workspace_id, "copy")
    transfer.import_records(ports, copy, lambda: exported[:2])
    tenant.call("memory_delete", id=exported[0].id, project="copy")

    with pytest.raises(Conflict):
        transfer.import_records(ports, copy, lambda: exported)

    assert [r.id for r in transfer.export_project(ports, copy)] == [exported[1].id]


def test_existing_ids_are_skipped_when_asked(tenant):
    _fill(tenant)
    ports = tenant.svc.ports
    exported = list(transfer.export_project(ports, tenant.project))
    copy = tenancy.create_project(ports, tenant.workspace_id, "copy")
    transfer.import_records(ports, copy, lambda: exported[:2])

    report = transfer.import_records(ports, copy, lambda: exported, on_existing="skip")

    assert report.skipped == [r.id for r in exported[:2]]
    assert _without_home(transfer.export_project(ports, copy)) == _without_home(exported)


def test_an_id_twice_in_the_input_is_refused(tenant):
    _fill(tenant)
    ports = tenant.svc.ports
    exported = list(transfer.export_project(ports, tenant.project))
    copy = tenancy.create_project(ports, tenant.workspace_id, "copy")

    with pytest.raises(InvalidRequest):
        transfer.import_records(ports, copy, lambda: [*exported, exported[0]])
    assert list(transfer.export_project(ports, copy)) == []


def test_export_pages_through_the_whole_project_and_nothing_else(tenant, monkeypatch):
    monkeypatch.setattr(transfer, "PAGE", 2)
    ids = {tenant.call("memory_add", content=f"note {i}").memory.id for i in range(5)}
    tenant.call(
        "memory_add", content="elsewhere", project=tenancy.create_project(tenant.svc.ports, tenant.workspace_id, "x").id
    )

    exported = [r.id for r in transfer.export_project(tenant.svc.ports, tenant.project)]

    assert exported == sorted(ids)


def test_export_leaves_out_expired_memories_unless_asked(tenant):
    kept = tenant.call("memory_add", content="kept").memory
    expiring = tenant.call("memory_add", content="expiring", expires_at=utc_now() + timedelta(hours=1)).memory
    later = utc_now() + timedelta(hours=2)

    default = [r.id for r in transfer.export_project(tenant.svc.ports, tenant.project, now=later)]
    everything = [
        r.id for r in transfer.export_project(tenant.svc.ports, tenant.project, now=later, include_expired=True)
    ]

    assert default == [kept.id]
    assert sorted(everything) == sorted([kept.id, expiring.id])


def test_the_store_refuses_a_second_record_with_the_same_id_in_a_project(tenant):
    memory = tenant.call("memory_add", content="once").memory
    record = tenant.svc.ports.store.get(Scope(tenant.workspace_id, tenant.project.id), memory.id)

    with pytest.raises(VersionConflict):
        tenant.svc.ports.store.create(record.model_copy(update={"content": "twice"}))
    assert tenant.call("memory_get", id=memory.id).memory.content == "once"


def test_scan_project_pages_in_id_order_within_one_project(svc, tenant):
    other = new_tenant(svc, "other")
    mine = sorted(tenant.call("memory_add", content=f"mine {i}").memory.id for i in range(3))
    other.call("memory_add", content="theirs")
    scope = Scope(tenant.workspace_id, tenant.project.id)

    first = svc.ports.store.scan_project(scope, limit=2)
    second = svc.ports.store.scan_project(scope, cursor=first.cursor, limit=2)

    assert [r.id for r in first.items] == mine[:2] and first.cursor is not None
    assert [r.id for r in second.items] == mine[2:] and second.cursor is None


def test_export_of_an_unknown_project_is_not_found(svc, tenant):
    other = new_tenant(svc, "other")

    with pytest.raises(NotFound):
        tenancy.project(svc.ports, tenant.workspace_id, other.project.id)


def _as_lines(ports, project):
    """The project as `mnemo export` writes it: one JSON line per memory, history included."""
    records = transfer.export_project(ports, project)
    return [
        ExportedMemory.of(e.record, e.versions, e.dropped).model_dump_json()
        for e in transfer.with_history(ports, records)
    ]


def _from_lines(lines):
    parsed = [ExportedMemory.model_validate_json(line) for line in lines]
    return [transfer.Entry(p.record(), tuple(p.versions()), p.history_dropped) for p in parsed]


def _told(tenant, memory_id, project):
    history = tenant.call("memory_history", id=memory_id, project=project)
    return history.memory, history.versions, history.dropped, history.supersedes, history.superseded_by


def test_an_export_file_carries_history_and_supersession_marks_losslessly(tenant, monkeypatch):
    monkeypatch.setattr("mnemo.ports.values.MAX_VERSIONS", 3)  # five updates: two versions dropped, counted
    old = tenant.call("memory_add", content="deploys happen on Fridays", kind="decision").memory
    for n in range(2, 7):
        tenant.call("memory_update", id=old.id, content=f"deploys happen on Fridays, draft {n}", tags=[f"d{n}"])
    new = tenant.call("memory_add", content="deploys moved to Tuesdays", supersedes=[old.id]).memory
    plain = tenant.call("memory_add", content="the staging database is postgres 16").memory
    ports = tenant.svc.ports
    lines = _as_lines(ports, tenant.project)
    copy = tenancy.create_project(ports, tenant.workspace_id, "copy")

    transfer.import_records(ports, copy, lambda: _from_lines(lines))

    for memory_id in (old.id, new.id, plain.id):
        assert _told(tenant, memory_id, "copy") == _told(tenant, memory_id, "default")
    memory, versions, dropped, _, chain = _told(tenant, old.id, "copy")
    assert (memory.version, [v.version for v in versions], dropped, chain) == (7, [6, 5, 4], 3, [new.id])
    assert memory.superseded_by == new.id and memory.superseded_at is not None
    assert [m.id for m in tenant.call("memory_search", q="deploys", project="copy").memories] == [new.id]
    assert _as_lines(ports, copy) == [line.replace(tenant.project.id, copy.id) for line in lines]


def test_a_secret_in_a_kept_version_refuses_the_whole_import(tenant):
    ports = tenant.svc.ports
    memory = tenant.call("memory_add", content="the deploy token lives in the vault").memory
    tenant.call("memory_update", id=memory.id, content="the deploy token lives in the vault, rotated monthly")
    entry = next(transfer.with_history(ports, transfer.export_project(ports, tenant.project)))
    leaked = entry.versions[0].model_copy(update={"content": "token: ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2})
    copy = tenancy.create_project(ports, tenant.workspace_id, "copy")

    with pytest.raises(SecretDetected, match="version 1"):
        transfer.import_records(ports, copy, lambda: [transfer.Entry(entry.record, (leaked,))])
    assert tenant.call("memory_search", q="", project="copy").memories == []


@pytest.mark.parametrize(
    ("history", "dropped"),
    [([3], 0), ([1, 2], 0), ([2, 2], 0), ([], 4)],
    ids=["not older", "oldest first", "twice", "dropped without history"],
)
def test_an_export_line_with_an_impossible_history_is_refused(tenant, history, dropped):
    tenant.call("memory_update", id=(m := tenant.call("memory_add", content="three versions").memory).id, tags=["a"])
    tenant.call("memory_update", id=m.id, tags=["b"])
    line = json.loads(_as_lines(tenant.svc.ports, tenant.project)[0])
    kept = {v["version"]: v for v in line["history"]}
    line["history"] = [{**kept.get(n, kept[1]), "version": n} for n in history]
    line["history_dropped"] = dropped

    with pytest.raises(ValidationError, match="history"):
        ExportedMemory.model_validate(line)


def test_the_admin_export_carries_history_and_marks(tenant):
    old = tenant.call("memory_add", content="lunch is at noon").memory
    tenant.call("memory_update", id=old.id, content="lunch is at half past twelve")
    new = tenant.call("memory_add", content="lunch moved to one", supersedes=[old.id]).memory

    page = tenant.svc.invoke("admin_project_export", tenant.admin, {"project": "default"}).result

    assert [m.model_dump_json() for m in page.memories] == _as_lines(tenant.svc.ports, tenant.project)
    first = page.memories[0]
    assert (first.id, first.superseded_by, [v.content for v in first.history]) == (
        old.id,
        new.id,
        ["lunch is at half past twelve", "lunch is at noon"],
    )


def test_the_admin_export_cuts_a_page_of_big_histories_at_a_memory(tenant, monkeypatch):
    monkeypatch.setattr("mnemo.service.admin.EXPORT_PAGE_BYTES", 2000)
    ids = []
    for n in range(4):
        memory = tenant.call("memory_add", content=f"note {n} " + "x" * 600).memory
        tenant.call("memory_update", id=memory.id, content=f"note {n} " + "y" * 600)
        ids.append(memory.id)

    seen, cursor, pages = [], None, 0
    while True:
        arguments = {"project": "default", **({"cursor": cursor} if cursor else {})}
        page = tenant.svc.invoke("admin_project_export", tenant.admin, arguments).result
        seen += [m.id for m in page.memories]
        pages += 1
        assert page.memories and len(page.memories) < 4
        cursor = page.cursor
        if cursor is None:
            break

    assert seen == sorted(ids) and pages >= 2
