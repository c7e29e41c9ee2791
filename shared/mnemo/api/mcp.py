"""The MCP protocol layer: Streamable HTTP in JSON-response mode, with no server-side session.

Self-contained on purpose: it imports only the standard library, because importing any part of
the official ``mcp`` SDK costs more than a second at Lambda cold start (see PITFALLS.md). The
rules below were read from the SDK's own server and client (mcp 2.3.0) and are pinned by
``tests/unit/test_mcp_protocol.py`` and ``tests/e2e/test_mcp_sdk_client.py``.

One POST carries one JSON-RPC message; every instance can answer every request, because no
state survives between requests (no ``Mcp-Session-Id`` is ever issued). Two eras share the
endpoint and are told apart by the ``MCP-Protocol-Version`` header only, as the SDK's
``StreamableHTTPSessionManager`` does:

* **Handshake era** -- no header, or one of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25:
  ``initialize`` (answers the offered version when it is one of those, else 2025-11-25),
  ``ping``, ``tools/list``, ``tools/call``; notifications and posted responses get ``202``.
  A missing header means 2025-03-26, the only revision with JSON-RPC batches, so batches are
  accepted there and refused (-32600) everywhere else. JSON-RPC errors from dispatch travel
  with HTTP 200, as the SDK's legacy transport sends them; malformed bodies get 400.
* **Stateless era** -- any other header value: the 2026-07-28 per-request envelope. Each
  request carries ``params._meta`` with ``io.modelcontextprotocol/protocolVersion`` and
  ``io.modelcontextprotocol/clientCapabilities`` (``clientInfo`` optional); the headers must
  agree with the body (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` for
  ``tools/call``, ``Mcp-Param-*`` for ``x-mcp-header`` arguments) or the answer is -32020; an
  unsupported version is -32022 with ``{"supported", "requested"}``. Methods:
  ``server/discover``, ``tools/list``, ``tools/call``; results carry ``resultType`` and the
  ``serverInfo`` stamp in ``_meta``, cacheable ones ``ttlMs`` and ``cacheScope``. Errors map
  to HTTP statuses (400 for -32700/-32600/-32602/-32020/-32021/-32022, 404 for -32601).

Only ``POST`` is served; anything else is ``405`` with ``Allow: POST`` (the SDK client opens a
GET stream or sends DELETE only when it holds a session id, which this server never issues).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from mnemo.api import strict_json

__all__ = [
    "HANDSHAKE_PROTOCOL_VERSIONS",
    "MODERN_PROTOCOL_VERSIONS",
    "HttpReply",
    "McpEndpoint",
    "McpTool",
    "ToolOutcome",
    "UnknownTool",
]

logger = logging.getLogger(__name__)

# --- Protocol constants (mcp_types/version.py, mcp_types/jsonrpc.py, mcp_types/_types.py) ---

HANDSHAKE_PROTOCOL_VERSIONS: Final[tuple[str, ...]] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Revisions negotiated by ``initialize``, oldest to newest."""

MODERN_PROTOCOL_VERSIONS: Final[tuple[str, ...]] = ("2026-07-28",)
"""Revisions that use the stateless per-request envelope."""

LATEST_HANDSHAKE_VERSION: Final = HANDSHAKE_PROTOCOL_VERSIONS[-1]
DEFAULT_NEGOTIATED_VERSION: Final = "2025-03-26"
"""What a handshake-era request without ``MCP-Protocol-Version`` is taken to speak (spec, SDK)."""

BATCH_PROTOCOL_VERSIONS: Final[tuple[str, ...]] = ("2025-03-26",)
"""JSON-RPC batching came with 2025-03-26 and left with 2025-06-18."""

PROTOCOL_VERSION_META_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_META_KEY: Final = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_META_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_META_KEY: Final = "io.modelcontextprotocol/serverInfo"

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
HEADER_MISMATCH: Final = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022

_MODERN_ERROR_STATUS: Final[Mapping[int, int]] = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
"""mcp/shared/inbound.py ERROR_CODE_HTTP_STATUS; unmapped codes (e.g. -32603) travel with 200."""

