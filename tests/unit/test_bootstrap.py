"""The first start's rules in the service (``tenancy.bootstrap`` and the checks ``mnemo serve``
makes with it), on the SQLite backend; tests/e2e/test_first_start.py runs them through the CLI."""

from __future__ import annotations

import pytest
from mnemo.errors import InvalidRequest
from mnemo.service import tenancy
from mnemo.service.identity import ADMIN, READ


def test_a_short_key_is_refused_before_the_workspace_is_written(sqlite_backend):
    with pytest.raises(InvalidRequest, match="at least 16"):
        tenancy.bootstrap(sqlite_backend, plain_key="short")

    assert sqlite_backend.tenants.is_empty()


def test_an_empty_store_gets_the_default_workspace_and_the_chosen_admin_key(sqlite_backend):
    created = tenancy.bootstrap(sqlite_backend, plain_key="chosen-key-0123456789")

    assert created is not None and created.plain == "chosen-key-0123456789" and created.key.scopes == [ADMIN]
    (workspace,) = sqlite_backend.tenants.list_workspaces()
    assert workspace.name == tenancy.BOOTSTRAP_WORKSPACE and created.key.workspace_id == workspace.id
    assert tenancy.bootstrap(sqlite_backend) is None  # once only


def test_a_bootstrap_stopped_between_its_writes_is_finished_once(sqlite_backend):
    workspace, _ = tenancy.create_workspace(sqlite_backend, tenancy.BOOTSTRAP_WORKSPACE)

    finished = tenancy.bootstrap(sqlite_backend)

    assert finished is not None and finished.key.workspace_id == workspace.id
    assert len(sqlite_backend.tenants.list_workspaces()) == 1
    assert tenancy.bootstrap(sqlite_backend) is None


@pytest.mark.parametrize("other", ["second-workspace", "a-key"])
def test_only_that_exact_leftover_is_finished(sqlite_backend, other):
    workspace, _ = tenancy.create_workspace(sqlite_backend, tenancy.BOOTSTRAP_WORKSPACE)
    if other == "second-workspace":
        tenancy.create_workspace(sqlite_backend, "acme")
    else:
        key = tenancy.create_key(sqlite_backend, workspace.id, label="reader", scopes=[READ])
        tenancy.revoke_key(sqlite_backend, workspace.id, key.key.id)  # even a revoked key counts

    assert tenancy.bootstrap(sqlite_backend) is None


def test_a_workspace_named_otherwise_is_never_given_a_key(sqlite_backend):
    tenancy.create_workspace(sqlite_backend, "acme")

    assert tenancy.bootstrap(sqlite_backend) is None


def test_registered_key_knows_the_secret_not_just_the_id(sqlite_backend):
    created = tenancy.bootstrap(sqlite_backend, plain_key="chosen-key-0123456789")
    assert created is not None

    assert tenancy.registered_key(sqlite_backend, "chosen-key-0123456789") == created.key
    assert tenancy.registered_key(sqlite_backend, "another-key-0123456789") is None
    tenancy.revoke_key(sqlite_backend, created.key.workspace_id, created.key.id)
    found = tenancy.registered_key(sqlite_backend, "chosen-key-0123456789")
    assert found is not None and found.revoked


def test_without_admin_key_names_the_workspaces_only_when_none_has_one(sqlite_backend):
    assert tenancy.without_admin_key(sqlite_backend) == []  # an empty store: nothing to say
    acme, _ = tenancy.create_workspace(sqlite_backend, "acme")
    tenancy.create_key(sqlite_backend, acme.id, label="reader", scopes=[READ])
    assert [w.id for w in tenancy.without_admin_key(sqlite_backend) or []] == [acme.id]

    admin = tenancy.create_key(sqlite_backend, acme.id, label="admin", scopes=[ADMIN])
    assert tenancy.without_admin_key(sqlite_backend) is None
    tenancy.revoke_key(sqlite_backend, acme.id, admin.key.id)
    assert tenancy.without_admin_key(sqlite_backend) is not None
