"""McpEndpoint.handle() at the dict level: both protocol eras, their headers and their errors.

The expected behaviour was read from the official SDK (mcp 2.3.0): the era router in
mcp/server/streamable_http_manager.py, the legacy transport in mcp/server/streamable_http.py,
the stateless entry in mcp/server/_streamable_http_modern.py with its ladder in
mcp/shared/inbound.py, and result shaping in mcp/server/runner.py.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

try:
    import mnemo.api.mcp  # noqa: F401
except ImportError:  # running without a conftest that puts shared/ on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "shared"))

from mnemo.api.mcp import HttpReply, McpEndpoint, McpTool, ToolOutcome, UnknownTool

HANDSHAKE_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
MODERN = "2026-07-28"
PV_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
INFO_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

ECHO = McpTool(
    name="echo",
    title="Echo",
    description="Returns its arguments.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
    output_schema={"type": "object", "properties": {"echo": {"type": "object"}}},
    read_only=True,
    destructive=False,
    idempotent=True,
)
FAIL = McpTool(
    name="fail",
    title=None,
    description="Always fails.",
    input_schema={"type": "object"},
    output_schema={"type": "object"},
    read_only=False,
    destructive=True,
    idempotent=False,
)
ROUTED = McpTool(
    name="routed",
    title=None,
    description="Mirrors arguments into Mcp-Param-* headers at 2026-07-28.",
    input_schema={
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "shard": {"type": "integer", "x-mcp-header": "Shard"},
            "opts": {"type": "object", "properties": {"dry": {"type": "boolean", "x-mcp-header": "Dry"}}},
        },
    },
    output_schema={"type": "object"},
    read_only=True,
    destructive=False,
    idempotent=True,
)
HIDDEN_NAME = "hidden"  # invoke knows it, the catalog does not


class Calls(list):
    pass


def make_endpoint(**kwargs: Any) -> tuple[McpEndpoint, Calls]:
    calls = Calls()

    def invoke(name: str, arguments: dict) -> ToolOutcome:
        calls.append((name, arguments))
        if name == "echo":
            return ToolOutcome({"echo": arguments}, False)
        if name == "routed":
            return ToolOutcome({"ok": True}, False)
        if name == "fail":
            return ToolOutcome({"message": "Missing argument.", "code": "invalid_request"}, True)
        if name == "boom":
            raise RuntimeError("secret internals")
        raise UnknownTool(name)

    return McpEndpoint([ECHO, FAIL, ROUTED], invoke, **kwargs), calls


@pytest.fixture
def endpoint() -> McpEndpoint:
    return make_endpoint(instructions="Use search_memory first.")[0]


BASE_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def post(endpoint: McpEndpoint, message: Any, headers: dict[str, str] | None = None) -> HttpReply:
    body = message if isinstance(message, (str, bytes)) or message is None else json.dumps(message)
    return endpoint.handle("POST", {**BASE_HEADERS, **(headers or {})}, body)


def body_of(reply: HttpReply) -> Any:
    assert reply.headers.get("Content-Type") == "application/json"
    return json.loads(reply.body)


def rpc(method: str, params: dict | None = None, id_: Any = 1) -> dict:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def legacy(version: str = "2025-11-25") -> dict[str, str]:
    return {"MCP-Protocol-Version": version}


def envelope(version: str = MODERN, **extra: Any) -> dict:
    meta = {PV_KEY: version, CAPS_KEY: {}, INFO_KEY: {"name": "unit", "version": "1"}}
    meta.update(extra)
    return meta


def modern_headers(method: str, name: str | None = None, version: str = MODERN) -> dict[str, str]:
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def modern(endpoint: McpEndpoint, method: str, params: dict | None = None, *, name: str | None = None) -> HttpReply:
    params = dict(params or {})
    params.setdefault("_meta", envelope())
    if name is None and method == "tools/call":
        name = params.get("name")
    return post(endpoint, rpc(method, params), modern_headers(method, name))


def assert_error(reply: HttpReply, status: int, code: int, id_: Any = 1) -> dict:
    assert reply.status == status, reply.body
    payload = body_of(reply)
    assert payload["jsonrpc"] == "2.0"
    assert payload["id"] == id_
    assert payload["error"]["code"] == code
    assert isinstance(payload["error"]["message"], str) and payload["error"]["message"]
    assert "Traceback" not in reply.body
    return payload["error"]


def initialize_params(version: str) -> dict:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "unit", "version": "1.0"}}


# --- handshake era ---


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_initialize_answers_each_supported_version(endpoint: McpEndpoint, version: str) -> None:
    reply = post(endpoint, rpc("initialize", initialize_params(version), id_="init-1"))
    assert reply.status == 200
    payload = body_of(reply)
    assert payload == {
        "jsonrpc": "2.0",
        "id": "init-1",
        "result": {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "mnemo", "version": "0.1.0"},
            "instructions": "Use search_memory first.",
        },
    }
    assert "Mcp-Session-Id" not in reply.headers and "mcp-session-id" not in reply.headers


@pytest.mark.parametrize("offered", ["2026-07-28", "1999-01-01", "2025-12-01"])
def test_initialize_counter_offers_the_latest_handshake_version(endpoint: McpEndpoint, offered: str) -> None:
    payload = body_of(post(endpoint, rpc("initialize", initialize_params(offered))))
    assert payload["result"]["protocolVersion"] == "2025-11-25"


def test_initialize_server_identity_is_configurable() -> None:
    endpoint, _ = make_endpoint(server_name="mnemo-x", server_version="2.0.0")
    result = body_of(post(endpoint, rpc("initialize", initialize_params("2025-06-18"))))["result"]
    assert result["serverInfo"] == {"name": "mnemo-x", "version": "2.0.0"}
    assert "instructions" not in result


@pytest.mark.parametrize(
    "params",
    [
        None,
        {},
        {"protocolVersion": 20250618, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
        {"protocolVersion": "2025-06-18", "capabilities": [], "clientInfo": {"name": "c", "version": "1"}},
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c"}},
    ],
)
def test_initialize_with_invalid_params_is_invalid_params(endpoint: McpEndpoint, params: dict | None) -> None:
    assert_error(post(endpoint, rpc("initialize", params)), 200, -32602)


@pytest.mark.parametrize("version", [None, *HANDSHAKE_VERSIONS])
@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3, "reason": "x"}},
        {"jsonrpc": "2.0", "method": "notifications/whatever"},
        {"jsonrpc": "2.0", "id": 9, "result": {}},  # a posted response (to a server request we never send)
        {"jsonrpc": "2.0", "id": 9, "error": {"code": -1, "message": "no"}},
    ],
)
def test_notifications_and_responses_are_accepted_with_202(
    endpoint: McpEndpoint, version: str | None, message: dict
) -> None:
    reply = post(endpoint, message, legacy(version) if version else None)
    assert reply.status == 202
    assert reply.body == ""


@pytest.mark.parametrize("version", [None, *HANDSHAKE_VERSIONS])
def test_ping_answers_an_empty_result(endpoint: McpEndpoint, version: str | None) -> None:
    reply = post(endpoint, rpc("ping", id_=42), legacy(version) if version else None)
    assert reply.status == 200
    assert body_of(reply) == {"jsonrpc": "2.0", "id": 42, "result": {}}


def test_requests_need_no_prior_initialize(endpoint: McpEndpoint) -> None:
    # Stateless: any instance answers any request, so nothing is gated on a handshake.
    reply = post(endpoint, rpc("tools/list"), legacy("2025-06-18"))
    assert reply.status == 200 and len(body_of(reply)["result"]["tools"]) == 3


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_tools_list_shape(endpoint: McpEndpoint, version: str) -> None:
    result = body_of(post(endpoint, rpc("tools/list"), legacy(version)))["result"]
    # Handshake-era results carry no 2026 fields (resultType, ttlMs, cacheScope, serverInfo stamp).
    assert set(result) == {"tools"}
    tools = {tool["name"]: tool for tool in result["tools"]}
    assert list(tools) == ["echo", "fail", "routed"]
    assert tools["echo"] == {
        "name": "echo",
        "title": "Echo",
        "description": "Returns its arguments.",
        "inputSchema": ECHO.input_schema,
        "outputSchema": ECHO.output_schema,
        "annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
    }
    assert "title" not in tools["fail"]
    assert tools["fail"]["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": False,
    }


def test_tools_list_rejects_a_non_string_cursor_and_ignores_a_string_one(endpoint: McpEndpoint) -> None:
    assert body_of(post(endpoint, rpc("tools/list", {"cursor": "abc"})))["result"]["tools"]
    assert_error(post(endpoint, rpc("tools/list", {"cursor": 5})), 200, -32602)


def test_tools_call_success() -> None:
    endpoint, calls = make_endpoint()
    arguments = {"text": "决策 décision", "idempotency_key": "idem-1"}
    reply = post(endpoint, rpc("tools/call", {"name": "echo", "arguments": arguments}, id_=7), legacy())
    assert reply.status == 200
    payload = body_of(reply)
    assert payload["id"] == 7
    result = payload["result"]
    assert result == {
        "content": [{"type": "text", "text": json.dumps({"echo": arguments}, ensure_ascii=False)}],
        "structuredContent": {"echo": arguments},
        "isError": False,
    }
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert calls == [("echo", arguments)]  # idempotency_key passes through untouched


def test_tools_call_is_error_outcome(endpoint: McpEndpoint) -> None:
    result = body_of(post(endpoint, rpc("tools/call", {"name": "fail", "arguments": {}}), legacy()))["result"]
    assert result["isError"] is True
    # the body travels as text and as structuredContent (the tools' outputSchemas admit it)
    assert result["structuredContent"] == {"message": "Missing argument.", "code": "invalid_request"}
    assert json.loads(result["content"][0]["text"]) == {"message": "Missing argument.", "code": "invalid_request"}


@pytest.mark.parametrize("params", [{"name": "echo"}, {"name": "echo", "arguments": None}])
def test_tools_call_missing_arguments_means_empty_object(params: dict) -> None:
    endpoint, calls = make_endpoint()
    result = body_of(post(endpoint, rpc("tools/call", params), legacy()))["result"]
    assert result["structuredContent"] == {"echo": {}}
    assert calls == [("echo", {})]


@pytest.mark.parametrize(
    "params", [None, {}, {"name": 5}, {"name": "echo", "arguments": [1]}, {"name": "echo", "arguments": "x"}]
)
def test_tools_call_with_invalid_params(endpoint: McpEndpoint, params: dict | None) -> None:
    assert_error(post(endpoint, rpc("tools/call", params), legacy()), 200, -32602)


def test_unknown_tool_is_invalid_params() -> None:
    endpoint, calls = make_endpoint()
    error = assert_error(post(endpoint, rpc("tools/call", {"name": "nope"}), legacy()), 200, -32602)
    assert error["message"] == "Unknown tool: nope"
    assert calls == []  # a name outside the catalog never reaches invoke


def test_unknown_tool_raised_by_invoke_is_invalid_params() -> None:
    def invoke(name: str, arguments: dict) -> ToolOutcome:
        raise UnknownTool(name)

    endpoint = McpEndpoint([ECHO], invoke)
    error = assert_error(post(endpoint, rpc("tools/call", {"name": "echo"})), 200, -32602)
    assert "Unknown tool" in error["message"]


def test_a_crashing_tool_is_an_internal_error_result_without_internals() -> None:
    def invoke(name: str, arguments: dict) -> ToolOutcome:
        raise RuntimeError("db password is hunter2")

    endpoint = McpEndpoint([ECHO], invoke)
    reply = post(endpoint, rpc("tools/call", {"name": "echo"}))
    result = body_of(reply)["result"]
    assert result["isError"] is True and result["structuredContent"] == {
        "message": "Internal error.",
        "code": "internal",
    }
    assert json.loads(result["content"][0]["text"]) == {"message": "Internal error.", "code": "internal"}
    assert "hunter2" not in reply.body and "Traceback" not in reply.body


def test_a_non_object_tool_result_is_an_internal_error_result() -> None:
    endpoint = McpEndpoint([ECHO], lambda name, arguments: ToolOutcome(["not", "a", "dict"], False))  # type: ignore[arg-type]
    result = body_of(post(endpoint, rpc("tools/call", {"name": "echo"})))["result"]
    assert result["isError"] is True and result["structuredContent"]["code"] == "internal"
    assert json.loads(result["content"][0]["text"])["code"] == "internal"


@pytest.mark.parametrize("method", ["foo/bar", "resources/list", "prompts/list", "logging/setLevel", "server/discover"])
def test_unknown_method_is_method_not_found(endpoint: McpEndpoint, method: str) -> None:
    # server/discover belongs to the 2026-07-28 era only (routed by the version header, as the SDK does).
    error = assert_error(post(endpoint, rpc(method, {}), legacy()), 200, -32601)
    assert error["data"] == method


@pytest.mark.parametrize(
    "body",
    [
        "{nope",
        "",
        "[1,",
        b"\xff\xfe{}",
        None,
        '{"a": ' * 100_000,
        '{"jsonrpc": "2.0", "id": 1, "method": "ping", "method": "tools/list"}',  # which one wins is ambiguous
        '{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}',
    ],
)
def test_malformed_json_is_a_parse_error(endpoint: McpEndpoint, body: Any) -> None:
    reply = endpoint.handle("POST", BASE_HEADERS, body)
    assert_error(reply, 400, -32700, id_=None)


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": 7},
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1, 2]},
        {"jsonrpc": "2.0", "id": 1},
        "just a string",
        42,
    ],
)
def test_invalid_messages_are_invalid_request(endpoint: McpEndpoint, message: Any) -> None:
    assert_error(post(endpoint, json.dumps(message)), 400, -32600, id_=None)


def test_bytes_bodies_and_header_case_are_accepted(endpoint: McpEndpoint) -> None:
    headers = {"accept": "*/*", "CONTENT-TYPE": "application/json; charset=utf-8", "mcp-PROTOCOL-version": "2025-06-18"}
    reply = endpoint.handle("POST", headers, json.dumps(rpc("ping")).encode())
    assert reply.status == 200 and body_of(reply)["result"] == {}


def test_missing_accept_and_content_type_are_tolerated(endpoint: McpEndpoint) -> None:
    reply = endpoint.handle("POST", {}, json.dumps(rpc("ping")))
    assert reply.status == 200


def test_an_accept_header_without_json_is_406(endpoint: McpEndpoint) -> None:
    reply = endpoint.handle("POST", {"Accept": "text/event-stream"}, json.dumps(rpc("ping")))
    assert_error(reply, 406, -32600, id_=None)
    for accept in ("application/*", "*/*;q=0.1", "text/event-stream, application/json"):
        assert endpoint.handle("POST", {"Accept": accept}, json.dumps(rpc("ping"))).status == 200


def test_a_non_json_content_type_is_415(endpoint: McpEndpoint) -> None:
    reply = endpoint.handle("POST", {"Content-Type": "text/plain"}, json.dumps(rpc("ping")))
    assert_error(reply, 415, -32600, id_=None)


@pytest.mark.parametrize("verb", ["GET", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS", "get"])
def test_only_post_is_served(endpoint: McpEndpoint, verb: str) -> None:
    reply = endpoint.handle(verb, {"Accept": "text/event-stream", "MCP-Protocol-Version": "2025-06-18"}, None)
    assert reply.status == 405
    assert reply.headers == {"Allow": "POST", "Content-Type": "application/json"}
    body = json.loads(reply.body)
    assert body["code"] == "invalid_request" and "POST" in body["message"]


# --- batches: 2025-03-26 only (assumed when the version header is absent) ---


@pytest.mark.parametrize("headers", [None, legacy("2025-03-26")])
def test_batches_at_2025_03_26(endpoint: McpEndpoint, headers: dict | None) -> None:
    batch = [
        rpc("ping", id_=1),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        rpc("tools/call", {"name": "echo", "arguments": {"text": "a"}}, id_="two"),
        {"jsonrpc": "1.0", "id": 3, "method": "ping"},
        rpc("initialize", initialize_params("2025-03-26"), id_=4),
        rpc("nope", id_=5),
    ]
    reply = post(endpoint, batch, headers)
    assert reply.status == 200
    replies = body_of(reply)
    assert [r["id"] for r in replies] == [1, "two", None, 4, 5]
    assert replies[0]["result"] == {}
    assert replies[1]["result"]["structuredContent"] == {"echo": {"text": "a"}}
    assert replies[2]["error"]["code"] == -32600
    assert replies[3]["error"]["code"] == -32600  # initialize MUST NOT be part of a batch
    assert replies[4]["error"]["code"] == -32601


def test_a_batch_of_notifications_is_202(endpoint: McpEndpoint) -> None:
    batch = [{"jsonrpc": "2.0", "method": "notifications/initialized"}, {"jsonrpc": "2.0", "id": 1, "result": {}}]
    reply = post(endpoint, batch)
    assert reply.status == 202 and reply.body == ""


def test_an_empty_batch_is_invalid_request(endpoint: McpEndpoint) -> None:
    assert_error(post(endpoint, []), 400, -32600, id_=None)


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
def test_batches_are_refused_where_the_version_has_none(endpoint: McpEndpoint, version: str) -> None:
    assert_error(post(endpoint, [rpc("ping")], legacy(version)), 400, -32600, id_=None)


# --- version header outside the handshake set: the 2026-07-28 ladder answers ---


def test_unsupported_version_header_without_envelope_is_400(endpoint: McpEndpoint) -> None:
    # The SDK routes every non-handshake header value to the stateless entry, whose first rung is the envelope.
    for method in ("tools/list", "initialize", "ping"):
        assert_error(post(endpoint, rpc(method, {}), legacy("2099-01-01")), 400, -32602)


def test_unsupported_version_with_envelope_is_32022(endpoint: McpEndpoint) -> None:
    headers = modern_headers("tools/list", version="2099-01-01")
    reply = post(endpoint, rpc("tools/list", {"_meta": envelope("2099-01-01")}), headers)
    error = assert_error(reply, 400, -32022)
    assert error["data"] == {"supported": [MODERN], "requested": "2099-01-01"}


def test_notification_at_an_unsupported_version_is_32022(endpoint: McpEndpoint) -> None:
    reply = post(endpoint, {"jsonrpc": "2.0", "method": "notifications/initialized"}, legacy("2099-01-01"))
    error = assert_error(reply, 400, -32022, id_=None)
    assert error["data"] == {"supported": [MODERN], "requested": "2099-01-01"}


# --- stateless era (2026-07-28) ---


def test_server_discover(endpoint: McpEndpoint) -> None:
    reply = modern(endpoint, "server/discover")
    assert reply.status == 200
    payload = body_of(reply)
    assert payload["id"] == 1
    assert payload["result"] == {
        "supportedVersions": [MODERN],
        "capabilities": {"tools": {"listChanged": False}},
        "instructions": "Use search_memory first.",
        "ttlMs": 0,
        "cacheScope": "private",
        "resultType": "complete",
        "_meta": {SERVER_INFO_KEY: {"name": "mnemo", "version": "0.1.0"}},
    }


def test_server_discover_with_only_the_required_envelope_pair(endpoint: McpEndpoint) -> None:
    reply = modern(endpoint, "server/discover", {"_meta": {PV_KEY: MODERN, CAPS_KEY: {}}})
    assert reply.status == 200 and body_of(reply)["result"]["supportedVersions"] == [MODERN]


def test_modern_tools_list(endpoint: McpEndpoint) -> None:
    result = body_of(modern(endpoint, "tools/list"))["result"]
    assert [tool["name"] for tool in result["tools"]] == ["echo", "fail", "routed"]
    assert result["tools"][0]["annotations"]["readOnlyHint"] is True
    assert result["tools"][0]["outputSchema"] == ECHO.output_schema
    assert (result["ttlMs"], result["cacheScope"], result["resultType"]) == (0, "private", "complete")
    assert result["_meta"] == {SERVER_INFO_KEY: {"name": "mnemo", "version": "0.1.0"}}


def test_modern_tools_call(endpoint: McpEndpoint) -> None:
    ok = body_of(modern(endpoint, "tools/call", {"name": "echo", "arguments": {"text": "x"}}))["result"]
    assert ok["structuredContent"] == {"echo": {"text": "x"}} and ok["isError"] is False
    assert ok["resultType"] == "complete" and SERVER_INFO_KEY in ok["_meta"]
    assert json.loads(ok["content"][0]["text"]) == ok["structuredContent"]

    failed = body_of(modern(endpoint, "tools/call", {"name": "fail"}))["result"]
    assert failed["isError"] is True and failed["structuredContent"]["code"] == "invalid_request"
    assert json.loads(failed["content"][0]["text"])["code"] == "invalid_request"


def test_modern_unknown_tool_is_400_invalid_params(endpoint: McpEndpoint) -> None:
    error = assert_error(modern(endpoint, "tools/call", {"name": "nope"}), 400, -32602)
    assert "Unknown tool" in error["message"]


@pytest.mark.parametrize("method", ["ping", "initialize", "foo/bar", "resources/list"])
def test_modern_methods_outside_the_revision_are_404(endpoint: McpEndpoint, method: str) -> None:
    error = assert_error(modern(endpoint, method), 404, -32601)
    assert error["data"] == method


@pytest.mark.parametrize(
    "params",
    [
        None,
        {},
        {"_meta": "x"},
        {"_meta": {PV_KEY: MODERN}},  # no client capabilities
        {"_meta": {CAPS_KEY: {}}},  # no protocol version
    ],
)
def test_modern_envelope_missing_is_invalid_params(endpoint: McpEndpoint, params: dict | None) -> None:
    assert_error(post(endpoint, rpc("tools/list", params), modern_headers("tools/list")), 400, -32602)


@pytest.mark.parametrize(
    "meta", [envelope(**{CAPS_KEY: 5}), envelope(**{INFO_KEY: {"name": "x"}}), envelope(**{INFO_KEY: "x"})]
)
def test_modern_envelope_with_malformed_values_is_invalid_params(endpoint: McpEndpoint, meta: dict) -> None:
    assert_error(modern(endpoint, "tools/list", {"_meta": meta}), 400, -32602)


def test_modern_version_header_must_match_the_envelope(endpoint: McpEndpoint) -> None:
    reply = post(endpoint, rpc("tools/list", {"_meta": envelope("2027-01-01")}), modern_headers("tools/list"))
    assert_error(reply, 400, -32020)


def test_modern_method_header_must_match_the_body(endpoint: McpEndpoint) -> None:
    reply = post(endpoint, rpc("tools/list", {"_meta": envelope()}), modern_headers("tools/call"))
    assert_error(reply, 400, -32020)
    headers = modern_headers("tools/list")
    del headers["Mcp-Method"]
    assert_error(post(endpoint, rpc("tools/list", {"_meta": envelope()}), headers), 400, -32020)


def test_modern_name_header_must_match_the_tool(endpoint: McpEndpoint) -> None:
    params = {"_meta": envelope(), "name": "echo", "arguments": {}}
    assert_error(post(endpoint, rpc("tools/call", params), modern_headers("tools/call", "fail")), 400, -32020)
    assert_error(post(endpoint, rpc("tools/call", params), modern_headers("tools/call")), 400, -32020)
    sentinel = "=?base64?" + base64.b64encode(b"echo").decode() + "?="
    assert post(endpoint, rpc("tools/call", params), modern_headers("tools/call", sentinel)).status == 200


def test_modern_duplicated_routing_header_is_header_mismatch(endpoint: McpEndpoint) -> None:
    headers = {**modern_headers("tools/list"), "mcp-method": "tools/list"}
    assert_error(post(endpoint, rpc("tools/list", {"_meta": envelope()}), headers), 400, -32020)


def test_modern_notifications_are_acknowledged(endpoint: McpEndpoint) -> None:
    for method in ("notifications/cancelled", "notifications/initialized"):
        reply = post(endpoint, {"jsonrpc": "2.0", "method": method}, modern_headers(method))
        assert reply.status == 202 and reply.body == ""


@pytest.mark.parametrize(
    "message",
    [
        [rpc("tools/list", {"_meta": envelope()})],  # batches are gone
        {"jsonrpc": "2.0", "id": 1, "result": {}},  # a posted response
        {"jsonrpc": "2.0", "id": False, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": 5},
    ],
)
def test_modern_invalid_bodies_are_invalid_request(endpoint: McpEndpoint, message: Any) -> None:
    assert_error(post(endpoint, message, modern_headers("tools/list")), 400, -32600, id_=None)


def test_modern_parse_error(endpoint: McpEndpoint) -> None:
    assert_error(post(endpoint, "{", modern_headers("tools/list")), 400, -32700, id_=None)


# --- Mcp-Param-* headers mirror x-mcp-header arguments at 2026-07-28 ---


def call_routed(endpoint: McpEndpoint, arguments: dict, extra: dict[str, str]) -> HttpReply:
    params = {"_meta": envelope(), "name": "routed", "arguments": arguments}
    return post(endpoint, rpc("tools/call", params), {**modern_headers("tools/call", "routed"), **extra})


def test_mcp_param_headers_that_mirror_the_arguments_pass(endpoint: McpEndpoint) -> None:
    region = "eu-west ✓"
    encoded = "=?base64?" + base64.b64encode(region.encode()).decode() + "?="
    headers = {"Mcp-Param-Region": encoded, "mcp-param-shard": "7.0", "Mcp-Param-Dry": "true"}
    reply = call_routed(endpoint, {"region": region, "shard": 7, "opts": {"dry": True}}, headers)
    assert reply.status == 200, reply.body
    assert call_routed(endpoint, {}, {}).status == 200


@pytest.mark.parametrize(
    ("arguments", "headers"),
    [
        ({"region": "eu"}, {}),  # header missing
        ({"region": "eu"}, {"Mcp-Param-Region": "us"}),  # header differs
        ({}, {"Mcp-Param-Region": "eu"}),  # header without the argument
        ({"shard": 7}, {"Mcp-Param-Shard": "7.5"}),
        ({"opts": {"dry": False}}, {"Mcp-Param-Dry": "true"}),
        ({"region": "eu"}, {"Mcp-Param-Region": "=?base64?!!?="}),  # malformed sentinel
    ],
)
def test_mcp_param_headers_that_disagree_are_header_mismatch(
    endpoint: McpEndpoint, arguments: dict, headers: dict[str, str]
) -> None:
    assert_error(call_routed(endpoint, arguments, headers), 400, -32020)


def test_mcp_param_headers_are_not_checked_in_the_handshake_era(endpoint: McpEndpoint) -> None:
    reply = post(endpoint, rpc("tools/call", {"name": "routed", "arguments": {"region": "eu"}}), legacy())
    assert reply.status == 200 and body_of(reply)["result"]["isError"] is False


# --- construction and isolation ---


def test_catalog_is_validated_at_construction() -> None:
    def invoke(name: str, arguments: dict) -> ToolOutcome:
        return ToolOutcome({}, False)

    with pytest.raises(ValueError, match="duplicate"):
        McpEndpoint([ECHO, ECHO], invoke)
    bad = McpTool("bad", None, "d", {"type": "string"}, {"type": "object"}, True, False, True)
    with pytest.raises(ValueError, match="input_schema"):
        McpEndpoint([bad], invoke)
    bad = McpTool("bad", None, "d", {"type": "object"}, {}, True, False, True)
    with pytest.raises(ValueError, match="output_schema"):
        McpEndpoint([bad], invoke)


def test_listings_are_copies(endpoint: McpEndpoint) -> None:
    first = body_of(post(endpoint, rpc("tools/list")))["result"]["tools"]
    first[0]["inputSchema"]["properties"]["text"]["type"] = "number"
    again = body_of(post(endpoint, rpc("tools/list")))["result"]["tools"]
    assert again[0]["inputSchema"] == ECHO.input_schema


def test_the_module_does_not_import_the_sdk() -> None:
    shared = str(Path(__file__).resolve().parents[2] / "shared")
    code = (
        f"import sys; sys.path.insert(0, {shared!r}); import mnemo.api.mcp; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'starlette', 'anyio')); "
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
