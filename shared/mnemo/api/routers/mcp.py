"""MCP surface: ``POST /mcp`` as a Powertools route around the stdlib protocol layer (``api.mcp``).

The route authenticates the Bearer key first (401 at HTTP level, before any JSON-RPC is read),
enforces the body limit (413), then hands the request to :class:`~mnemo.api.mcp.McpEndpoint`.
The tool catalog is generated from the registry (``service.catalog.TOOLS``): input and output
schemas are the pydantic models' JSON Schemas, so a tool registered there appears here with no
MCP-specific code. A ``tools/call`` runs ``Service.invoke`` with the authenticated caller and the
request's ``CallHeaders`` (``X-Project``, ``Idempotency-Key``) read by the same code as REST, so
scopes, rate limits, validation, header rules and project resolution are exactly those of REST.

No session state: the catalog and the endpoint are built once per process (on the first
request, never at import) and every request carries everything it needs — its caller, its
headers and the service that runs its calls, which the route has from its ``ServiceProvider``
(the stdio server from its caller, ``mnemo.local.cli.mcp``).
"""

from __future__ import annotations

import threading
import time
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import IO, TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.metrics import MetricUnit
from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from mnemo import __version__
from mnemo.api.errors import as_mnemo_error
from mnemo.api.http import CallHeaders, ServiceProvider, SurfaceRouter, raw_body
from mnemo.api.mcp import McpEndpoint, McpTool, ToolOutcome, UnknownTool
from mnemo.api.mcp.stdio import run_stdio
from mnemo.api.routers import mcp_library
from mnemo.models.tools import ErrorBody
from mnemo.observability import logger, metrics
from mnemo.service.catalog import TOOLS
from mnemo.service.identity import Caller
from mnemo.service.operations import Operation

if TYPE_CHECKING:
    from mnemo.service.pipeline import Service

MCP_PATH = "/mcp"
#: ``/mcp`` for AWS IAM (SigV4) callers such as AgentCore Gateway's IAM outbound auth
MCP_IAM_PATH = "/mcp-iam"

INSTRUCTIONS = (
    "Mnemo is your memory across sessions and tools. Save what is worth keeping: decisions and why they were "
    "made, facts about people, customers or systems, insights, and working notes on work in progress (kind "
    "`working`), one idea per memory, in words someone could act on later. Search before you add "
    "(search_memory, or recall when unsure of the wording): when a memory already covers it, update that one "
    "(memory_update) instead of adding a near-duplicate, and forget memories that turned out wrong. At the start "
    "of a task, recall_context gives what is already known as one block of text. Tools act on your default "
    "project unless you pass project. A failed call is a result with isError true and the JSON text "
    '{"message", "code"}: invalid_request (fix the arguments), not_found, conflict (read again, then retry), '
    "rate_limited (retry after retry_after seconds). An argument listed without a description is the same as "
    "the one of that name an earlier tool describes."
)


@dataclass(frozen=True, slots=True)
class _Request:
    """What one request (over HTTP, or the stdio session) contributes to its tool calls."""

    #: the service that runs them
    service: Service
    caller: Caller
    #: ``X-Project`` and ``Idempotency-Key``, read as the REST route reads them
    headers: CallHeaders


# The endpoint is shared by the whole process; the caller of the request being served (and its
# service) travels here (contextvars are per thread, so the local threaded server is safe too).
_current_request: ContextVar[_Request] = ContextVar("mnemo_mcp_request")

_endpoint_lock = threading.Lock()
_endpoint: McpEndpoint | None = None


