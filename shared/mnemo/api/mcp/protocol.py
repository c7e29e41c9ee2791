"""MCP protocol constants: revisions, envelope keys, JSON-RPC and MCP error codes, headers
(read from the SDK: mcp_types/version.py, mcp_types/jsonrpc.py, mcp_types/_types.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

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

MODERN_ERROR_STATUS: Final[Mapping[int, int]] = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
"""mcp/shared/inbound.py ERROR_CODE_HTTP_STATUS; unmapped codes (e.g. -32603) travel with 200."""

VERSION_HEADER: Final = "mcp-protocol-version"
METHOD_HEADER: Final = "mcp-method"
NAME_HEADER: Final = "mcp-name"
PARAM_HEADER_PREFIX: Final = "Mcp-Param-"
ROUTING_HEADERS: Final = frozenset({VERSION_HEADER, METHOD_HEADER, NAME_HEADER})
NAME_BEARING_METHODS: Final[Mapping[str, str]] = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

JSON_HEADERS: Final[Mapping[str, str]] = {"Content-Type": "application/json"}
INTERNAL_TOOL_ERROR: Final[Mapping[str, str]] = {"message": "Internal error.", "code": "internal"}
METHOD_NOT_ALLOWED: Final[Mapping[str, str]] = {
    "message": "use POST: this endpoint issues no session, so there is no stream to GET and none to DELETE",
    "code": "invalid_request",
}
"""The body of a ``405`` (any method but POST), in the ``{message, code}`` shape of every other error."""
