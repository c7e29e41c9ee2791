"""The built functions accept an OAuth access token through the simulated runtime: the stack as
deployed with the template's own parameters ``OAuthProvider=external``, ``OAuthIssuerUrl`` = the
session's real Keycloak and ``OAuthResourceUrl`` = the audience its tokens carry, so the functions'
environment is what CloudFormation would give them. A real client-credentials token (what a
gateway sends) is checked by the built layer's PyJWT against the keys the function fetches from
Keycloak itself; nothing of the verifier runs in this process."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.built.conftest import EVENTS_KEY, BuiltStack, Run, _mcp_call, _route
from tests.support.keycloak import GATEWAY_SECRET, KeycloakNode

pytestmark = [pytest.mark.slow, pytest.mark.aws, pytest.mark.keycloak, pytest.mark.timeout(1500)]

CONTENT = "The built MCP function took a gateway's Keycloak token."


def with_token(event: dict[str, Any], token: str | None) -> dict[str, Any]:
    event["headers"].pop("authorization", None)
    if token is not None:
        event["headers"]["authorization"] = f"Bearer {token}"
    return event


@pytest.fixture(scope="module")
def oauth_runs(built_stack: BuiltStack, keycloak_node: KeycloakNode) -> dict[str, Any]:
    from mnemo.service import keys, principals

    parameters = {
        "OAuthProvider": "external",
        "OAuthIssuerUrl": keycloak_node.issuer,
        "OAuthResourceUrl": keycloak_node.resource,
    }
    events_key = built_stack.backend.tenants.get_key(keys.key_id_for(EVENTS_KEY))
    principals.bind(
        built_stack.backend,
        events_key.workspace_id,
        issuer=keycloak_node.issuer,
        kind="client",
        value="mnemo-gateway",
        scopes=["memory:read", "memory:write"],
    )
    token = keycloak_node.client_token("mnemo-gateway", GATEWAY_SECRET)
    other = keycloak_node.client_token("mnemo-other", "other-secret-for-tests-only")
    mcp = built_stack.run(
        "McpFunction",
        [
            ("token_add", with_token(_mcp_call("memory_add", {"content": CONTENT}, 31), token)),
            ("token_search", with_token(_mcp_call("memory_search", {"q": "gateway Keycloak token"}, 32), token)),
            ("no_credentials", with_token(_mcp_call("memory_search", {"q": "x"}, 33), None)),
            ("unbound_token", with_token(_mcp_call("memory_search", {"q": "x"}, 34), other)),
        ],
        parameters=parameters,
    )
    read = built_stack.run(
        "ReadFunction",
        [
            ("whoami", with_token(_route("openapi.json", "GET", "/v1/whoami"), token)),
            ("metadata", _route("openapi.json", "GET", "/.well-known/oauth-protected-resource/mcp")),
        ],
        parameters=parameters,
    )
    return {"mcp": mcp, "read": read, "tokens": [token, other]}


def tool_result(run: Run, name: str) -> dict[str, Any]:
    assert run.status(name) == 200, run.response(name)
    result: dict[str, Any] = run.body(name)["result"]
    assert result["isError"] is False, result
    return result


def test_the_built_mcp_function_runs_tools_for_a_bound_token(oauth_runs):
    mcp = oauth_runs["mcp"]

    added = tool_result(mcp, "token_add")["structuredContent"]["memory"]
    found = tool_result(mcp, "token_search")["structuredContent"]["memories"]

    assert added["source"] == "client:mnemo-gateway"
    assert [m["id"] for m in found] == [added["id"]]


def test_the_built_mcp_function_challenges_with_the_metadata(oauth_runs, keycloak_node):
    response = oauth_runs["mcp"].response("no_credentials")

    assert response["statusCode"] == 401
    challenge = {k.lower(): v for k, v in response["headers"].items()}["www-authenticate"]
    assert f'resource_metadata="{keycloak_node.resource}/.well-known/oauth-protected-resource/mcp"' in challenge


def test_the_built_mcp_function_refuses_a_token_bound_to_nothing(oauth_runs):
    response = oauth_runs["mcp"].response("unbound_token")

    assert response["statusCode"] == 403
    assert json.loads(response["body"])["code"] == "forbidden"


def test_the_built_read_function_knows_the_token_and_serves_the_metadata(oauth_runs, keycloak_node):
    read = oauth_runs["read"]

    me = read.body("whoami")
    metadata = read.body("metadata")

    assert read.status("whoami") == 200 and me["key"]["label"] == "client:mnemo-gateway"
    assert read.status("metadata") == 200
    assert metadata["resource"] == f"{keycloak_node.resource}/mcp"
    assert metadata["authorization_servers"] == [keycloak_node.issuer]


def test_no_token_in_the_built_functions_logs(oauth_runs):
    logs = oauth_runs["mcp"].logs + oauth_runs["read"].logs
    assert "memory_add" in logs or "rejected" in logs  # they did log

    leaked = [token[-32:] for token in oauth_runs["tokens"] if token[-32:] in logs or token[:40] in logs]

    assert leaked == []
