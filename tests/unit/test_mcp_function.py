"""The MCP function (functions/mcp/handler.py → mnemo.api.routers.mcp) at the Lambda-event level.

The protocol itself is pinned by test_mcp_protocol.py; here: authentication and the body limit
at HTTP level, the catalog generated from the tool registry, and tools/call running the very
service REST runs (scopes, rate limits, X-Project, idempotency, docs/contract.md §4 error bodies).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, ValidationError
from mnemo import __version__, runtime
from mnemo.api.routers import mcp as mcp_app
from mnemo.backends.sqlite import SqliteBackend
from mnemo.config import Settings
from mnemo.embedding import default_embedder
from mnemo.local.server import LocalContext
from mnemo.models.records import RateLimits
from mnemo.models.tools import Args, Result
from mnemo.service import tenancy
from mnemo.service.catalog import REGISTRY, TOOLS
from mnemo.service.identity import ADMIN, READ
from mnemo.service.operations import Operation
from mnemo.service.pipeline import Service
from pydantic import Field

from functions.mcp.handler import lambda_handler
from tests.conftest import EVENTS_KEY

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events"
MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "unit", "version": "1"},
}


def mcp_event(
    body: Any = None, *, method: str = "POST", key: str | None = EVENTS_KEY, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """An API Gateway HTTP API (v2) event for /mcp, as the gateway delivers it (headers lower-cased)."""
    hdrs = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    if key is not None:
        hdrs["authorization"] = f"Bearer {key}"
    hdrs.update({name.lower(): value for name, value in (headers or {}).items()})
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": f"{method} /mcp",
        "rawPath": "/mcp",
        "rawQueryString": "",
        "headers": hdrs,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "unit",
            "http": {"method": method, "path": "/mcp", "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1"},
            "requestId": "unit-request",
            "routeKey": f"{method} /mcp",
            "stage": "$default",
            "timeEpoch": 0,
        },
        "isBase64Encoded": False,
    }
    if body is not None:
        event["body"] = body if isinstance(body, str) else json.dumps(body)
    return event


def handle(event: dict[str, Any]) -> dict[str, Any]:
    return lambda_handler(event, LocalContext("McpFunction"))


def rpc(method: str, params: dict | None = None, id_: int = 1) -> dict:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def legacy_rpc(method: str, params: dict | None = None, **kw: Any) -> dict:
    """One handshake-era request (2025-11-25) through the handler; the JSON-RPC response."""
    headers = {"MCP-Protocol-Version": "2025-11-25", **kw.pop("headers", {})}
    response = handle(mcp_event(rpc(method, params), headers=headers, **kw))
    assert response["statusCode"] == 200, response
    return json.loads(response["body"])


def call_tool(name: str, arguments: dict, **kw: Any) -> dict:
    """A tools/call; the CallToolResult."""
    reply = legacy_rpc("tools/call", {"name": name, "arguments": arguments}, **kw)
    assert "result" in reply, reply
    result = reply["result"]
    # success or docs/contract.md §4 error body: the same JSON as text and as structuredContent
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    return result


def error_of(result: dict) -> dict:
    """The docs/contract.md §4 body of an isError result."""
    assert result["isError"] is True
    return json.loads(result["content"][0]["text"])


def listed_tools() -> dict[str, dict]:
    return {tool["name"]: tool for tool in legacy_rpc("tools/list")["result"]["tools"]}


@pytest.fixture(autouse=True)
def fresh_endpoint() -> Iterator[None]:
    mcp_app.reset_endpoint()
    yield
    mcp_app.reset_endpoint()


# --- HTTP level: authentication first, then the body limit, then the protocol ---


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-key-0123456789abcdef", "Basic dXNlcjpwYXNz", "Bearer "])
def test_a_missing_or_wrong_key_is_401_at_http_level(wired_runtime, authorization):
    headers = {"authorization": authorization} if authorization is not None else {}
    response = handle(mcp_event(rpc("tools/list"), key=None, headers=headers))

    assert response["statusCode"] == 401
    assert response["headers"]["WWW-Authenticate"].startswith("Bearer")
    body = json.loads(response["body"])
    assert body["code"] == "unauthorized" and body["message"]
    assert "jsonrpc" not in body


@pytest.mark.parametrize(
    ("method", "body"), [("POST", "{not json"), ("GET", None), ("DELETE", None), ("POST", "x" * 70_000)]
)
def test_authentication_comes_before_anything_else(wired_runtime, method, body):
    response = handle(mcp_event(body, method=method, key=None))

    assert response["statusCode"] == 401


def test_a_body_over_64_kib_is_413(wired_runtime):
    message = rpc("tools/call", {"name": "memory_add", "arguments": {"content": "a" * (64 * 1024)}})

    response = handle(mcp_event(message))

    assert response["statusCode"] == 413
    assert json.loads(response["body"])["code"] == "content_too_large"


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_are_405_with_allow_post(wired_runtime, method):
    response = handle(mcp_event(method=method, headers={"accept": "text/event-stream"}))

    assert response["statusCode"] == 405
    assert response["headers"]["Allow"] == "POST"
    assert json.loads(response["body"])["code"] == "invalid_request"


def test_initialize_names_the_server_and_issues_no_session(wired_runtime):
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "unit", "version": "1"}}
    response = handle(mcp_event(rpc("initialize", params)))

    assert response["statusCode"] == 200
    result = json.loads(response["body"])["result"]
    assert result["protocolVersion"] == "2025-06-18"
    assert result["serverInfo"] == {"name": "mnemo", "version": __version__}
    assert result["capabilities"] == {
        "tools": {"listChanged": False},
        "prompts": {"listChanged": False},
        "resources": {"subscribe": False, "listChanged": False},
    }
    assert result["instructions"]
    assert not {name.lower() for name in response["headers"]} & {"mcp-session-id"}


# --- the catalog is the registry ---


def test_tools_list_is_the_registry_with_schemas_from_the_models(wired_runtime):
    tools = listed_tools()

    assert list(tools) == list(TOOLS)
    for name, tool in TOOLS.items():
        listed = tools[name]
        assert listed["title"] == tool.title
        assert listed["description"] == tool.description
        # the models' schema, compacted; an argument an earlier tool describes is listed without its description
        generated = mcp_app.compact_schema(tool.args_model.model_json_schema(mode="validation"))
        assert undescribed(listed["inputSchema"]) == undescribed(generated)
        # the result, or the docs/contract.md §4 body an isError result carries
        assert listed["outputSchema"] == mcp_app.output_schema(tool.result)
        Draft202012Validator(listed["outputSchema"]).validate({"message": "no", "code": "not_found"})
        with pytest.raises(ValidationError):
            Draft202012Validator(listed["outputSchema"]).validate({"message": "no", "code": "no such code"})
        assert listed["annotations"] == {
            "readOnlyHint": tool.read_only,
            "destructiveHint": tool.destructive,
            "idempotentHint": tool.idempotent,
            "openWorldHint": False,
        }


def test_every_listed_schema_is_a_valid_object_schema(wired_runtime):
    for name, tool in listed_tools().items():
        for key in ("inputSchema", "outputSchema"):
            schema = tool[key]
            Draft202012Validator.check_schema(schema)
            assert schema["type"] == "object", (name, key)


def undescribed(schema: dict) -> dict:
    """An input schema without its arguments' own descriptions."""
    bare = {name: {k: v for k, v in prop.items() if k != "description"} for name, prop in schema["properties"].items()}
    return {**schema, "properties": bare}


