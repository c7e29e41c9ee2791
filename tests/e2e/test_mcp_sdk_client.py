"""The official MCP SDK client (mcp 2.x) against McpEndpoint served over real HTTP.

McpEndpoint is served from a stdlib ThreadingHTTPServer on 127.0.0.1 (a free port picked per
test) and driven with `mcp.Client(url, mode=...)` over Streamable HTTP in each connect mode the
SDK offers: "legacy" (initialize handshake), the pinned "2026-07-28" revision (per-request
envelope, no probe) and "auto" (probes server/discover first, falls back to initialize).
The SDK is imported only here, never by production code.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import pytest

try:
    import mnemo.api.mcp  # noqa: F401
except ImportError:  # running without a conftest that puts shared/ on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "shared"))

from mnemo.api.mcp import McpEndpoint, McpTool, ToolOutcome, UnknownTool

mcp = pytest.importorskip("mcp")
from mcp import Client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]

# --- a fake catalog of two tools ---

ECHO = McpTool(
    name="echo",
    title="Echo",
    description="Returns its text argument.",
    input_schema={
        "type": "object",
        # x-mcp-header: at 2026-07-28 the client mirrors `text` into an Mcp-Param-Text header.
        "properties": {"text": {"type": "string", "x-mcp-header": "Text"}, "idempotency_key": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {"echo": {"type": "string"}, "args": {"type": "object"}},
        "required": ["echo"],
    },
    read_only=True,
    destructive=False,
    idempotent=True,
)
FAIL = McpTool(
    name="fail",
    title=None,
    description="Always rejects the call.",
    input_schema={"type": "object", "properties": {}},
    output_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
    read_only=False,
    destructive=True,
    idempotent=False,
)


def fake_invoke(name: str, arguments: dict) -> ToolOutcome:
    if name == "echo":
        return ToolOutcome({"echo": arguments.get("text", ""), "args": arguments}, False)
    if name == "fail":
        return ToolOutcome({"message": "Nothing to do.", "code": "invalid_request"}, True)
    raise UnknownTool(name)


# --- serving McpEndpoint from a stdlib HTTP server ---


class _Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[tuple[str, dict[str, str], str]] = []

    def add(self, verb: str, headers: dict[str, str], body: str) -> None:
        with self.lock:
            self.requests.append((verb, headers, body))

    def verbs(self) -> list[str]:
        with self.lock:
            return [verb for verb, _, _ in self.requests]

    def posted(self) -> list[tuple[dict[str, str], dict]]:
        with self.lock:
            return [(h, json.loads(b)) for verb, h, b in self.requests if verb == "POST" and b]


def _make_handler(endpoint: McpEndpoint, recorder: _Recorder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = dict(self.headers.items())
            recorder.add(self.command, headers, raw.decode("utf-8", "replace"))
            if self.path.split("?")[0] != "/mcp":
                reply_status, reply_headers, reply_body = 404, {}, b""
            else:
                reply = endpoint.handle(self.command, headers, raw)
                reply_status, reply_headers, reply_body = reply.status, reply.headers, reply.body.encode("utf-8")
            self.send_response(reply_status)
            for name, value in reply_headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply_body)))
            self.end_headers()
            if reply_body:
                self.wfile.write(reply_body)

        do_POST = do_GET = do_DELETE = do_PUT = do_PATCH = do_OPTIONS = _serve

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (base-class signature)
            pass  # keep test output quiet

    return Handler


@pytest.fixture
def served() -> Iterator[tuple[str, _Recorder]]:
    endpoint = McpEndpoint([ECHO, FAIL], fake_invoke, server_name="mnemo-test", server_version="9.9.9")
    recorder = _Recorder()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(endpoint, recorder))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="mcp-test-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp", recorder
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


async def _exercise(url: str, mode: str) -> dict:
    """Connect in `mode`, list tools, call echo and fail; return what the client saw."""
    async with Client(url, mode=mode, read_timeout_seconds=20) as client:
        listed = await client.list_tools()
        echoed = await client.call_tool("echo", {"text": "héllo 世界", "idempotency_key": "k-1"})
        failed = await client.call_tool("fail", {})
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("nope", {})
        return {
            "protocol_version": client.protocol_version,
            "server_info": client.server_info,
            "capabilities": client.server_capabilities,
            "tools": {tool.name: tool for tool in listed.tools},
            "echo": echoed,
            "fail": failed,
            "unknown": unknown.value,
        }


def _check_common(seen: dict) -> None:
    tools = seen["tools"]
    assert set(tools) == {"echo", "fail"}
    echo, fail = tools["echo"], tools["fail"]
    assert echo.title == "Echo" and fail.title is None
    assert echo.description == "Returns its text argument."
    assert echo.input_schema["required"] == ["text"]
    assert echo.output_schema == ECHO.output_schema
    assert echo.annotations is not None and fail.annotations is not None
    assert (echo.annotations.read_only_hint, echo.annotations.destructive_hint) == (True, False)
    assert (echo.annotations.idempotent_hint, echo.annotations.open_world_hint) == (True, False)
    assert (fail.annotations.read_only_hint, fail.annotations.destructive_hint) == (False, True)
    assert fail.annotations.idempotent_hint is False

    echoed = seen["echo"]
    assert echoed.is_error is False
    assert echoed.structured_content == {
        "echo": "héllo 世界",
        "args": {"text": "héllo 世界", "idempotency_key": "k-1"},
    }
    assert len(echoed.content) == 1 and echoed.content[0].type == "text"
    assert json.loads(echoed.content[0].text) == echoed.structured_content

    failed = seen["fail"]
    assert failed.is_error is True
    assert failed.structured_content == json.loads(failed.content[0].text)
    assert json.loads(failed.content[0].text) == {"message": "Nothing to do.", "code": "invalid_request"}

    assert seen["unknown"].code == -32602
    assert "Unknown tool" in seen["unknown"].error.message


def test_legacy_mode_uses_the_initialize_handshake(served: tuple[str, _Recorder]) -> None:
    url, recorder = served
    seen = anyio.run(_exercise, url, "legacy")
    _check_common(seen)
    assert seen["protocol_version"] == "2025-11-25"
    assert seen["server_info"].name == "mnemo-test" and seen["server_info"].version == "9.9.9"
    assert seen["capabilities"].tools is not None and seen["capabilities"].tools.list_changed is False

    posted = recorder.posted()
    methods = [body.get("method") for _, body in posted]
    assert methods[:2] == ["initialize", "notifications/initialized"]
    assert "server/discover" not in methods
    # The handshake goes out without a version header; everything after it carries the negotiated one.
    assert "mcp-protocol-version" not in {k.lower() for k in posted[0][0]}
    for headers, _ in posted[1:]:
        assert {k.lower(): v for k, v in headers.items()}["mcp-protocol-version"] == "2025-11-25"
    # No session id is ever issued, so the client neither opens a GET stream nor sends DELETE.
    assert set(recorder.verbs()) == {"POST"}


def test_pinned_2026_mode_sends_self_contained_requests(served: tuple[str, _Recorder]) -> None:
    url, recorder = served
    seen = anyio.run(_exercise, url, "2026-07-28")
    _check_common(seen)
    assert seen["protocol_version"] == "2026-07-28"
    # A pinned client adopts a DiscoverResult it synthesizes itself: no probe, no server identity.
    assert seen["server_info"] is None

    posted = recorder.posted()
    methods = [body.get("method") for _, body in posted]
    assert "initialize" not in methods and "server/discover" not in methods
    for headers, body in posted:
        lowered = {k.lower(): v for k, v in headers.items()}
        meta = body["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert "io.modelcontextprotocol/clientCapabilities" in meta
        assert lowered["mcp-protocol-version"] == "2026-07-28"
        assert lowered["mcp-method"] == body["method"]
        if body["method"] == "tools/call":
            assert lowered["mcp-name"] == body["params"]["name"]
        if body["method"] == "tools/call" and body["params"]["name"] == "echo":
            # Non-ASCII values travel base64-wrapped; the server checked it against the body.
            assert lowered["mcp-param-text"].startswith("=?base64?")
    assert set(recorder.verbs()) == {"POST"}


def test_auto_mode_discovers_the_stateless_revision(served: tuple[str, _Recorder]) -> None:
    url, recorder = served
    seen = anyio.run(_exercise, url, "auto")
    _check_common(seen)
    assert seen["protocol_version"] == "2026-07-28"
    # The discover result carries the serverInfo stamp in _meta.
    assert seen["server_info"] is not None and seen["server_info"].name == "mnemo-test"
    assert seen["capabilities"].tools is not None and seen["capabilities"].tools.list_changed is False

    methods = [body.get("method") for _, body in recorder.posted()]
    assert methods[0] == "server/discover"
    assert "initialize" not in methods
    assert set(recorder.verbs()) == {"POST"}


def test_get_and_delete_are_refused_with_allow_post(served: tuple[str, _Recorder]) -> None:
    from tests.support.http import send, split

    target, path = split(served[0])
    for verb in ("GET", "DELETE"):
        refused = send(target, path, None, method=verb, headers={"Accept": "text/event-stream"}, content_type=None)
        assert refused.status == 405
        assert refused.headers["Allow"] == "POST"