def compact_schema(schema: Any) -> Any:
    """A generated JSON Schema with what a model reading it gains nothing from taken out, and the same
    meaning: no ``title`` (pydantic's names of models and fields), ``anyOf [X, null]`` of a simple X
    written as X with ``"type": [X's type, "null"]`` (and without X's copy of the description), no
    default that is what leaving the argument out says anyway: ``null``, ``false`` (a flag is off
    unless set) or ``""`` (the description says what an empty query does); other defaults (a limit,
    ``"%"``, ``true``, ``"UTC"``, ``"hybrid"``) stay. Every session starts by reading the tools, so
    their size is paid each time."""
    if not isinstance(schema, dict):
        return schema
    out = {key: value for key, value in schema.items() if not (key == "title" and isinstance(value, str))}
    for key in ("properties", "$defs"):
        if isinstance(out.get(key), dict):
            out[key] = {name: compact_schema(sub) for name, sub in out[key].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = compact_schema(out[key])
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(out.get(key), list):
            out[key] = [compact_schema(sub) for sub in out[key]]
    branches = out.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
        (other,) = [branch for branch in branches if branch != {"type": "null"}]
        if isinstance(other.get("type"), str) and not {"anyOf", "oneOf", "allOf", "$ref", "enum"} & set(other):
            del out["anyOf"]
            merged = {key: value for key, value in other.items() if key != "description"}
            out = {**merged, **out, "type": [other["type"], "null"]}
    if "default" in out and (out["default"] is None or out["default"] is False or out["default"] == ""):
        del out["default"]
    return out


def output_schema(result: type[BaseModel]) -> dict[str, Any]:
    """What a call of the tool answers: its result, or the ``{message, code}`` body of a rejection.

    An ``isError`` result carries that body as ``structuredContent`` (docs/contract.md §4), and the
    MCP revisions since 2025-06-18 say structured results MUST conform to the ``outputSchema``;
    the TypeScript SDK v1 ``Client`` and the Inspector check it, errors included. So the schema
    admits both (``anyOf``), and every client accepts both."""
    keys: list[tuple[type[BaseModel], JsonSchemaMode]] = [(result, "serialization"), (ErrorBody, "serialization")]
    refs, top = models_json_schema(keys)
    return dict(compact_schema({"type": "object", "anyOf": [refs[key] for key in keys], "$defs": top["$defs"]}))


def mcp_tool(tool: Operation) -> McpTool:
    """One registry entry as an MCP tool; both schemas generated from the tool's pydantic models."""
    return McpTool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=compact_schema(tool.args_model.model_json_schema(mode="validation")),
        output_schema=output_schema(tool.result),
        read_only=tool.read_only,
        destructive=tool.destructive,
        idempotent=tool.idempotent,
    )


def build_catalog() -> list[McpTool]:
    """Every registered tool, in registration order, each argument described once (:func:`say_once`)."""
    return say_once([mcp_tool(tool) for tool in TOOLS.values()])


def say_once(tools: list[McpTool]) -> list[McpTool]:
    """The tools with each argument described once: an argument whose name and schema, description
    included, an earlier tool of the list already shows is listed without its description (the
    instructions tell the agent to read it there): ``project`` is described by memory_add only, ``id``
    by memory_get, the filters of the search tools by memory_search or search_memory, recall_context's
    ``query`` and ``mode`` by recall. Type, bounds, pattern and default stay in every tool. Every
    session starts by reading the list, and about half of its arguments repeat an earlier tool's
    (1.9 KB of descriptions said again)."""
    shown: dict[str, list[dict[str, Any]]] = {}
    listed: list[McpTool] = []
    for tool in tools:
        properties: dict[str, Any] = tool.input_schema.get("properties", {})
        said: dict[str, Any] = {}
        for name, schema in properties.items():
            if "description" in schema and schema in shown.get(name, []):
                said[name] = {key: value for key, value in schema.items() if key != "description"}
            else:
                said[name] = schema
                shown.setdefault(name, []).append(schema)
        listed.append(replace(tool, input_schema={**tool.input_schema, "properties": said}) if said else tool)
    return listed


