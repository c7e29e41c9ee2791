"""The OpenAPI 3.1 document, generated from the tool registry's pydantic models.

One operation per tool (``operationId`` = tool name), so the document also serves MCP gateways
that turn OpenAPI operations into tools."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic.json_schema import models_json_schema

from mnemo import __version__
from mnemo.models.common import MAX_IDEMPOTENCY_KEY, MAX_PROJECT_REF
from mnemo.models.tools import ErrorBody
from mnemo.service.catalog import ADMIN_OPERATIONS, TOOLS
from mnemo.service.identity import ADMIN
from mnemo.service.operations import Operation

_ERRORS = {
    "400": "Malformed JSON, wrong types, missing or out-of-range arguments (`invalid_request`).",
    "401": "No key, unknown key or revoked key (`unauthorized`).",
    "403": "The key lacks the scope or the team (`forbidden`).",
    "404": "Unknown id, project or tool (`not_found`).",
    "409": "`if_version` mismatch, or an idempotency key reused with other arguments (`conflict`).",
    "413": "Content over 4096 bytes, or a body over 64 KiB (`content_too_large`).",
    "429": "The workspace's rate-limit bucket is empty (`rate_limited`); see Retry-After.",
    "503": "A backend is down (`unavailable`); see Retry-After.",
    "500": "Anything else (`internal`).",
}

_PATH_PARAMETERS = {"key_id": "The key's id (`key_…`), as listed by GET /v1/admin/keys; never the key itself."}

#: what an admin operation can answer besides success
_ADMIN_ERRORS = {
    **{status: _ERRORS[status] for status in ("400", "401", "429", "503", "500")},
    "403": "The key lacks the `admin` scope (`forbidden`).",
    "404": "No such key or project in this workspace (`not_found`).",
    "409": "A project with that slug exists in the workspace (`conflict`).",
}


def _links_from(tool: Operation) -> dict[str, Any]:
    """OpenAPI links from a tool that creates a memory (answers with one without taking a reference)
    to every tool that takes a memory's reference (``id``, or ``reference`` for forget), so clients
    and stateful testers can chain ``memory_add`` → ``memory_get`` / ``memory_update`` /
    ``memory_delete`` / ``forget``."""
    if "memory" not in tool.result.model_fields or _takes_reference(tool):
        return {}
    links: dict[str, Any] = {}
    for target in TOOLS.values():
        fields = target.args_model.model_fields
        for name in ("id", "reference"):
            if name in fields and fields[name].is_required():
                body: dict[str, Any] = {name: "$response.body#/memory/id"}
                if "if_version" in fields:
                    body["if_version"] = "$response.body#/memory/version"
                links[f"{target.name}_this_memory"] = {
                    "operationId": target.name,
                    "requestBody": body,
                    "description": f"{target.name} on the memory this call returned.",
                }
    return links


def _takes_reference(tool: Operation) -> bool:
    fields = tool.args_model.model_fields
    return any(name in fields and fields[name].is_required() for name in ("id", "reference"))


def build_openapi(server_url: str | None = None) -> dict[str, Any]:
    models: list[tuple[type, Any]] = [(ErrorBody, "serialization")]
    for tool in TOOLS.values():
        models.append((tool.args_model, "validation"))
        models.append((tool.result, "serialization"))
    for op in ADMIN_OPERATIONS.values():
        if op.args is not None:
            models.append((op.args, "validation"))
        models.append((op.result, "serialization"))
    refs, top = models_json_schema(models, ref_template="#/components/schemas/{model}")
    schemas: dict[str, Any] = top.get("$defs", {})
    error_ref = refs[(ErrorBody, "serialization")]
    paths: dict[str, Any] = {}
    for tool in TOOLS.values():
        responses: dict[str, Any] = {
            "200": {
                "description": "Success.",
                "content": {"application/json": {"schema": refs[(tool.result, "serialization")]}},
            }
        }
        if links := _links_from(tool):
            responses["200"]["links"] = links
        for status, text in _ERRORS.items():
            responses[status] = {"description": text, "content": {"application/json": {"schema": error_ref}}}
        operation: dict[str, Any] = {
            "operationId": tool.name,
            "summary": tool.title,
            "description": tool.description,
            "tags": ["read" if tool.read_only else "write"],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": refs[(tool.args_model, "validation")]}},
            },
            "responses": responses,
            "x-mnemo-rate-class": tool.rate_class,
        }
        if tool.name == "memory_add":
            operation["parameters"] = [
                {
                    "name": "Idempotency-Key",
                    "in": "header",
                    "required": False,
                    "description": "Makes a retry safe: the same key and arguments return the first result.",
                    "schema": {"type": "string", "minLength": 1, "maxLength": MAX_IDEMPOTENCY_KEY},
                }
            ]
        operation["parameters"] = [
            *operation.get("parameters", []),
            {
                "name": "X-Project",
                "in": "header",
                "required": False,
                "description": "Project slug or id, used when the body names no project.",
                "schema": {"type": "string", "minLength": 1, "maxLength": MAX_PROJECT_REF},
            },
        ]
        paths[f"/v1/tools/{tool.name}"] = {"post": operation}
    for op in ADMIN_OPERATIONS.values():
        responses = {
            str(op.status): {
                "description": "Success.",
                "content": {"application/json": {"schema": refs[(op.result, "serialization")]}},
            }
        }
        admin_only = op.scopes == {ADMIN}
        for status, text in _ADMIN_ERRORS.items():
            if admin_only or status not in ("403", "404", "409"):
                responses[status] = {"description": text, "content": {"application/json": {"schema": error_ref}}}
        operation = {
            "operationId": op.name,
            "summary": op.title,
            "description": op.description
            + (" Needs a key with the `admin` scope; acts on that key's workspace." if admin_only else ""),
            "tags": ["admin" if admin_only else "key"],
            "responses": responses,
            "x-mnemo-rate-class": op.rate_class,
        }
        params = re.findall(r"\{(\w+)\}", op.path)
        if params:
            operation["parameters"] = [
                {
                    "name": name,
                    "in": "path",
                    "required": True,
                    "description": _PATH_PARAMETERS.get(name, name),
                    "schema": {"type": "string", "maxLength": 64},
                }
                for name in params
            ]
        if op.args is not None:
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": refs[(op.args, "validation")]}},
            }
        paths.setdefault(op.path, {})[op.method.lower()] = operation
    paths["/healthz"] = {
        "get": {
            "operationId": "healthz",
            "summary": "Liveness",
            "description": "Answers 200 while the service is up; needs no key.",
            "security": [],
            "responses": {"200": {"description": "The service answers."}},
        }
    }
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "Mnemo",
            "version": __version__,
            "description": "Memory for AI agents: save short memories and find them again. "
            "Every tool is also available over MCP at POST /mcp.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
    }
    if server_url:
        doc["servers"] = [{"url": server_url}]
    return doc


def render() -> str:
    """The document as committed in ``mnemo/api/openapi.json`` (what ``GET /openapi.json`` serves)."""
    return json.dumps(build_openapi(), indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # make openapi: python -m mnemo.api.openapi shared/mnemo/api/openapi.json
    import sys

    with open(sys.argv[1], "w", encoding="utf-8") as out:
        out.write(render())
