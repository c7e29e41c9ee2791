"""The ``/mcp`` endpoint: one HTTP request in, one :class:`HttpReply` out, for both protocol eras
(see the package docstring); the tools are given to it, it keeps no state between requests."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mnemo.api.mcp.envelope import (
    check_cursor,
    check_envelope,
    check_envelope_shape,
    envelope_version,
    is_implementation,
    unsupported_data,
)
from mnemo.api.mcp.headers import (
    accepts_json,
    annotated_positions,
    check_param_headers,
    find_invalid_x_mcp_header,
    fold_headers,
    is_json_content_type,
)
from mnemo.api.mcp.jsonrpc import (
    HttpReply,
    RpcError,
    classify,
    copy_json,
    error_envelope,
    json_reply,
    parse_json,
    rpc_error_reply,
)
from mnemo.api.mcp.protocol import (
    BATCH_PROTOCOL_VERSIONS,
    DEFAULT_NEGOTIATED_VERSION,
    HANDSHAKE_PROTOCOL_VERSIONS,
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INTERNAL_TOOL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LATEST_HANDSHAKE_VERSION,
    METHOD_NOT_ALLOWED,
    METHOD_NOT_FOUND,
    MODERN_ERROR_STATUS,
    MODERN_PROTOCOL_VERSIONS,
    PARSE_ERROR,
    PROTOCOL_VERSION_META_KEY,
    ROUTING_HEADERS,
    SERVER_INFO_META_KEY,
    UNSUPPORTED_PROTOCOL_VERSION,
    VERSION_HEADER,
)
from mnemo.api.mcp.types import (
    McpPrompt,
    McpResources,
    McpTool,
    ResourceFailed,
    ToolOutcome,
    UnknownTool,
    prompt_to_wire,
    tool_result,
    tool_to_wire,
)

logger = logging.getLogger("mnemo.api.mcp")


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
        prompts: Sequence[McpPrompt] = (),
        resources: McpResources | None = None,
    ) -> None:
        self._invoke = invoke
        self._server_info: dict[str, str] = {"name": server_name, "version": server_version}
        self._instructions = instructions
        self._capabilities: dict[str, Any] = {"tools": {"listChanged": False}}
        self._prompts = {prompt.name: prompt for prompt in prompts}
        self._resources = resources
        if self._prompts:
            self._capabilities["prompts"] = {"listChanged": False}
        if resources is not None:
            self._capabilities["resources"] = {"subscribe": False, "listChanged": False}
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
            self._tool_wire.append(tool_to_wire(tool))
            reason = find_invalid_x_mcp_header(tool.input_schema)
            if reason is not None:
                logger.warning(
                    "tool %r: invalid x-mcp-header annotation (%s); 2026-07-28 clients drop it", tool.name, reason
                )
                self._param_decls[tool.name] = []
            else:
                self._param_decls[tool.name] = list(annotated_positions(tool.input_schema))
        self._handshake_methods = self._handshake_table()
        self._modern_methods = self._modern_table()

    # -- the methods each era serves: name -> body (the request's params in, its result out) --

    def _optional_methods(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        """Both eras' prompt and resource methods, when there are prompts and resources."""
        methods: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}
        if self._prompts:
            methods["prompts/list"] = self._list_prompts
            methods["prompts/get"] = self._get_prompt
        if self._resources is not None:
            methods["resources/list"] = self._list_resources
            methods["resources/templates/list"] = self._list_templates
            methods["resources/read"] = self._read_resource
        return methods

    def _handshake_table(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        return {
            "initialize": self._initialize,
            "ping": lambda _params: {},
            "tools/list": self._list_tools,
            "tools/call": self._call_tool,
            **self._optional_methods(),
        }

    def _modern_table(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        """2026-07-28: no initialize or ping (nor the notifications/roots methods the revision
        removed); server/discover; listings are cacheable (``ttlMs``, ``cacheScope``)."""

        def cacheable(body: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
            return lambda params: {**body(params), "ttlMs": 0, "cacheScope": "private"}

        methods = {"server/discover": self._discover, "tools/list": cacheable(self._list_tools),
                   "tools/call": self._call_tool}  # fmt: skip
        for name, body in self._optional_methods().items():
            methods[name] = cacheable(body) if name.endswith("/list") else body
        return methods

    # -- entry point --

    def handle(self, method: str, headers: Mapping[str, str], body: str | bytes | None) -> HttpReply:
        """Answer one HTTP request to the MCP endpoint."""
        try:
            return self._handle(method, headers, body)
        except Exception:  # the last line of defence: never a stack trace on the wire
            logger.exception("MCP endpoint failed")
            return rpc_error_reply(500, None, INTERNAL_ERROR, "Internal error")

    def _handle(self, method: str, headers: Mapping[str, str], body: str | bytes | None) -> HttpReply:
        if (method or "").upper() != "POST":
            # No session is ever issued, so there is no SSE stream to GET and none to DELETE.
            reply = json_reply(405, dict(METHOD_NOT_ALLOWED))
            reply.headers["Allow"] = "POST"
            return reply
        folded, duplicated = fold_headers(headers)

        accept = folded.get("accept")
        if accept is not None and not accepts_json(accept):
            return rpc_error_reply(406, None, INVALID_REQUEST, "Not Acceptable: Client must accept application/json")
        content_type = folded.get("content-type")
        if content_type is not None and not is_json_content_type(content_type):
            return rpc_error_reply(
                415, None, INVALID_REQUEST, "Unsupported Media Type: Content-Type must be application/json"
            )

        requested = folded.get(VERSION_HEADER)
        if requested is not None and requested not in HANDSHAKE_PROTOCOL_VERSIONS:
            return self._handle_modern(requested, folded, duplicated, body)
        return self._handle_handshake_era(requested or DEFAULT_NEGOTIATED_VERSION, body)

    # -- handshake era (2024-11-05 .. 2025-11-25) --

    def _handle_handshake_era(self, version: str, body: str | bytes | None) -> HttpReply:
        try:
            message = parse_json(body)
        except ValueError:
            return rpc_error_reply(400, None, PARSE_ERROR, "Parse error")

        if isinstance(message, list):
            if version not in BATCH_PROTOCOL_VERSIONS:
                return rpc_error_reply(
                    400, None, INVALID_REQUEST, f"JSON-RPC batches are not supported at protocol version {version}"
                )
            if not message:
                return rpc_error_reply(400, None, INVALID_REQUEST, "Invalid Request: empty batch")
            replies = self._batch(version, message)
            if not replies:
                return HttpReply(202, {}, "")
            return json_reply(200, replies)

        kind = classify(message)
        if kind == "invalid":
            return rpc_error_reply(400, None, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")
        if kind in ("notification", "response"):
            return HttpReply(202, {}, "")
        return json_reply(200, self._handshake_request(version, message))

    def _batch(self, version: str, items: list[Any]) -> list[dict[str, Any]]:
        replies: list[dict[str, Any]] = []
        for item in items:
            kind = classify(item)
            if kind == "invalid":
                replies.append(error_envelope(None, INVALID_REQUEST, "Invalid Request"))
            elif kind == "request":
                if item["method"] == "initialize":
                    replies.append(
                        error_envelope(item["id"], INVALID_REQUEST, "initialize must not be part of a JSON-RPC batch")
                    )
                else:
                    replies.append(self._handshake_request(version, item))
        return replies

    # -- a stream transport (stdio): one JSON-RPC message at a time, no HTTP layer --

    def handle_message(self, message: Any, negotiated: str | None = None) -> Any:
        """Answer one decoded JSON-RPC message of a stream transport (``mnemo mcp`` over stdio):
        a response object, a list of them for a batch, or None (notifications and responses
        get no answer). With no headers, the era is read per request from ``params._meta``: a
        request carrying the 2026-07-28 envelope is served as that revision, any other as the
        handshake era at ``negotiated``, the version an earlier ``initialize`` agreed (batches
        only at 2025-03-26)."""
        try:
            return self._handle_message(message, negotiated)
        except Exception:  # the last line of defence: never a stack trace on the wire
            logger.exception("MCP endpoint failed")
            request_id = message.get("id") if isinstance(message, dict) else None
            return error_envelope(
                request_id if classify(message) == "request" else None, INTERNAL_ERROR, "Internal error"
            )

    def _handle_message(self, message: Any, negotiated: str | None) -> Any:
        version = negotiated or LATEST_HANDSHAKE_VERSION
        if isinstance(message, list):
            if version not in BATCH_PROTOCOL_VERSIONS:
                return error_envelope(
                    None, INVALID_REQUEST, f"JSON-RPC batches are not supported at protocol version {version}"
                )
            if not message:
                return error_envelope(None, INVALID_REQUEST, "Invalid Request: empty batch")
            return self._batch(version, message) or None
        kind = classify(message)
        if kind == "invalid":
            return error_envelope(None, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")
        if kind != "request":
            return None
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if not (isinstance(meta, dict) and PROTOCOL_VERSION_META_KEY in meta):
            return self._handshake_request(version, message)
        try:
            result = self._modern_request(envelope_version(message), message)
        except RpcError as exc:
            return error_envelope(message["id"], exc.code, exc.message, exc.data)
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    def _handshake_request(self, version: str, message: dict[str, Any]) -> dict[str, Any]:
        request_id = message["id"]
        method = message["method"]
        body = self._handshake_methods.get(method)
        try:
            if body is None:
                raise RpcError(METHOD_NOT_FOUND, "Method not found", method)
            result = body(message.get("params") or {})
        except RpcError as exc:
            return error_envelope(request_id, exc.code, exc.message, exc.data)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        offered = params.get("protocolVersion")
        if not isinstance(offered, str):
            raise RpcError(INVALID_PARAMS, "Invalid request parameters: protocolVersion must be a string")
        if not isinstance(params.get("capabilities"), dict):
            raise RpcError(INVALID_PARAMS, "Invalid request parameters: capabilities must be an object")
        if not is_implementation(params.get("clientInfo")):
            raise RpcError(
                INVALID_PARAMS, "Invalid request parameters: clientInfo must be an object with name and version"
            )
        result: dict[str, Any] = {
            "protocolVersion": offered if offered in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION,
            "capabilities": copy_json(self._capabilities),
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
            message = parse_json(body)
        except ValueError:
            return rpc_error_reply(400, None, PARSE_ERROR, "Parse error")

        invalid_body = "Body must be a single JSON-RPC request or notification object"
        if isinstance(message, dict) and "id" not in message:
            # A notification: nothing to act on in this era; acknowledged at a served version.
            if classify(message) != "notification":
                return rpc_error_reply(400, None, INVALID_REQUEST, invalid_body)
            if requested not in MODERN_PROTOCOL_VERSIONS:
                return rpc_error_reply(
                    400,
                    None,
                    UNSUPPORTED_PROTOCOL_VERSION,
                    "Unsupported protocol version",
                    unsupported_data(requested),
                )
            return HttpReply(202, {}, "")
        if classify(message) != "request":
            # A batch, a posted response, or a malformed envelope.
            return rpc_error_reply(400, None, INVALID_REQUEST, invalid_body)

        request_id = message["id"]
        try:
            repeated = sorted(duplicated & ROUTING_HEADERS)
            if repeated:
                raise RpcError(HEADER_MISMATCH, f"{repeated[0]} header appears more than once")
            version = check_envelope(message, headers)
            if message["method"] == "tools/call":
                check_param_headers(self._param_decls, message, headers, duplicated)
            result = self._modern_request(version, message)
        except RpcError as exc:
            status = MODERN_ERROR_STATUS.get(exc.code, 200)
            return json_reply(status, error_envelope(request_id, exc.code, exc.message, exc.data))
        return json_reply(200, {"jsonrpc": "2.0", "id": request_id, "result": result})

    def _modern_request(self, version: str, message: dict[str, Any]) -> dict[str, Any]:
        method = message["method"]
        params = message.get("params") or {}
        body = self._modern_methods.get(method)
        if body is None:
            raise RpcError(METHOD_NOT_FOUND, "Method not found", method)
        check_envelope_shape(params["_meta"])
        result = body(params)
        result["resultType"] = "complete"
        result["_meta"] = {SERVER_INFO_META_KEY: dict(self._server_info)}
        return result

    def _discover(self, _params: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": list(MODERN_PROTOCOL_VERSIONS),
            "capabilities": copy_json(self._capabilities),
            "ttlMs": 0,
            "cacheScope": "private",
        }
        if self._instructions is not None:
            result["instructions"] = self._instructions
        return result

    # -- shared method bodies --

    def _list_tools(self, params: dict[str, Any]) -> dict[str, Any]:
        check_cursor(params)
        return {"tools": copy_json(self._tool_wire)}

    def _list_prompts(self, params: dict[str, Any]) -> dict[str, Any]:
        check_cursor(params)
        return {"prompts": [prompt_to_wire(prompt) for prompt in self._prompts.values()]}

    def _list_resources(self, params: dict[str, Any]) -> dict[str, Any]:
        check_cursor(params)
        assert self._resources is not None
        return {"resources": copy_json(self._resources.resources)}

    def _list_templates(self, params: dict[str, Any]) -> dict[str, Any]:
        check_cursor(params)
        assert self._resources is not None
        return {"resourceTemplates": copy_json(self._resources.templates)}

    def _read_resource(self, params: dict[str, Any]) -> dict[str, Any]:
        assert self._resources is not None
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(INVALID_PARAMS, "Invalid request parameters: uri must be a string")
        try:
            contents = self._resources.read(uri)
        except ResourceFailed as exc:
            raise RpcError(exc.code, exc.message, exc.data) from None
        return {"contents": contents}

    def _get_prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "Invalid request parameters: name must be a string")
        prompt = self._prompts.get(name)
        if prompt is None:
            raise RpcError(INVALID_PARAMS, f"Unknown prompt: {name}")
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
            raise RpcError(INVALID_PARAMS, "Invalid request parameters: arguments must map names to strings")
        known = {argument.name for argument in prompt.arguments}
        unknown = sorted(set(arguments) - known)
        if unknown:
            raise RpcError(INVALID_PARAMS, f"Unknown argument of prompt {name}: {unknown[0]}")
        missing = [a.name for a in prompt.arguments if a.required and not str(arguments.get(a.name, "")).strip()]
        if missing:
            raise RpcError(INVALID_PARAMS, f"Missing required argument of prompt {name}: {missing[0]}")
        text = prompt.render({key: value.strip() for key, value in arguments.items()})
        return {
            "description": prompt.description,
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        }

    def _call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "Invalid request parameters: name must be a string")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        elif not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "Invalid request parameters: arguments must be an object")
        if name not in self._tools:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        try:
            outcome = self._invoke(name, arguments)
            structured, is_error = outcome.structured, bool(outcome.is_error)
            if not isinstance(structured, dict):
                raise TypeError(f"tool {name!r} returned {type(structured).__name__}, not a JSON object")
            text = json.dumps(structured, ensure_ascii=False)
        except UnknownTool:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}") from None
        except Exception:
            logger.exception("tool %r failed", name)
            structured, is_error = dict(INTERNAL_TOOL_ERROR), True
            text = json.dumps(structured)
        return tool_result(structured, text, is_error)
