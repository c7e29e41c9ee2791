"""MCP against the real ``mnemo serve``: the official SDK ``Client`` (mcp 2.x) over Streamable HTTP
with the Bearer key, in each connect mode it offers, plus raw-HTTP handshakes and HTTP-level refusals.

``mode="legacy"`` runs the initialize handshake (2025-11-25); ``"2026-07-28"`` pins the stateless
revision (per-request envelope, no probe); ``"auto"`` probes ``server/discover`` first.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import anyio
import httpx2
import pytest

from tests.support.http import NO_KEY, Headers, send
from tests.support.server import RunningServer

mcp = pytest.importorskip("mcp")
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

MODES = ["legacy", "2026-07-28", "auto"]
HANDSHAKE_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
EXPECTED_VERSION = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28", "auto": "2026-07-28"}


def mcp_url(server: RunningServer) -> str:
    return f"{server.url}/mcp"


def sdk_client(server: RunningServer, mode: str, key: str | None) -> tuple[httpx2.AsyncClient, Client]:
    headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0))
    return http, Client(streamable_http_client(mcp_url(server), http_client=http), mode=mode, read_timeout_seconds=30)


async def _session(server: RunningServer, mode: str) -> dict[str, Any]:
    """Connect with the key in ``mode``: list tools, add a memory, find it, hit the size limit."""
    marker = f"zebra{uuid.uuid4().hex[:8]}"
    http, client = sdk_client(server, mode, server.key)
    async with http, client:
        listed = await client.list_tools()
        added = await client.call_tool(
            "memory_add",
            {"content": f"Launch checklist {marker}: freeze deploys on Friday.", "kind": "decision", "tags": [mode]},
        )
        found = await client.call_tool("search_memory", {"query": marker})
        found_ids = [r["reference"] for r in (found.structured_content or {}).get("results", [])]
        too_large = await client.call_tool("memory_add", {"content": "x" * 4097})
        return {
            "protocol_version": client.protocol_version,
            "tools": {tool.name: tool for tool in listed.tools},
            "added": added,
            "found": found,
            "found_ids": found_ids,
            "too_large": too_large,
        }


@pytest.mark.parametrize("mode", MODES)
def test_sdk_client_lists_adds_finds_and_gets_is_error(server: RunningServer, mode: str) -> None:
    from mnemo.service.catalog import TOOLS

    seen = anyio.run(_session, server, mode)

    assert seen["protocol_version"] == EXPECTED_VERSION[mode]
    tools = seen["tools"]
    assert set(tools) == set(TOOLS)
    for name, tool in tools.items():
        assert tool.input_schema["type"] == "object", name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", name
        assert tool.annotations is not None, name
        assert tool.annotations.read_only_hint == TOOLS[name].read_only
        assert tool.annotations.destructive_hint == TOOLS[name].destructive
        assert tool.annotations.idempotent_hint == TOOLS[name].idempotent
        assert tool.description

    added = seen["added"]
    assert added.is_error is False
    memory_id = added.structured_content["memory"]["id"]
    assert json.loads(added.content[0].text) == added.structured_content

    assert seen["found"].is_error is False
    assert seen["found"].structured_content["matched"] is True
    assert seen["found_ids"] == [memory_id]

    too_large = seen["too_large"]
    assert too_large.is_error is True
    assert too_large.structured_content == json.loads(too_large.content[0].text)
    assert json.loads(too_large.content[0].text)["code"] == "content_too_large"


async def _connect_without_key(server: RunningServer, mode: str) -> None:
    http, client = sdk_client(server, mode, None)
    async with http, client:
        await client.list_tools()


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc]


@pytest.mark.parametrize("mode", MODES)
def test_sdk_client_without_a_key_is_refused(server: RunningServer, mode: str) -> None:
    # The SDK turns the 401 into an MCPError (raised through anyio's task group).
    with pytest.raises(BaseException) as refused:
        anyio.run(_connect_without_key, server, mode)

    assert any(isinstance(leaf, MCPError) for leaf in _leaves(refused.value)), refused.value


# --- raw HTTP ---


def post(
    server: RunningServer, message: Any, *, key: str | None = None, headers: dict[str, str] | None = None
) -> tuple[int, Headers, str]:
    """A JSON-RPC message (or raw bytes) to /mcp as a Streamable HTTP client posts it; ``key`` as
    ``tests.support.http.send`` takes it (the server's own by default, ``NO_KEY`` for none)."""
    data = message if isinstance(message, bytes) else json.dumps(message).encode()
    accept = {"Accept": "application/json, text/event-stream"}
    reply = send(server, "/mcp", data, key=key, headers={**accept, **(headers or {})}, timeout=10)
    return reply.status, reply.headers, reply.raw.decode()


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_raw_handshake_at_each_version(server: RunningServer, version: str) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }
    status, headers, body = post(server, init)
    assert status == 200, body
    result = json.loads(body)["result"]
    assert result["protocolVersion"] == version
    assert result["serverInfo"]["name"] == "mnemo"
    assert "tools" in result["capabilities"]
    assert "mcp-session-id" not in {name.lower() for name in headers}

    negotiated = {"MCP-Protocol-Version": version}
    status, _, body = post(server, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=negotiated)
    assert (status, body) == (202, "")

    status, _, body = post(server, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=negotiated)
    assert (status, json.loads(body)) == (200, {"jsonrpc": "2.0", "id": 2, "result": {}})

    status, _, body = post(server, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers=negotiated)
    assert status == 200
    assert "memory_add" in {tool["name"] for tool in json.loads(body)["result"]["tools"]}


@pytest.mark.parametrize("key", [pytest.param(NO_KEY, id="None"), "wrong-key-0123456789abcdef"])
def test_a_request_without_a_valid_key_is_http_401(server: RunningServer, key: str) -> None:
    status, headers, body = post(server, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, key=key)

    assert status == 401
    assert headers["WWW-Authenticate"].startswith("Bearer")
    assert json.loads(body)["code"] == "unauthorized"


def test_a_body_over_64_kib_is_http_413(server: RunningServer) -> None:
    big = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_add", "arguments": {}}}
    big["params"]["arguments"]["content"] = "a" * (64 * 1024)

    status, _, body = post(server, big)

    assert (status, json.loads(body)["code"]) == (413, "content_too_large")


@pytest.mark.parametrize("verb", ["GET", "DELETE"])
def test_get_and_delete_are_405_with_allow_post(server: RunningServer, verb: str) -> None:
    refused = send(server, "/mcp", None, method=verb, headers={"Accept": "text/event-stream"}, content_type=None)

    assert refused.status == 405
    assert refused.headers["Allow"] == "POST"
    assert refused.body["code"] == "invalid_request"