_VERSION_HEADER: Final = "mcp-protocol-version"
_METHOD_HEADER: Final = "mcp-method"
_NAME_HEADER: Final = "mcp-name"
_PARAM_HEADER_PREFIX: Final = "Mcp-Param-"
_ROUTING_HEADERS: Final = frozenset({_VERSION_HEADER, _METHOD_HEADER, _NAME_HEADER})
_NAME_BEARING_METHODS: Final[Mapping[str, str]] = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

_JSON_HEADERS: Final[Mapping[str, str]] = {"Content-Type": "application/json"}
_INTERNAL_TOOL_ERROR: Final[Mapping[str, str]] = {"message": "Internal error.", "code": "internal"}


# --- Public API ---


@dataclass(frozen=True)
class McpTool:
    """One tool as advertised by ``tools/list``."""

    name: str
    title: str | None
    description: str
    input_schema: dict  # JSON Schema (object)
    output_schema: dict  # JSON Schema (object)
    read_only: bool
    destructive: bool
    idempotent: bool


@dataclass(frozen=True)
class ToolOutcome:
    """What ``invoke`` returns: the JSON result, or the SPEC §4 error body when ``is_error``."""

    structured: dict
    is_error: bool


@dataclass(frozen=True)
class HttpReply:
    """The HTTP answer to one request; ``body`` is ``""`` when there is none."""

    status: int
    headers: dict[str, str]
    body: str


class UnknownTool(Exception):
    """Raised by ``invoke`` for a tool name it does not know (answered with JSON-RPC -32602)."""


