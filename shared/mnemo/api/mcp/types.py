"""What the ``/mcp`` endpoint is given and how it is written on the wire: the tools, prompts and
resources it serves (:class:`McpTool`, :class:`McpPrompt`, :class:`McpResources`), what a tool call
returns (:class:`ToolOutcome`) or raises, and their JSON-RPC forms. Standard library only."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mnemo.api.mcp.jsonrpc import copy_json


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
    """What ``invoke`` returns: the JSON result, or the docs/contract.md §4 error body when ``is_error``."""

    structured: dict
    is_error: bool


class UnknownTool(Exception):
    """Raised by ``invoke`` for a tool name it does not know (answered with JSON-RPC -32602)."""


@dataclass(frozen=True)
class McpPromptArgument:
    name: str
    description: str
    required: bool = False


@dataclass(frozen=True)
class McpPrompt:
    """One prompt as advertised by ``prompts/list``; ``render`` turns its arguments (strings, the
    required ones present) into the text of the one user message ``prompts/get`` answers."""

    name: str
    title: str
    description: str
    arguments: tuple[McpPromptArgument, ...]
    render: Callable[[dict[str, str]], str]


RESOURCE_NOT_FOUND = -32002
"""The spec's code for a resource that does not exist (server/resources, "Error Handling")."""


class ResourceFailed(Exception):
    """Raised by a :class:`McpResources` read: ``code`` is the JSON-RPC error code, ``data`` the
    ``{message, code}`` body of the refusal."""

    def __init__(self, code: int, message: str, data: dict[str, Any]) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class McpResources:
    """What ``resources/list``, ``resources/templates/list`` and ``resources/read`` serve: fixed
    listings, and a ``read`` that answers a URI's contents or raises :class:`ResourceFailed`."""

    def __init__(
        self,
        resources: Sequence[dict[str, Any]],
        templates: Sequence[dict[str, Any]],
        read: Callable[[str], list[dict[str, Any]]],
    ) -> None:
        self.resources = [dict(r) for r in resources]
        self.templates = [dict(t) for t in templates]
        self.read = read


def tool_result(structured: dict[str, Any], text: str, is_error: bool) -> dict[str, Any]:
    """A ``CallToolResult``: the result — or, with ``isError``, the ``{message, code}`` body of a
    rejection — as ``structuredContent`` and as its JSON text.

    Every revision since 2025-06-18 says structured results MUST conform to the tool's
    ``outputSchema``, errors included, and the TypeScript SDK v1 ``Client`` (embedded in most hosts)
    and the Inspector check it before the caller sees the result (they throw -32602 otherwise); the
    Python SDK and the TypeScript SDK v2 skip the check on errors. The tools this endpoint is given
    must therefore declare output schemas that admit their error bodies (Mnemo's do:
    ``api.routers.mcp.output_schema``); then every client accepts both shapes.
    """
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured, "isError": is_error}


def prompt_to_wire(prompt: McpPrompt) -> dict[str, Any]:
    return {
        "name": prompt.name,
        "title": prompt.title,
        "description": prompt.description,
        "arguments": [{"name": a.name, "description": a.description, "required": a.required} for a in prompt.arguments],
    }


def tool_to_wire(tool: McpTool) -> dict[str, Any]:
    wire: dict[str, Any] = {"name": tool.name}
    if tool.title is not None:
        wire["title"] = tool.title
    wire["description"] = tool.description
    wire["inputSchema"] = copy_json(tool.input_schema)
    wire["outputSchema"] = copy_json(tool.output_schema)
    wire["annotations"] = {
        "readOnlyHint": bool(tool.read_only),
        "destructiveHint": bool(tool.destructive),
        "idempotentHint": bool(tool.idempotent),
        "openWorldHint": False,
    }
    return wire