def test_every_input_property_is_described_for_the_agent_once(wired_runtime):
    """Each argument has a description where the list first shows it; one listed without is the same
    argument (name, schema, description) as an earlier tool's, as the instructions tell the agent."""
    described: dict[str, list[dict]] = {}
    for name, tool in listed_tools().items():
        generated = mcp_app.compact_schema(TOOLS[name].args_model.model_json_schema(mode="validation"))
        for prop, schema in tool["inputSchema"]["properties"].items():
            full = generated["properties"][prop]
            assert full.get("description"), f"{name}.{prop} has no description"
            if schema.get("description"):
                assert schema == full
                described.setdefault(prop, []).append(schema)
            else:
                assert full in described.get(prop, []), f"{name}.{prop}: no earlier tool describes it"
    assert "without a description" in mcp_app.INSTRUCTIONS


class _EchoArgs(Args):
    text: str = Field(description="What to echo.")


class _EchoResult(Result):
    echo: str


def test_a_tool_registered_in_the_registry_appears_with_no_mcp_code(wired_runtime):
    # Given a tool that exists only in the registry
    echo = Operation(
        name="zz_echo",
        title="Echo",
        description="Echoes its text.",
        args=_EchoArgs,
        result=_EchoResult,
        run=lambda ctx, args: _EchoResult(project=ctx.project_ref, echo=args.text),
        rate_class="search",
        scopes=frozenset({READ, ADMIN}),
        read_only=True,
        idempotent=True,
    )
    REGISTRY.register(echo)
    try:
        mcp_app.reset_endpoint()
        # When MCP lists and calls it
        listed = listed_tools()[echo.name]
        result = call_tool(echo.name, {"text": "héllo"})
    finally:
        REGISTRY.unregister(echo.name)
    # Then it is there, with its models' schemas, and it runs through the service
    assert listed["inputSchema"]["properties"]["text"]["description"] == "What to echo."
    assert result["isError"] is False
    assert result["structuredContent"]["echo"] == "héllo"


