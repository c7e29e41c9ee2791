"""Real access tokens from a real Keycloak (tests/support/keycloak.py) against a real ``mnemo serve``:
what an MCP gateway does with client credentials, on REST and MCP alike (docs/auth.md).

Keycloak starts once per session (minutes on a loaded machine: the generous timeout)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.hardening.conftest import UNLIMITED, mcp_call, rest_call, send
from tests.support.keycloak import GATEWAY_SECRET, OTHER_SECRET, KeycloakNode
from tests.support.server import RunningServer, start_server, stop_server

pytestmark = [pytest.mark.slow, pytest.mark.keycloak, pytest.mark.timeout(1200)]


@dataclass
class Deployment:
    server: RunningServer
    keycloak: KeycloakNode
    other_workspace: str


@pytest.fixture(scope="module")
def deployment(keycloak_node: KeycloakNode, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    env = {
        **UNLIMITED,
        "MNEMO_OAUTH_ISSUERS": keycloak_node.issuer,
        "MNEMO_OAUTH_RESOURCE": keycloak_node.resource,
        "MNEMO_OAUTH_GROUP_CLAIMS": "groups",
    }
    data_dir = tmp_path_factory.mktemp("mnemo-keycloak")
    server = start_server(data_dir, env)
    try:
        cli_env = {**os.environ, **env, "MNEMO_DATA_DIR": str(data_dir)}

        def cli(*args: str) -> dict:
            proc = subprocess.run(
                [sys.executable, "-m", "mnemo.local.cli", *args, "--json"],
                env=cli_env,
                capture_output=True,
                text=True,
                check=True,
                timeout=120,
            )
            return json.loads(proc.stdout)

        other = cli("workspace", "create", "other")["workspace"]["id"]
        cli("principal", "add", "--workspace", other, "--client", "mnemo-other", "--scope", "memory:read,memory:write")
        bound = send(
            server,
            "/v1/admin/principals",
            json.dumps(
                {"kind": "client", "value": "mnemo-gateway", "scopes": ["memory:read", "memory:write"]}
            ).encode(),
        )
        assert bound.status == 201, bound.raw
        yield Deployment(server, keycloak_node, other)
    finally:
        server.banner = stop_server(server)


def gateway_token(deployment: Deployment, scope: str | None = None) -> str:
    return deployment.keycloak.client_token("mnemo-gateway", GATEWAY_SECRET, scope)


def test_a_client_credentials_token_writes_over_rest_and_reads_over_mcp(deployment):
    token = gateway_token(deployment)

    added = rest_call(deployment.server, "memory_add", {"content": "the gateway saved this"}, key=token)
    found = mcp_call(deployment.server, "memory_search", {"q": "gateway saved"}, key=token)

    assert added.ok, added.body
    assert added.body["memory"]["source"] == "client:mnemo-gateway"
    assert found.ok and [m["id"] for m in found.body["memories"]] == [added.body["memory"]["id"]]


def test_the_token_shows_as_its_binding_in_whoami(deployment):
    me = send(deployment.server, "/v1/whoami", None, method="GET", key=gateway_token(deployment)).body

    assert me["key"]["label"] == "client:mnemo-gateway"
    assert sorted(me["key"]["scopes"]) == ["memory:read", "memory:write"]


def test_an_admin_scope_from_keycloak_does_not_exceed_the_binding(deployment):
    token = gateway_token(deployment, scope="admin")

    reply = send(deployment.server, "/v1/admin/keys", None, method="GET", key=token)

    assert reply.status == 403
    assert reply.body["code"] == "forbidden"


def test_another_clients_token_acts_in_its_own_workspace_only(deployment):
    rest_call(deployment.server, "memory_add", {"content": "only the default workspace has this"})
    theirs = deployment.keycloak.client_token("mnemo-other", OTHER_SECRET)

    found = mcp_call(deployment.server, "memory_search", {"q": "default workspace has this"}, key=theirs)
    me = send(deployment.server, "/v1/whoami", None, method="GET", key=theirs).body

    assert found.ok and found.body["memories"] == []
    assert me["workspace"]["id"] == deployment.other_workspace


def test_a_keycloak_token_for_another_audience_is_refused(deployment, tmp_path):
    """The same realm's token, presented to a Mnemo that is another resource: 401, not accepted."""
    server = start_server(
        tmp_path / "elsewhere",
        {"MNEMO_OAUTH_ISSUERS": deployment.keycloak.issuer, "MNEMO_OAUTH_RESOURCE": "https://elsewhere.example"},
    )
    try:
        reply = send(server, "/v1/tools/memory_search", b"{}", key=gateway_token(deployment))
    finally:
        stop_server(server)

    assert reply.status == 401
    assert 'error="invalid_token"' in reply.headers["www-authenticate"]
