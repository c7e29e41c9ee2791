"""OAuth principals bound to workspaces (docs/auth.md), on every backend: the bindings the
TenantStore keeps, and what a verified token may do through them.

The token verifier is a fake of our own port (``ClaimsOf``: a token string names its claims), so
these tests judge the binding and the pipeline; signatures and claims checks are
tests/unit/test_oauth_verifier.py's, real tokens tests/integration/test_keycloak_tokens.py's."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import pytest
from mnemo.errors import Conflict, Forbidden, InvalidToken, NotFound, RateLimited
from mnemo.models.records import RateLimits
from mnemo.service import principals, tenancy
from mnemo.service.identity import ADMIN, DELETE, READ, WRITE
from mnemo.service.principals import TokenAuth

from tests.contract.conftest import IndexerKeepsUp, Tenant, new_tenant


class ClaimsOf:
    """The ``TokenVerifier`` port, faked: ``"eyJ.<name>.sig"`` is valid with ``claims[name]``. Each
    test has an issuer of its own: on AWS the tenant table outlives a test, and a principal binds
    once per deployment."""

    def __init__(self) -> None:
        self.issuer = f"https://idp.example/realms/{uuid.uuid4().hex}"
        self.claims: dict[str, dict[str, Any]] = {}

    def issue(self, name: str, **claims: Any) -> str:
        self.claims[name] = {"iss": self.issuer, **claims}
        return f"Bearer eyJ.{name}.sig"

    def verify(self, token: str) -> Mapping[str, Any]:
        name = token.split(".")[1]
        if name not in self.claims:
            raise InvalidToken("not a token")
        return self.claims[name]


@pytest.fixture
def tokens() -> ClaimsOf:
    return ClaimsOf()


@pytest.fixture
def osvc(ports, indexer, tokens) -> IndexerKeepsUp:
    auth = TokenAuth(verifier=tokens, issuers=(tokens.issuer,), group_claims=("groups",))
    return IndexerKeepsUp(ports, indexer, tokens=auth)


@pytest.fixture
def org(osvc) -> Tenant:
    return new_tenant(osvc, "org")


def bind(tenant: Tenant, kind: str, value: str, scopes: list[str], **kwargs: Any):
    issuer = tenant.svc.tokens.issuers[0]  # type: ignore[union-attr]
    return principals.bind(
        tenant.svc.ports, tenant.workspace_id, issuer=issuer, kind=kind, value=value, scopes=scopes, **kwargs
    )


# ---- the bindings ---------------------------------------------------------------------------


def test_a_bound_principal_is_listed_and_removed(org):
    bound = bind(org, "sub", "alice", [READ, WRITE], label="Alice")

    assert [p.id for p in principals.list_bound(org.svc.ports, org.workspace_id)] == [bound.id]
    assert org.svc.ports.tenants.get_principal(bound.id) == bound
    principals.remove(org.svc.ports, org.workspace_id, bound.id)
    assert principals.list_bound(org.svc.ports, org.workspace_id) == []
    assert org.svc.ports.tenants.get_principal(bound.id) is None


def test_a_principal_binds_to_one_workspace_only(osvc, org):
    other = new_tenant(osvc, "other")
    bind(org, "sub", "alice", [READ])

    with pytest.raises(Conflict) as refused:
        bind(other, "sub", "alice", [ADMIN])
    assert org.workspace_id not in refused.value.message


def test_another_workspace_cannot_remove_a_binding_and_it_keeps_working(osvc, org, tokens):
    other = new_tenant(osvc, "other")
    bound = bind(org, "sub", "alice", [READ])

    with pytest.raises(NotFound):
        principals.remove(other.svc.ports, other.workspace_id, bound.id)
    assert osvc.authenticate(tokens.issue("a", sub="alice", scope="memory:read")).workspace_id == org.workspace_id


def test_the_same_value_at_another_issuer_or_of_another_kind_is_another_principal(org):
    ids = {
        bind(org, "sub", "x", [READ]).id,
        bind(org, "client", "x", [READ]).id,
        bind(org, "group", "x", [READ]).id,
        principals.bind(
            org.svc.ports,
            org.workspace_id,
            issuer=org.svc.tokens.issuers[0] + "2",
            kind="sub",
            value="x",
            scopes=[READ],
        ).id,
    }
    assert len(ids) == 4


# ---- tokens through the pipeline ------------------------------------------------------------


def test_a_token_bound_to_nothing_is_forbidden(osvc, org, tokens):
    bind(org, "sub", "alice", [ADMIN])

    with pytest.raises(Forbidden):
        osvc.authenticate(tokens.issue("mallory", sub="mallory", scope="memory:read memory:write admin"))


def test_a_token_acts_in_its_principals_workspace_and_never_sees_another(osvc, org, tokens):
    other = new_tenant(osvc, "other")
    org.call("memory_add", content="org secret plan")
    other.call("memory_add", content="other secret plan")
    bind(other, "sub", "bob", [READ, WRITE])

    bob = osvc.authenticate(tokens.issue("bob", sub="bob", scope="memory:read memory:write"))
    found = org.call("memory_search", bob, q="secret")

    assert bob.workspace_id == other.workspace_id
    assert [m.content for m in found.memories] == ["other secret plan"]
    with pytest.raises(NotFound):
        org.call("memory_search", bob, q="secret", project=org.project.id)


def test_a_tokens_scopes_are_its_own_narrowed_by_its_binding(osvc, org, tokens):
    bind(org, "sub", "reader", [READ])
    bind(org, "sub", "writer", [ADMIN])

    reader = osvc.authenticate(tokens.issue("r", sub="reader", scope="openid memory:read memory:write admin"))
    writer = osvc.authenticate(tokens.issue("w", sub="writer", scope="memory:write"))
    none = osvc.authenticate(tokens.issue("n", sub="writer", scope="openid profile"))

    assert reader.scopes == {READ}
    assert writer.scopes == {WRITE}
    assert none.scopes == frozenset()
    with pytest.raises(Forbidden):
        org.call("memory_add", reader, content="not allowed")
    assert org.call("memory_add", writer, content="allowed").memory.source == "sub:writer"


def test_admin_needs_admin_in_both_the_token_and_the_binding(osvc, org, tokens):
    bind(org, "sub", "boss", [ADMIN])

    assert osvc.authenticate(tokens.issue("b", sub="boss", scope="admin")).is_admin
    assert osvc.authenticate(
        tokens.issue("b2", sub="boss", scope=["memory:read", "memory:delete"], scp=None)
    ).scopes == {
        READ,
        DELETE,
    }


def test_a_client_credentials_token_is_bound_by_its_client(osvc, org, tokens):
    bind(org, "client", "gateway", [READ], default_project="default", team_ids=["ops"])

    caller = osvc.authenticate(tokens.issue("g", sub="3f1c-service-account", client_id="gateway", scope="memory:read"))

    assert (caller.workspace_id, caller.scopes, caller.team_ids) == (org.workspace_id, {READ}, {"ops"})
    assert caller.default_project_id == org.project.id


def test_the_subjects_own_binding_wins_over_its_groups(osvc, org, tokens):
    other = new_tenant(osvc, "other")
    bind(org, "group", "engineering", [ADMIN])
    bind(other, "sub", "carol", [READ])

    carol = osvc.authenticate(tokens.issue("c", sub="carol", groups=["engineering"], scope="admin memory:read"))

    assert (carol.workspace_id, carol.scopes) == (other.workspace_id, {READ})


def test_groups_merge_their_scopes_and_teams_within_one_workspace(osvc, org, tokens):
    bind(org, "group", "readers", [READ], team_ids=["a"])
    bind(org, "group", "writers", [WRITE], team_ids=["b"])

    dave = osvc.authenticate(
        tokens.issue("d", sub="dave", groups=["readers", "writers"], scope="memory:read memory:write")
    )

    assert (dave.scopes, dave.team_ids) == ({READ, WRITE}, {"a", "b"})


def test_groups_bound_to_two_workspaces_are_refused(osvc, org, tokens):
    other = new_tenant(osvc, "other")
    bind(org, "group", "readers", [READ])
    bind(other, "group", "writers", [WRITE])

    with pytest.raises(Forbidden):
        osvc.authenticate(tokens.issue("e", sub="erin", groups=["readers", "writers"], scope="memory:read"))


def test_a_removed_binding_is_refused_on_its_very_next_call(osvc, org, tokens):
    bound = bind(org, "sub", "frank", [READ])
    token = tokens.issue("f", sub="frank", scope="memory:read")
    org.call("memory_search", osvc.authenticate(token), q="")

    principals.remove(org.svc.ports, org.workspace_id, bound.id)

    with pytest.raises(Forbidden):
        osvc.authenticate(token)


def test_tokens_and_keys_of_a_workspace_share_its_rate_limit(osvc, org, tokens):
    tenancy.set_limits(osvc.ports, org.workspace_id, RateLimits(search=2, write=60))
    bind(org, "sub", "gina", [READ])
    gina = osvc.authenticate(tokens.issue("g", sub="gina", scope="memory:read"))

    org.call("memory_search", q="")
    org.call("memory_search", gina, q="")
    with pytest.raises(RateLimited):
        org.call("memory_search", gina, q="")


def test_an_idempotency_key_replays_for_a_token_as_for_a_key(osvc, org, tokens):
    bind(org, "sub", "hank", [WRITE])
    hank = osvc.authenticate(tokens.issue("h", sub="hank", scope="memory:write"))

    first = org.call("memory_add", hank, content="once", idempotency_key="k-1")
    again = org.call("memory_add", hank, content="once", idempotency_key="k-1")

    assert first.memory.id == again.memory.id


def test_whoami_shows_a_token_as_its_binding(osvc, org, tokens):
    bound = bind(org, "sub", "ivy", [READ], label="Ivy")
    ivy = osvc.authenticate(tokens.issue("i", sub="ivy", scope="memory:read"))

    me = osvc.invoke("whoami", ivy).result

    assert (me.key.id, me.key.label, me.key.scopes) == (bound.id, "Ivy", [READ])
    assert me.workspace.id == org.workspace_id