# --- tools/call is Service.invoke ---


def test_tools_call_returns_the_rest_result_as_structured_content(wired_runtime):
    added = call_tool("memory_add", {"content": "Pricing moved to annual-only.", "kind": "decision"})

    found = call_tool("memory_search", {"q": "annual pricing"})

    assert added["isError"] is False
    memory = added["structuredContent"]["memory"]
    assert memory["content"] == "Pricing moved to annual-only." and memory["version"] == 1
    assert added["structuredContent"]["project"]["slug"] == "default"
    assert [m["id"] for m in found["structuredContent"]["memories"]] == [memory["id"]]


def test_results_validate_against_the_listed_output_schema(wired_runtime):
    tools = listed_tools()
    added = call_tool("memory_add", {"content": "x", "tags": ["a"], "expires_at": "2999-01-01T00:00:00Z"})
    found = call_tool("memory_search", {})

    Draft202012Validator(tools["memory_add"]["outputSchema"]).validate(added["structuredContent"])
    Draft202012Validator(tools["memory_search"]["outputSchema"]).validate(found["structuredContent"])


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("search_memory", {"query": "cache latency", "explain": True}),
        ("search_memory", {"query": "nowhere"}),
        ("recall", {"query": "cach"}),
        ("recall_context", {"query": "cache"}),
        ("recall_context", {"query": "cache", "output_json": True}),
    ],
)
def test_retrieval_results_validate_against_the_listed_output_schema(wired_runtime, tool, arguments):
    call_tool("memory_add", {"content": "cache latency is high", "kind": "working"})

    result = call_tool(tool, arguments)

    assert result["isError"] is False
    Draft202012Validator(listed_tools()[tool]["outputSchema"]).validate(result["structuredContent"])


def test_content_over_4096_bytes_is_an_is_error_result(wired_runtime):
    result = call_tool("memory_add", {"content": "é" * 2048 + "x"})

    assert result["isError"] is True
    # the error body conforms to the tool's outputSchema, so clients that validate it accept it
    Draft202012Validator(listed_tools()["memory_add"]["outputSchema"]).validate(result["structuredContent"])
    assert error_of(result)["code"] == "content_too_large"
    assert error_of(result)["message"]


def test_invalid_arguments_are_an_is_error_result_with_details(wired_runtime):
    result = call_tool("memory_search", {"q": "x", "limit": 0})

    assert result["isError"] is True
    assert error_of(result)["code"] == "invalid_request"
    assert error_of(result)["details"][0]["loc"] == ["limit"]


def test_the_x_project_header_chooses_the_project(wired_runtime):
    workspace_id = wired_runtime.authenticate(f"Bearer {EVENTS_KEY}").workspace_id
    tenancy.create_project(wired_runtime.ports, workspace_id, "side")

    added = call_tool("memory_add", {"content": "in the side project"}, headers={"X-Project": "side"})
    in_default = call_tool("memory_search", {})

    assert added["structuredContent"]["project"]["slug"] == "side"
    assert in_default["structuredContent"]["memories"] == []


def test_the_idempotency_key_argument_makes_a_retry_safe(wired_runtime):
    first = call_tool("memory_add", {"content": "once", "idempotency_key": "k-1"})
    again = call_tool("memory_add", {"content": "once", "idempotency_key": "k-1"})
    other = call_tool("memory_add", {"content": "twice", "idempotency_key": "k-1"})

    assert again["structuredContent"] == first["structuredContent"]
    assert len(call_tool("memory_search", {})["structuredContent"]["memories"]) == 1
    assert other["isError"] is True and error_of(other)["code"] == "conflict"