class McpEndpoint:
    """The ``/mcp`` endpoint: one HTTP request in, one :class:`HttpReply` out, no state kept.

    Authentication happens before :meth:`handle`; this class never sees keys.
    """

    def __init__(
        self,
        tools: Sequence[McpTool],
        invoke: Callable[[str, dict], ToolOutcome],
        *,
        server_name: str = "mnemo",
        server_version: str = "0.1.0",
        instructions: str | None = None,
    ) -> None:
        self._invoke = invoke
        self._server_info: dict[str, str] = {"name": server_name, "version": server_version}
        self._instructions = instructions
        self._capabilities: dict[str, Any] = {"tools": {"listChanged": False}}
        self._tools: dict[str, McpTool] = {}
        self._tool_wire: list[dict[str, Any]] = []
        self._param_decls: dict[str, list[tuple[tuple[str, ...], str, dict[str, Any]]]] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"duplicate tool name {tool.name!r}")
            for label, schema in (("input_schema", tool.input_schema), ("output_schema", tool.output_schema)):
                # The SDK client validates every listed tool against the 2025-11-25 schema, where
                # both schemas need `"type": "object"`; one bad tool would fail the whole listing.
                if not isinstance(schema, dict) or schema.get("type") != "object":
                    raise ValueError(f"tool {tool.name!r}: {label} must be a JSON Schema with type 'object'")
            self._tools[tool.name] = tool
            self._tool_wire.append(_tool_to_wire(tool))
            reason = _find_invalid_x_mcp_header(tool.input_schema)
            if reason is not None:
                logger.warning(
                    "tool %r: invalid x-mcp-header annotation (%s); 2026-07-28 clients drop it", tool.name, reason
                )
                self._param_decls[tool.name] = []
            else:
                self._param_decls[tool.name] = list(_annotated_positions(tool.input_schema))

    # -- entry point --

    def handle(self, method: str, headers: Mapping[str, str], body: str | bytes | None) -> HttpReply:
        """Answer one HTTP request to the MCP endpoint."""
        try:
            return self._handle(method, headers, body)
        except Exception:  # the last line of defence: never a stack trace on the wire
            logger.exception("MCP endpoint failed")
            return _rpc_error_reply(500, None, INTERNAL_ERROR, "Internal error")

    def _handle(self, method: str, headers: Mapping[str, str], body: str | bytes | None) -> HttpReply:
        if (method or "").upper() != "POST":
            return HttpReply(405, {"Allow": "POST"}, "")
        folded, duplicated = _fold_headers(headers)

        accept = folded.get("accept")
        if accept is not None and not _accepts_json(accept):
            return _rpc_error_reply(406, None, INVALID_REQUEST, "Not Acceptable: Client must accept application/json")
        content_type = folded.get("content-type")
        if content_type is not None and not _is_json_content_type(content_type):
            return _rpc_error_reply(
                415, None, INVALID_REQUEST, "Unsupported Media Type: Content-Type must be application/json"
            )

        requested = folded.get(_VERSION_HEADER)
        if requested is not None and requested not in HANDSHAKE_PROTOCOL_VERSIONS:
            return self._handle_modern(requested, folded, duplicated, body)
        return self._handle_handshake_era(requested or DEFAULT_NEGOTIATED_VERSION, body)

    # -- handshake era (2024-11-05 .. 2025-11-25) --

    def _handle_handshake_era(self, version: str, body: str | bytes | None) -> HttpReply:
        try:
            message = _parse_json(body)
        except ValueError:
            return _rpc_error_reply(400, None, PARSE_ERROR, "Parse error")

        if isinstance(message, list):
            if version not in BATCH_PROTOCOL_VERSIONS:
                return _rpc_error_reply(
                    400, None, INVALID_REQUEST, f"JSON-RPC batches are not supported at protocol version {version}"
                )
            if not message:
                return _rpc_error_reply(400, None, INVALID_REQUEST, "Invalid Request: empty batch")
            replies: list[dict[str, Any]] = []
            for item in message:
                kind = _classify(item)
                if kind == "invalid":
                    replies.append(_error_envelope(None, INVALID_REQUEST, "Invalid Request"))
                elif kind == "request":
                    if item["method"] == "initialize":
                        replies.append(
                            _error_envelope(
                                item["id"], INVALID_REQUEST, "initialize must not be part of a JSON-RPC batch"
                            )
                        )
                    else:
                        replies.append(self._handshake_request(version, item))
            if not replies:
                return HttpReply(202, {}, "")
            return _json_reply(200, replies)

        kind = _classify(message)
        if kind == "invalid":
            return _rpc_error_reply(400, None, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")
        if kind in ("notification", "response"):
            return HttpReply(202, {}, "")
        return _json_reply(200, self._handshake_request(version, message))

    def _handshake_request(self, version: str, message: dict[str, Any]) -> dict[str, Any]:
        request_id = message["id"]
        method = message["method"]
        params = message.get("params") or {}
        try:
            if method == "initialize":
                result = self._initialize(params)
            elif method == "ping":
                result = {}
            elif method == "tools/list":
                _check_cursor(params)
                result = {"tools": self._tools_listing()}
            elif method == "tools/call":
                result = self._call_tool(params)
            else:
                raise _RpcError(METHOD_NOT_FOUND, "Method not found", method)
        except _RpcError as exc:
            return _error_envelope(request_id, exc.code, exc.message, exc.data)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        offered = params.get("protocolVersion")
        if not isinstance(offered, str):
            raise _RpcError(INVALID_PARAMS, "Invalid request parameters: protocolVersion must be a string")
        if not isinstance(params.get("capabilities"), dict):
            raise _RpcError(INVALID_PARAMS, "Invalid request parameters: capabilities must be an object")
        if not _is_implementation(params.get("clientInfo")):
            raise _RpcError(
                INVALID_PARAMS, "Invalid request parameters: clientInfo must be an object with name and version"
            )
        result: dict[str, Any] = {
            "protocolVersion": offered if offered in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION,
            "capabilities": _copy_json(self._capabilities),
            "serverInfo": dict(self._server_info),
        }
        if self._instructions is not None:
            result["instructions"] = self._instructions
        return result

    # -- stateless era (2026-07-28) --

    def _handle_modern(
        self, requested: str, headers: dict[str, str], duplicated: set[str], body: str | bytes | None
    ) -> HttpReply:
        try:
            message = _parse_json(body)
        except ValueError:
            return _rpc_error_reply(400, None, PARSE_ERROR, "Parse error")

        invalid_body = "Body must be a single JSON-RPC request or notification object"
        if isinstance(message, dict) and "id" not in message:
            # A notification: nothing to act on in this era; acknowledged at a served version.
            if _classify(message) != "notification":
                return _rpc_error_reply(400, None, INVALID_REQUEST, invalid_body)
            if requested not in MODERN_PROTOCOL_VERSIONS:
                return _rpc_error_reply(
                    400,
                    None,
                    UNSUPPORTED_PROTOCOL_VERSION,
                    "Unsupported protocol version",
                    _unsupported_data(requested),
                )
            return HttpReply(202, {}, "")
        if _classify(message) != "request":
            # A batch, a posted response, or a malformed envelope.
            return _rpc_error_reply(400, None, INVALID_REQUEST, invalid_body)

        request_id = message["id"]
        try:
            repeated = sorted(duplicated & _ROUTING_HEADERS)
            if repeated:
                raise _RpcError(HEADER_MISMATCH, f"{repeated[0]} header appears more than once")
            version = _check_envelope(message, headers)
            if message["method"] == "tools/call":
                self._check_param_headers(message, headers, duplicated)
            result = self._modern_request(version, message)
        except _RpcError as exc:
            status = _MODERN_ERROR_STATUS.get(exc.code, 200)
            return _json_reply(status, _error_envelope(request_id, exc.code, exc.message, exc.data))
        return _json_reply(200, {"jsonrpc": "2.0", "id": request_id, "result": result})

    def _modern_request(self, version: str, message: dict[str, Any]) -> dict[str, Any]:
        method = message["method"]
        params = message.get("params") or {}
        if method not in ("server/discover", "tools/list", "tools/call"):
            # Includes initialize, ping and the notifications/roots methods the revision removed.
            raise _RpcError(METHOD_NOT_FOUND, "Method not found", method)
        _check_envelope_shape(params["_meta"])
        if method == "server/discover":
            result: dict[str, Any] = {
                "supportedVersions": list(MODERN_PROTOCOL_VERSIONS),
                "capabilities": _copy_json(self._capabilities),
                "ttlMs": 0,
                "cacheScope": "private",
            }
            if self._instructions is not None:
                result["instructions"] = self._instructions
        elif method == "tools/list":
            _check_cursor(params)
            result = {"tools": self._tools_listing(), "ttlMs": 0, "cacheScope": "private"}
        else:
            result = self._call_tool(params)
        result["resultType"] = "complete"
        result["_meta"] = {SERVER_INFO_META_KEY: dict(self._server_info)}
        return result

    def _check_param_headers(self, message: dict[str, Any], headers: dict[str, str], duplicated: set[str]) -> None:
        """``Mcp-Param-*`` headers must mirror the ``x-mcp-header`` arguments of the called tool."""
        params = message.get("params") or {}
        name = params.get("name")
        decls = self._param_decls.get(name) if isinstance(name, str) else None
        arguments = params.get("arguments")
        if not decls or (arguments is not None and not isinstance(arguments, dict)):
            return
        arguments = arguments or {}
        for path, token, schema in decls:
            header_name = f"{_PARAM_HEADER_PREFIX}{token}"
            key = header_name.lower()
            raw = headers.get(key)
            value = _value_at_path(arguments, path)
            argument = ".".join(path)
            if raw is not None and key in duplicated:
                raise _RpcError(HEADER_MISMATCH, f"{header_name} header appears more than once")
            if value is None:
                if raw is not None:
                    raise _RpcError(
                        HEADER_MISMATCH,
                        f"{header_name} header is present but the request body's {argument!r} argument is absent",
                    )
                continue
            rendered = _render_header_scalar(value)
            if rendered is None:
                if raw is not None:
                    raise _RpcError(
                        HEADER_MISMATCH, f"{header_name} header does not match the request body's {argument!r} argument"
                    )
                continue
            if raw is None:
                raise _RpcError(
                    HEADER_MISMATCH,
                    f"{header_name} header is missing but the request body's {argument!r} argument is present",
                )
            decoded = _decode_header_value(raw)
            if decoded is None:
                raise _RpcError(HEADER_MISMATCH, f"{header_name} header carries a malformed base64 sentinel value")
            if not _param_value_matches(schema.get("type"), value, rendered, decoded):
                raise _RpcError(
                    HEADER_MISMATCH, f"{header_name} header does not match the request body's {argument!r} argument"
                )

    # -- shared method bodies --

    def _tools_listing(self) -> list[dict[str, Any]]:
        return _copy_json(self._tool_wire)

    def _call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise _RpcError(INVALID_PARAMS, "Invalid request parameters: name must be a string")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        elif not isinstance(arguments, dict):
            raise _RpcError(INVALID_PARAMS, "Invalid request parameters: arguments must be an object")
        if name not in self._tools:
            raise _RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        try:
            outcome = self._invoke(name, arguments)
            structured, is_error = outcome.structured, bool(outcome.is_error)
            if not isinstance(structured, dict):
                raise TypeError(f"tool {name!r} returned {type(structured).__name__}, not a JSON object")
            text = json.dumps(structured, ensure_ascii=False)
        except UnknownTool:
            raise _RpcError(INVALID_PARAMS, f"Unknown tool: {name}") from None
        except Exception:
            logger.exception("tool %r failed", name)
            structured, is_error = dict(_INTERNAL_TOOL_ERROR), True
            text = json.dumps(structured)
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": structured,
            "isError": is_error,
        }


