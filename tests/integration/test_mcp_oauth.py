"""The official TypeScript SDK's OAuth client (tests/clients/oauth.mjs) against a real ``mnemo serve``
and a real Keycloak, the whole MCP authorization flow as a host runs it (docs/auth.md):

* authorization code + PKCE: the SDK finds everything from the first 401 (``WWW-Authenticate`` →
  Mnemo's protected-resource metadata → Keycloak's metadata), registers itself by anonymous dynamic
  client registration (the test realm's "Trusted Hosts" policy admits 127.0.0.1), sends the user to
  Keycloak (a headless user of plain form posts logs in as alice and accepts the consent page),
  exchanges the code with its verifier and calls tools — 403 while alice is bound to nothing,
  answers once ``mnemo principal`` binds her;
* client credentials: the SDK's ``ClientCredentialsProvider``, what an MCP gateway runs.

Mnemo's resource is its own URL here (the SDK refuses metadata naming another resource). Keycloak
ignores RFC 8707's ``resource`` and stamps the realm's Audience mapper's value, the session node's
``http://mnemo.test``: this Mnemo accepts it through ``MNEMO_OAUTH_AUDIENCES``, as docs/auth.md says
to do with Keycloak."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.hardening.conftest import UNLIMITED, send
from tests.support.keycloak import GATEWAY_SECRET, KeycloakNode
from tests.support.server import RunningServer, free_port, start_server, stop_server

pytestmark = [pytest.mark.slow, pytest.mark.node, pytest.mark.keycloak, pytest.mark.timeout(1200)]

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
USER, PASSWORD = "alice", "alice-password"  # tests/fixtures/keycloak/realm.json


@dataclass
class Deployment:
    server: RunningServer
    keycloak: KeycloakNode
    node: str

    @property
    def mcp(self) -> str:
        return f"{self.server.url}/mcp"

    def run(self, spec: dict[str, Any]) -> dict[str, Any]:
        done = subprocess.run(
            [self.node, str(CLIENTS / "oauth.mjs"), json.dumps({"url": self.mcp, **spec})],
            capture_output=True,
            text=True,
            timeout=180,
            cwd=CLIENTS,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout)

    def sign_in(self, marker: str) -> dict[str, Any]:
        return self.run({"flow": "authorization_code", "username": USER, "password": PASSWORD, "marker": marker})


@pytest.fixture(scope="module")
def deployment(keycloak_node: KeycloakNode, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    node = shutil.which("node")
    if node is None or not (CLIENTS / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json").is_file():
        pytest.fail("the pinned MCP clients are missing: run `make clients`", pytrace=False)
    port = free_port()
    env = {
        **UNLIMITED,
        "MNEMO_OAUTH_ISSUERS": keycloak_node.issuer,
        "MNEMO_OAUTH_RESOURCE": f"http://127.0.0.1:{port}",
        "MNEMO_OAUTH_AUDIENCES": keycloak_node.resource,
    }
    server = start_server(tmp_path_factory.mktemp("mnemo-mcp-oauth"), env, port=port)
    try:
        yield Deployment(server, keycloak_node, node)
    finally:
        server.banner = stop_server(server)


def bind(deployment: Deployment, kind: str, value: str) -> None:
    body = {"kind": kind, "value": value, "scopes": ["memory:read", "memory:write"]}
    bound = send(deployment.server, "/v1/admin/principals", json.dumps(body).encode())
    assert bound.status == 201, bound.raw


def exchanges(seen: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(e["method"], e["url"], e["status"]) for e in seen["exchanges"]]


@pytest.fixture(scope="module")
def unbound_sign_in(deployment: Deployment) -> dict[str, Any]:
    """Alice signs in through the SDK while nothing binds her."""
    return deployment.sign_in(f"unbound{uuid.uuid4().hex[:8]}")


def test_the_sdk_discovers_the_authorization_server_from_the_first_401(deployment, unbound_sign_in):
    issuer = deployment.keycloak.issuer
    registration = f"{issuer}/clients-registrations/openid-connect"

    seen = exchanges(unbound_sign_in)

    assert seen[0] == ("POST", deployment.mcp, 401)
    assert seen[1] == ("GET", f"{deployment.server.url}/.well-known/oauth-protected-resource/mcp", 200)
    metadata = [e for e in seen if e[1].startswith(deployment.keycloak.url) and e[0] == "GET"]
    assert metadata and metadata[-1][2] == 200 and ".well-known" in metadata[-1][1]
    registered = ("POST", registration, 201)
    token = ("POST", f"{issuer}/protocol/openid-connect/token", 200)
    assert registered in seen and token in seen
    assert seen.index(registered) < seen.index(token) < len(seen) - 1  # then Mnemo again, with the token


def test_the_sdk_registers_itself_and_authorizes_with_pkce(deployment, unbound_sign_in):
    client = unbound_sign_in["client"]
    asked = unbound_sign_in["authorization"]

    assert client["client_id"] and client.get("client_secret") is None  # a public client, registered anonymously
    assert asked["url"] == f"{deployment.keycloak.issuer}/protocol/openid-connect/auth"
    assert asked["params"]["client_id"] == client["client_id"]
    assert asked["params"]["code_challenge_method"] == "S256" and len(asked["params"]["code_challenge"]) == 43
    assert asked["params"]["resource"] == deployment.mcp  # RFC 8707, from the metadata
    assert set(asked["params"]["scope"].split()) == {"memory:read", "memory:write"}  # the 401's scope
    assert unbound_sign_in["userAgent"] == ["login", "consent"]  # anonymous registrations need consent
    assert unbound_sign_in["stateMatched"] is True
    assert unbound_sign_in["finishAuth"] == "exchanged"  # the code and its verifier, for tokens


def test_the_token_is_alices_for_this_resource(deployment, unbound_sign_in):
    claims = unbound_sign_in["token"]["claims"]

    assert claims["iss"] == deployment.keycloak.issuer
    assert claims["azp"] == unbound_sign_in["client"]["client_id"]
    assert deployment.keycloak.resource in ([claims["aud"]] if isinstance(claims["aud"], str) else claims["aud"])
    assert {"memory:read", "memory:write"} <= set(claims["scope"].split())


def test_a_signed_in_user_bound_to_nothing_gets_403(unbound_sign_in):
    threw = unbound_sign_in["session"]["threw"]

    assert threw["code"] == 403, threw
    assert "forbidden" in threw["message"]


def test_once_bound_the_user_calls_tools_through_the_sdk(deployment, unbound_sign_in):
    bind(deployment, "sub", unbound_sign_in["token"]["claims"]["sub"])
    marker = f"bound{uuid.uuid4().hex[:8]}"

    seen = deployment.sign_in(marker)

    session = seen["session"]
    assert "threw" not in session, session
    assert "memory_add" in session["tools"]
    memory = session["added"]["structuredContent"]["memory"]
    assert memory["source"] == f"sub:{seen['token']['claims']['sub']}"
    assert [r["reference"] for r in session["found"]["structuredContent"]["results"]] == [memory["id"]]


def test_a_gateway_runs_client_credentials_through_the_sdk(deployment):
    bind(deployment, "client", "mnemo-gateway")
    marker = f"gateway{uuid.uuid4().hex[:8]}"
    issuer = deployment.keycloak.issuer

    seen = deployment.run(
        {
            "flow": "client_credentials",
            "issuer": issuer,
            "clientId": "mnemo-gateway",
            "clientSecret": GATEWAY_SECRET,
            "scope": "memory:read memory:write",
            "marker": marker,
        }
    )

    session = seen["session"]
    assert "threw" not in session, session
    calls = exchanges(seen)
    assert calls[0] == ("POST", deployment.mcp, 401)
    assert ("POST", f"{issuer}/protocol/openid-connect/token", 200) in calls
    assert not any("clients-registrations" in url for _, url, _ in calls)  # a configured client registers nothing
    assert seen["token"]["claims"]["azp"] == "mnemo-gateway"
    memory = session["added"]["structuredContent"]["memory"]
    assert memory["source"] == "client:mnemo-gateway"
    assert [r["reference"] for r in session["found"]["structuredContent"]["results"]] == [memory["id"]]
