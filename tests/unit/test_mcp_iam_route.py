"""``POST /mcp-iam`` through the MCP function: the callers API Gateway authorised with AWS IAM
(SigV4), identified by the ARN it puts in the request context and bound like a token's principal
(docs/aws.md, "IAM for gateways")."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mnemo.service import principals
from mnemo.service.identity import READ, WRITE

from tests.unit.test_mcp_function import handle, mcp_event, rpc

ROLE = "arn:aws:iam::123456789012:role/agentcore-gateway"
SESSION = "arn:aws:sts::123456789012:assumed-role/agentcore-gateway/gateway-session-1"


def iam_event(body: Any, caller_arn: str | None) -> dict[str, Any]:
    event = mcp_event(body, key=None, headers={"MCP-Protocol-Version": "2025-11-25"})
    event["rawPath"] = event["requestContext"]["http"]["path"] = "/mcp-iam"
    event["routeKey"] = event["requestContext"]["routeKey"] = "POST /mcp-iam"
    if caller_arn is not None:
        event["requestContext"]["authorizer"] = {"iam": {"userArn": caller_arn, "accountId": "123456789012"}}
    return event


def add(content: str, caller_arn: str | None) -> dict[str, Any]:
    return handle(iam_event(rpc("tools/call", {"name": "memory_add", "arguments": {"content": content}}), caller_arn))


@pytest.fixture
def bound(wired_runtime):
    workspace = wired_runtime.ports.tenants.list_workspaces()[0]
    return principals.bind(
        wired_runtime.ports, workspace.id, issuer=principals.IAM_ISSUER, kind="sub", value=ROLE, scopes=[READ, WRITE]
    )


def test_a_bound_roles_session_calls_tools(bound):
    reply = add("saved by the gateway's role", SESSION)

    assert reply["statusCode"] == 200, reply
    result = json.loads(reply["body"])["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["memory"]["source"] == f"sub:{ROLE}"


def test_an_unbound_role_is_forbidden(bound):
    reply = add("x", "arn:aws:sts::123456789012:assumed-role/someone-else/s")

    assert reply["statusCode"] == 403
    assert json.loads(reply["body"])["code"] == "forbidden"


def test_without_an_iam_context_the_route_is_unauthorized_whatever_the_headers(bound):
    event = iam_event(rpc("tools/call", {"name": "memory_add", "arguments": {"content": "x"}}), None)
    event["headers"]["authorization"] = "Bearer test-events-key-0123456789"  # a valid key is not IAM

    reply = handle(event)

    assert reply["statusCode"] == 401


def test_a_session_arn_is_bound_as_its_role():
    assert principals.iam_principal(SESSION) == ROLE
    assert principals.iam_principal("arn:aws-cn:sts::1:assumed-role/r/s") == "arn:aws-cn:iam::1:role/r"
    assert principals.iam_principal("arn:aws:iam::1:user/alice") == "arn:aws:iam::1:user/alice"