# --- Internals ---


class _RpcError(Exception):
    _NO_DATA: Final = object()

    def __init__(self, code: int, message: str, data: Any = _NO_DATA) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def _error_envelope(request_id: Any, code: int, message: str, data: Any = _RpcError._NO_DATA) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not _RpcError._NO_DATA and data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _json_reply(status: int, payload: Any) -> HttpReply:
    return HttpReply(status, dict(_JSON_HEADERS), json.dumps(payload, ensure_ascii=False, separators=(",", ":")))


def _rpc_error_reply(
    status: int, request_id: Any, code: int, message: str, data: Any = _RpcError._NO_DATA
) -> HttpReply:
    return _json_reply(status, _error_envelope(request_id, code, message, data))


def _unsupported_data(requested: Any) -> dict[str, Any]:
    return {"supported": list(MODERN_PROTOCOL_VERSIONS), "requested": requested}


def _copy_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _tool_to_wire(tool: McpTool) -> dict[str, Any]:
    wire: dict[str, Any] = {"name": tool.name}
    if tool.title is not None:
        wire["title"] = tool.title
    wire["description"] = tool.description
    wire["inputSchema"] = _copy_json(tool.input_schema)
    wire["outputSchema"] = _copy_json(tool.output_schema)
    wire["annotations"] = {
        "readOnlyHint": bool(tool.read_only),
        "destructiveHint": bool(tool.destructive),
        "idempotentHint": bool(tool.idempotent),
        "openWorldHint": False,
    }
    return wire


