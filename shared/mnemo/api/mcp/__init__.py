"""The MCP protocol layer: Streamable HTTP in JSON-response mode, with no server-side session.

Self-contained on purpose: it imports only the standard library, because importing any part of
the official ``mcp`` SDK costs more than a second at Lambda cold start (docs/pitfalls.md, "Cold imports cost"). The
rules below were read from the SDK's own server and client (mcp 2.3.0) and are pinned by
``tests/unit/test_mcp_protocol.py`` and ``tests/e2e/test_mcp_sdk_client.py``.

One POST carries one JSON-RPC message; every instance can answer every request, because no
state survives between requests (no ``Mcp-Session-Id`` is ever issued). Two eras share the
endpoint and are told apart by the ``MCP-Protocol-Version`` header only, as the SDK's
``StreamableHTTPSessionManager`` does:

* **Handshake era** -- no header, or one of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25:
  ``initialize`` (answers the offered version when it is one of those, else 2025-11-25),
  ``ping``, ``tools/list``, ``tools/call`` (and, when given, ``prompts/list``, ``prompts/get``,
  ``resources/list``, ``resources/templates/list``, ``resources/read``); notifications and posted responses get ``202``.
  A missing header means 2025-03-26, the only revision with JSON-RPC batches, so batches are
  accepted there and refused (-32600) everywhere else. JSON-RPC errors from dispatch travel
  with HTTP 200, as the SDK's legacy transport sends them; malformed bodies get 400.
* **Stateless era** -- any other header value: the 2026-07-28 per-request envelope. Each
  request carries ``params._meta`` with ``io.modelcontextprotocol/protocolVersion`` and
  ``io.modelcontextprotocol/clientCapabilities`` (``clientInfo`` optional); the headers must
  agree with the body (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` for
  ``tools/call``, ``Mcp-Param-*`` for ``x-mcp-header`` arguments) or the answer is -32020; an
  unsupported version is -32022 with ``{"supported", "requested"}``. Methods:
  ``server/discover``, ``tools/list``, ``tools/call`` and the prompt and resource methods;
  results carry ``resultType`` and the ``serverInfo`` stamp in ``_meta``, cacheable ones
  ``ttlMs`` and ``cacheScope``. Errors map
  to HTTP statuses (400 for -32700/-32600/-32602/-32020/-32021/-32022, 404 for -32601).

Only ``POST`` is served; anything else is ``405`` with ``Allow: POST`` and a ``{message, code}``
body (the SDK client opens a GET stream or sends DELETE only when it holds a session id, which
this server never issues). A rejected tool call is an ``isError`` result whose text is the
``{message, code}`` body, with no ``structuredContent`` (see ``types.tool_result``).

The package: ``protocol`` (constants), ``jsonrpc`` (messages and replies), ``envelope`` (the
2026-07-28 per-request envelope), ``headers`` (HTTP header rules and ``Mcp-Param-*``), ``types``
(what the endpoint serves, and their wire forms), ``endpoint`` (:class:`McpEndpoint`: one dispatch
table per era) and ``stdio`` (the same endpoint over newline-delimited JSON-RPC on stdin/stdout,
the era read per request from ``params._meta``).
"""

from mnemo.api.mcp.endpoint import McpEndpoint
from mnemo.api.mcp.jsonrpc import HttpReply
from mnemo.api.mcp.protocol import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from mnemo.api.mcp.types import (
    RESOURCE_NOT_FOUND,
    McpPrompt,
    McpPromptArgument,
    McpResources,
    McpTool,
    ResourceFailed,
    ToolOutcome,
    UnknownTool,
)

__all__ = [
    "HANDSHAKE_PROTOCOL_VERSIONS",
    "MODERN_PROTOCOL_VERSIONS",
    "RESOURCE_NOT_FOUND",
    "HttpReply",
    "McpEndpoint",
    "McpPrompt",
    "McpPromptArgument",
    "McpResources",
    "McpTool",
    "ResourceFailed",
    "ToolOutcome",
    "UnknownTool",
]
