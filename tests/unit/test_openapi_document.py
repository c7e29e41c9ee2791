"""The OpenAPI document as an MCP-gateway target: one operation per tool, operationId = tool name,
and a description on every operation and every argument (gateways turn them into tool docs)."""

from __future__ import annotations

from typing import Any

from mnemo.api.openapi import build_openapi
from mnemo.service.catalog import TOOLS


def _resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    node: Any = doc
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return _resolve(doc, node)


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, verb, op) for path, item in doc["paths"].items() for verb, op in item.items()]


def test_one_operation_per_tool_named_after_it():
    doc = build_openapi()

    tool_ops = {op["operationId"]: path for path, _, op in _operations(doc) if path.startswith("/v1/tools/")}

    assert tool_ops == {name: f"/v1/tools/{name}" for name in TOOLS}


def test_every_operation_has_a_description():
    doc = build_openapi()

    missing = [op.get("operationId", path) for path, _, op in _operations(doc) if not op.get("description", "").strip()]

    assert missing == []


def test_every_argument_has_a_description():
    doc = build_openapi()
    missing: list[str] = []

    for _, _, op in _operations(doc):
        for parameter in op.get("parameters", []):
            if not parameter.get("description", "").strip():
                missing.append(f"{op['operationId']}: header {parameter['name']}")
        body = op.get("requestBody")
        if body is None:
            continue
        schema = _resolve(doc, body["content"]["application/json"]["schema"])
        assert schema["type"] == "object" and schema["properties"], op["operationId"]
        for name, prop in schema["properties"].items():
            if not str(prop.get("description", "")).strip():
                missing.append(f"{op['operationId']}: {name}")

    assert missing == []


def test_the_served_document_is_the_one_the_models_generate():
    """``GET /openapi.json`` serves the committed file; it must be what the models generate now
    (after a change to a model or a tool: ``make openapi``)."""
    from importlib import resources

    from mnemo.api.openapi import render

    committed = resources.files("mnemo.api").joinpath("openapi.json").read_text("utf-8")
    assert committed == render(), "shared/mnemo/api/openapi.json is out of date: run `make openapi`"