def _fold_headers(headers: Mapping[str, str]) -> tuple[dict[str, str], set[str]]:
    """Lower-case header names; report names supplied more than once (in different spellings)."""
    folded: dict[str, str] = {}
    duplicated: set[str] = set()
    for name, value in (headers or {}).items():
        key = str(name).lower()
        if key in folded:
            duplicated.add(key)
        folded[key] = value if isinstance(value, str) else str(value)
    return folded, duplicated


def _accepts_json(accept: str) -> bool:
    # mcp/server/streamable_http.py check_accept_headers (RFC 7231 wildcards).
    types = [part.strip().split(";")[0].strip().lower() for part in accept.split(",")]
    return any(t in ("*/*", "application/*", "application/json") for t in types)


def _is_json_content_type(content_type: str) -> bool:
    parts = content_type.split(";")[0].split(",")
    return any(part.strip().lower() == "application/json" for part in parts)


def _parse_json(body: str | bytes | None) -> Any:
    """Decode a request body; any failure is a ValueError (answered as a parse error)."""
    if body is None:
        raise ValueError("empty body")
    try:
        text = body.decode("utf-8") if isinstance(body, bytes | bytearray) else body
        return strict_json.loads(text)
    except (UnicodeDecodeError, RecursionError) as exc:
        raise ValueError(str(exc)) from None


