"""The workspace's secret check (docs/contract.md §4, ``secret_detected``), on every backend: on
by default, turned off and on again by the workspace's admin (``admin_privacy_set``) or the operator
(``tenancy.set_secret_check``), followed by the very next write (memory_add, memory_update,
import), for that workspace only. ``<private>`` spans are removed whatever the setting."""

from __future__ import annotations

import pytest
from mnemo.errors import Forbidden, InvalidRequest, SecretDetected
from mnemo.service import tenancy, transfer
from mnemo.service.identity import DELETE, READ, WRITE

from tests.contract.conftest import new_tenant

# built from parts so that no complete credential sits in the repository's text
AWS_ID = "AKIA" + "Z7QW3RTY5UIOPASD"
GH = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
NOTE = f"the deploy bucket is reached with {AWS_ID}"


def _set(tenant, on: bool, caller=None):
    return tenant.svc.invoke("admin_privacy_set", caller or tenant.admin, {"secret_check": on}).result


def _shown(tenant, caller=None) -> bool:
    return tenant.svc.invoke("admin_privacy_get", caller or tenant.admin, {}).result.secret_check


def _contents(tenant) -> list[str]:
    return sorted(r.content for r in transfer.export_project(tenant.svc.ports, tenant.project))


def test_by_default_a_write_holding_a_secret_is_refused_and_nothing_is_stored(tenant):
    assert _shown(tenant) is True
    with pytest.raises(SecretDetected) as refused:
        tenant.call("memory_add", content=NOTE)

    assert "aws_access_key_id" in refused.value.message and AWS_ID not in refused.value.message
    assert _contents(tenant) == []


def test_turned_off_the_same_content_is_stored_as_given_and_private_spans_still_go(tenant):
    shown = _set(tenant, False)
    assert (shown.workspace_id, shown.secret_check, _shown(tenant)) == (tenant.workspace_id, False, False)

    added = tenant.call("memory_add", content=NOTE, tags=[GH]).memory
    updated = tenant.call("memory_update", id=added.id, content=f"{NOTE}, CI uses {GH}<private>mine</private>")

    got = tenant.call("memory_get", id=added.id).memory
    assert (got.content, got.tags, got.version) == (f"{NOTE}, CI uses {GH}", [GH], 2)
    assert updated.memory.content == got.content
    with pytest.raises(InvalidRequest, match="empty once its <private> spans are removed"):
        tenant.call("memory_add", content="<private>only this</private>")


def test_turned_on_again_the_next_write_is_refused(tenant):
    _set(tenant, False)
    kept = tenant.call("memory_add", content="plain note before").memory

    assert _set(tenant, True).secret_check is True
    with pytest.raises(SecretDetected):
        tenant.call("memory_add", content=NOTE)
    with pytest.raises(SecretDetected):
        tenant.call("memory_update", id=kept.id, content=NOTE)
    assert _contents(tenant) == ["plain note before"]


def test_the_operator_turns_it_off_and_on_straight_on_the_store(tenant):
    assert tenancy.set_secret_check(tenant.svc.ports, tenant.workspace_id, False).secret_check is False
    tenant.call("memory_add", content=NOTE)

    tenancy.set_secret_check(tenant.svc.ports, tenant.workspace_id, True)
    with pytest.raises(SecretDetected):
        tenant.call("memory_add", content=f"{NOTE} again")
    assert (_contents(tenant), _shown(tenant)) == ([NOTE], True)


def test_another_workspace_keeps_its_own_setting(svc, tenant):
    other = new_tenant(svc, "other")
    _set(tenant, False)

    tenant.call("memory_add", content=NOTE)
    with pytest.raises(SecretDetected):
        other.call("memory_add", content=NOTE)
    assert (_shown(other), _contents(other)) == (True, [])

    _set(other, False)
    _set(tenant, True)
    other.call("memory_add", content=NOTE)
    with pytest.raises(SecretDetected):
        tenant.call("memory_add", content=f"{NOTE} again")


def test_a_key_without_the_admin_scope_can_neither_change_nor_see_it(tenant):
    member = tenant.key([READ, WRITE, DELETE])

    with pytest.raises(Forbidden):
        _set(tenant, False, member)
    with pytest.raises(Forbidden):
        _shown(tenant, member)

    assert _shown(tenant) is True
    with pytest.raises(SecretDetected):
        tenant.call("memory_add", member, content=NOTE)


def test_an_import_follows_the_target_workspaces_setting(tenant):
    ports = tenant.svc.ports
    _set(tenant, False)
    tenant.call("memory_add", content=NOTE)
    exported = list(transfer.export_project(ports, tenant.project))
    copy = tenancy.create_project(ports, tenant.workspace_id, "copy")

    _set(tenant, True)
    with pytest.raises(SecretDetected):
        transfer.import_records(ports, copy, lambda: exported)
    assert list(transfer.export_project(ports, copy)) == []

    _set(tenant, False)
    report = transfer.import_records(ports, copy, lambda: exported)
    assert report.imported == [exported[0].id]
    assert [r.content for r in transfer.export_project(ports, copy)] == [NOTE]