def invoke_tool(name: str, arguments: dict) -> ToolOutcome:
    """Run one ``tools/call`` for the caller of the current request; rejections become isError results."""
    request = _current_request.get()
    tool = TOOLS.get(name)
    if tool is None:
        raise UnknownTool(name)
    started = time.perf_counter()
    try:
        headers = request.headers
        invocation = request.service.invoke(
            name, request.caller, arguments, project_header=headers.project, idempotency_key=headers.idempotency_key
        )
    except Exception as exc:  # noqa: BLE001 - mapped once, in as_mnemo_error (which logs the unexpected)
        error = as_mnemo_error(exc)
        logger.info("tool rejected", extra={"tool": name, "status": error.status, "code": error.code})
        metrics.add_metric(name=f"error_{error.code}", unit=MetricUnit.Count, value=1)
        return ToolOutcome(structured=error.body(), is_error=True)
    metrics.add_metric(name=f"{tool.rate_class}_calls", unit=MetricUnit.Count, value=1)
    logger.info(
        "tool call",
        extra={
            "tool": name,
            "surface": "mcp",
            "workspace_id": request.caller.workspace_id,
            "key_id": request.caller.key_id,
            "duration_ms": round((time.perf_counter() - started) * 1000, 2),
        },
    )
    return ToolOutcome(structured=invocation.result.model_dump(mode="json"), is_error=False)


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One tool for the caller of the current request (a resource read); raises as the service does."""
    request = _current_request.get()
    invocation = request.service.invoke(name, request.caller, arguments, project_header=request.headers.project)
    return invocation.result.model_dump(mode="json")


def mcp_endpoint() -> McpEndpoint:
    """The process's endpoint, built on first use from the registry as it is then."""
    global _endpoint
    if _endpoint is None:
        with _endpoint_lock:
            if _endpoint is None:
                _endpoint = McpEndpoint(
                    build_catalog(),
                    invoke_tool,
                    server_name="mnemo",
                    server_version=__version__,
                    instructions=INSTRUCTIONS,
                    prompts=mcp_library.PROMPTS,
                    resources=mcp_library.resources(_call, lambda exc: as_mnemo_error(exc).body()),
                )
    return _endpoint


def reset_endpoint() -> None:
    """Forget the built endpoint (tests that change the registry)."""
    global _endpoint
    with _endpoint_lock:
        _endpoint = None


def serve_stdio(
    service: Service, caller: Caller, reader: IO[bytes], writer: IO[bytes], *, max_message_bytes: int
) -> None:
    """MCP over stdio for one local caller (``mnemo mcp``) until ``reader`` ends: the same
    endpoint and the same ``Service.invoke`` as ``/mcp``, every call made on ``service`` as
    ``caller``. Metrics are dropped after each message (no Lambda runtime collects them here)."""
    token = _current_request.set(_Request(service, caller, CallHeaders()))  # stdio carries no HTTP headers
    try:
        run_stdio(
            mcp_endpoint(),
            reader,
            writer,
            max_message_bytes=max_message_bytes,
            after_message=metrics.clear_metrics,
            # vectors made after an answer are stored on this thread, between messages: through the
            # connection the calls read with, which then finds no other connection's write; and the
            # backend's own work (SQLite's checkpoint) is done while no message waits
            between=service.between,
        )
    finally:
        _current_request.reset(token)


def mcp_router(root: ServiceProvider) -> SurfaceRouter:
    """``/mcp``, served by ``root``'s service: POST is MCP; GET and DELETE answer 405 with
    ``Allow: POST`` (no sessions here)."""
    router = SurfaceRouter(root)

    @router.serve(["POST", "GET", "DELETE"], MCP_PATH)
    def mcp() -> Response:
        event = router.current_event
        svc = root.service()
        return _serve(root, svc, event, svc.authenticate(event.headers.get("authorization")))

    @router.serve("POST", MCP_IAM_PATH)
    def mcp_iam() -> Response:
        """The same endpoint for callers API Gateway authorised with AWS IAM (SigV4): the caller is the
        signing role's ARN, as API Gateway put it in the request context (docs/aws.md). Only API
        Gateway writes that context: the local server never does, so there this route is always 401."""
        event = router.current_event
        iam = (event.raw_event.get("requestContext") or {}).get("authorizer", {}).get("iam") or {}
        svc = root.service()
        return _serve(root, svc, event, svc.authenticate_iam(iam.get("userArn")))

    return router


def _serve(root: ServiceProvider, svc: Service, event: Any, caller: Caller) -> Response:
    """One HTTP request to the MCP endpoint, for a caller already authenticated."""
    body = raw_body(event.raw_event, root.settings().max_body_bytes)
    metrics.add_metric(name="mcp_requests", unit=MetricUnit.Count, value=1)
    token = _current_request.set(_Request(svc, caller, CallHeaders.of(event.headers)))
    try:
        reply = mcp_endpoint().handle(event.http_method, dict(event.headers), body)
    finally:
        _current_request.reset(token)
    return Response(status_code=reply.status, headers=reply.headers, body=reply.body)