def test_a_key_without_the_scope_gets_a_forbidden_result(wired_runtime):
    workspace_id = wired_runtime.authenticate(f"Bearer {EVENTS_KEY}").workspace_id
    reader = tenancy.create_key(wired_runtime.ports, workspace_id, label="reader", scopes=[READ])

    result = call_tool("memory_add", {"content": "nope"}, key=reader.plain)

    assert result["isError"] is True and error_of(result)["code"] == "forbidden"


@pytest.fixture
def one_write_a_minute(tmp_path: Path) -> Iterator[Service]:
    cfg = Settings(backend="sqlite", data_dir=tmp_path / "limited")
    backend = SqliteBackend(cfg.sqlite_path)
    tenancy.bootstrap(backend, plain_key=EVENTS_KEY)
    svc = Service(backend, default_limits=RateLimits(write=1, search=120), embedder=default_embedder())
    runtime.use(svc, cfg)
    yield svc
    runtime.use(None)
    backend.close()


def test_the_rate_limit_applies_as_an_is_error_result(one_write_a_minute):
    call_tool("memory_add", {"content": "first"})

    limited = call_tool("memory_add", {"content": "second"})

    assert limited["isError"] is True
    assert error_of(limited)["code"] == "rate_limited"
    assert error_of(limited)["retry_after"] >= 1


def test_an_unknown_tool_is_invalid_params(wired_runtime):
    reply = legacy_rpc("tools/call", {"name": "no_such_tool", "arguments": {}})

    assert reply["error"]["code"] == -32602


def test_a_crashing_tool_is_an_internal_result_without_internals(wired_runtime):
    def crash(ctx: Any, args: Any) -> Any:
        raise RuntimeError("secret internals")

    broken = Operation(
        name="zz_broken",
        title="Broken",
        description="Always crashes.",
        args=_EchoArgs,
        result=_EchoResult,
        run=crash,
        rate_class="search",
        scopes=frozenset({READ}),
    )
    REGISTRY.register(broken)
    try:
        mcp_app.reset_endpoint()
        response = handle(mcp_event(rpc("tools/call", {"name": broken.name, "arguments": {"text": "x"}})))
    finally:
        REGISTRY.unregister(broken.name)

    result = json.loads(response["body"])["result"]
    assert result["isError"] is True
    assert result["structuredContent"] == {"message": "internal error", "code": "internal"}
    assert error_of(result) == {"message": "internal error", "code": "internal"}
    assert "secret" not in response["body"] and "Traceback" not in response["body"]


# --- the stateless revision through the handler, and the sample events ---


def test_a_2026_tools_call_through_the_handler(wired_runtime):
    params = {"_meta": ENVELOPE, "name": "memory_add", "arguments": {"content": "stateless"}}
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "memory_add"}

    response = handle(mcp_event(rpc("tools/call", params), headers=headers))

    assert response["statusCode"] == 200
    result = json.loads(response["body"])["result"]
    assert result["isError"] is False and result["resultType"] == "complete"
    assert result["structuredContent"]["memory"]["content"] == "stateless"


@pytest.mark.parametrize("name", ["mcp_initialize.json", "mcp_tools_list.json", "mcp_tools_call.json"])
def test_the_sample_events_get_results(wired_runtime, name):
    response = handle(json.loads((EVENTS / name).read_text()))

    reply = json.loads(response["body"])
    assert "result" in reply, reply
    assert reply["result"].get("isError", False) is False


# --- cold start ---


def test_importing_the_handler_builds_nothing_and_imports_no_sdk():
    code = (
        "import sys, functions.mcp.handler, mnemo.api.routers.mcp as m; "
        "print(m._endpoint is None, sorted(n for n in sys.modules "
        "if n.split('.')[0] in ('mcp', 'mcp_types', 'starlette', 'anyio', 'httpx', 'httpx2', 'jsonschema')))"
    )
    env = {"POWERTOOLS_TRACE_DISABLED": "true", "AWS_DEFAULT_REGION": "us-east-1", "PATH": ""}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, env=env)

    assert out.stdout.strip() == "True []"