def _is_request_id(value: Any) -> bool:
    # mcp_types.jsonrpc.RequestId: a strict int (no bool, no float) or a string.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _classify(message: Any) -> str:
    """One JSON-RPC 2.0 message: "request", "notification", "response" or "invalid"."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return "invalid"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "invalid"
        if message.get("params") is not None and not isinstance(message["params"], dict):
            return "invalid"
        if "id" not in message:
            return "notification"
        return "request" if _is_request_id(message["id"]) else "invalid"
    if "id" not in message:
        return "invalid"
    if isinstance(message.get("result"), dict) and _is_request_id(message["id"]):
        return "response"
    error = message.get("error")
    if (
        isinstance(error, dict)
        and isinstance(error.get("code"), int)
        and isinstance(error.get("message"), str)
        and (message["id"] is None or _is_request_id(message["id"]))
    ):
        return "response"
    return "invalid"


def _is_implementation(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("name"), str) and isinstance(value.get("version"), str)


def _check_cursor(params: dict[str, Any]) -> None:
    if params.get("cursor") is not None and not isinstance(params["cursor"], str):
        raise _RpcError(INVALID_PARAMS, "Invalid request parameters: cursor must be a string")


def _check_envelope(message: dict[str, Any], headers: Mapping[str, str]) -> str:
    """The 2026-07-28 request ladder (mcp/shared/inbound.py classify_inbound_request); returns the version."""
    params = message.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("_meta"), dict):
        raise _RpcError(
            INVALID_PARAMS,
            "params._meta must be an object carrying the required "
            f"{PROTOCOL_VERSION_META_KEY!r} and {CLIENT_CAPABILITIES_META_KEY!r} envelope keys",
        )
    meta: dict[str, Any] = params["_meta"]
    missing = [key for key in (PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY) if key not in meta]
    if missing:
        raise _RpcError(INVALID_PARAMS, f"params._meta is missing the required envelope key(s): {', '.join(missing)}")
    version = meta[PROTOCOL_VERSION_META_KEY]
    version_header = headers.get(_VERSION_HEADER)
    if version_header is None or version_header != version:
        raise _RpcError(
            HEADER_MISMATCH, f"{_VERSION_HEADER} header does not match the request envelope's protocol version"
        )
    method = message["method"]
    if headers.get(_METHOD_HEADER) != method:
        raise _RpcError(HEADER_MISMATCH, f"{_METHOD_HEADER} header does not match the request body's method")
    name_key = _NAME_BEARING_METHODS.get(method)
    if name_key is not None:
        body_value = params.get(name_key)
        if body_value is not None and _decode_header_value(headers.get(_NAME_HEADER)) != body_value:
            raise _RpcError(
                HEADER_MISMATCH, f"{_NAME_HEADER} header does not match the request body's {name_key!r} parameter"
            )
    if not isinstance(version, str):
        raise _RpcError(INVALID_PARAMS, "the protocol-version envelope value must be a string")
    if version not in MODERN_PROTOCOL_VERSIONS:
        raise _RpcError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", _unsupported_data(version))
    return version


def _check_envelope_shape(meta: dict[str, Any]) -> None:
    """What the 2026-07-28 RequestMetaObject demands beyond presence (else INVALID_PARAMS)."""
    if not isinstance(meta.get(CLIENT_CAPABILITIES_META_KEY), dict):
        raise _RpcError(INVALID_PARAMS, f"Invalid request parameters: {CLIENT_CAPABILITIES_META_KEY} must be an object")
    client_info = meta.get(CLIENT_INFO_META_KEY)
    if client_info is not None and not _is_implementation(client_info):
        raise _RpcError(
            INVALID_PARAMS,
            f"Invalid request parameters: {CLIENT_INFO_META_KEY} must be an object with name and version",
        )


# --- Header values and x-mcp-header (mcp/shared/inbound.py) ---

_B64_SENTINEL = re.compile(r"^=\?base64\?(?P<payload>.*)\?=$")
_RFC9110_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_CANONICAL_DECIMAL = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")
_X_MCP_HEADER_KEY: Final = "x-mcp-header"
_X_MCP_HEADER_TYPES: Final = frozenset({"string", "integer", "boolean"})
_SUBSCHEMA_SINGLE: Final = frozenset(
    {
        "items",
        "contains",
        "unevaluatedItems",
        "additionalProperties",
        "propertyNames",
        "unevaluatedProperties",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
_SUBSCHEMA_LIST: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SUBSCHEMA_MAP: Final = frozenset({"patternProperties", "dependentSchemas", "$defs", "definitions"})


def _decode_header_value(value: str | None) -> str | None:
    """Undo the ``=?base64?...?=`` sentinel; a malformed sentinel decodes to None."""
    if value is None:
        return None
    match = _B64_SENTINEL.fullmatch(value)
    if match is None:
        return value
    payload = match.group("payload")
    try:
        decoded = base64.b64decode(payload, validate=True)
    except binascii.Error:
        return None
    if base64.b64encode(decoded).decode("ascii") != payload:
        return None
    try:
        return decoded.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _walk_schema_positions(root: Any) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), root)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield path, node
        for keyword, value in node.items():
            if keyword == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    stack.append(((*path, name) if path is not None else None, sub))
            elif keyword in _SUBSCHEMA_SINGLE:
                stack.append((None, value))
            elif keyword in _SUBSCHEMA_LIST and isinstance(value, list):
                stack.extend((None, sub) for sub in value)
            elif keyword in _SUBSCHEMA_MAP and isinstance(value, dict):
                stack.extend((None, sub) for sub in value.values())


def _find_invalid_x_mcp_header(input_schema: Any) -> str | None:
    seen: dict[str, str] = {}
    for path, schema in _walk_schema_positions(input_schema):
        if _X_MCP_HEADER_KEY not in schema:
            continue
        if not path:
            return f"{_X_MCP_HEADER_KEY} found at a schema position not reachable via a pure `properties` chain"
        where = ".".join(path)
        header = schema[_X_MCP_HEADER_KEY]
        if not isinstance(header, str) or not _RFC9110_TOKEN.fullmatch(header):
            return f"property {where!r}: {_X_MCP_HEADER_KEY} must be an RFC 9110 token"
        if schema.get("type") not in _X_MCP_HEADER_TYPES:
            return f"property {where!r}: {_X_MCP_HEADER_KEY} is only permitted on integer/string/boolean properties"
        if header.lower() in seen:
            return f"{_X_MCP_HEADER_KEY} {header!r} on property {where!r} duplicates property {seen[header.lower()]!r}"
        seen[header.lower()] = where
    return None


def _annotated_positions(input_schema: Any) -> Iterator[tuple[tuple[str, ...], str, dict[str, Any]]]:
    for path, schema in _walk_schema_positions(input_schema):
        token = schema.get(_X_MCP_HEADER_KEY)
        if path and isinstance(token, str):
            yield path, token, schema


def _value_at_path(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = arguments
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _render_header_scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if not isinstance(value, str | int | float):
        return None
    try:
        return str(value)
    except ValueError:
        return None


def _param_value_matches(prop_type: Any, value: Any, rendered: str, decoded: str) -> bool:
    if (
        prop_type == "integer"
        and not isinstance(value, bool)
        and (isinstance(value, int) or (isinstance(value, float) and value.is_integer()))
        and _CANONICAL_DECIMAL.fullmatch(decoded) is not None
    ):
        whole, _, fraction = decoded.partition(".")
        if fraction and set(fraction) != {"0"}:
            return False
        try:
            return int(whole) == int(value)
        except ValueError:
            return False
    return decoded == rendered
