"""HTTP headers of the MCP endpoint: Accept and Content-Type checks, and the 2026-07-28
revision's ``Mcp-Param-*`` headers mirroring ``x-mcp-header`` arguments (mcp/shared/inbound.py)."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from mnemo.api.mcp.jsonrpc import RpcError
from mnemo.api.mcp.protocol import HEADER_MISMATCH, PARAM_HEADER_PREFIX


def fold_headers(headers: Mapping[str, str]) -> tuple[dict[str, str], set[str]]:
    """Lower-case header names; report names supplied more than once (in different spellings)."""
    folded: dict[str, str] = {}
    duplicated: set[str] = set()
    for name, value in (headers or {}).items():
        key = str(name).lower()
        if key in folded:
            duplicated.add(key)
        folded[key] = value if isinstance(value, str) else str(value)
    return folded, duplicated


def accepts_json(accept: str) -> bool:
    # mcp/server/streamable_http.py check_accept_headers (RFC 7231 wildcards).
    types = [part.strip().split(";")[0].strip().lower() for part in accept.split(",")]
    return any(t in ("*/*", "application/*", "application/json") for t in types)


def is_json_content_type(content_type: str) -> bool:
    parts = content_type.split(";")[0].split(",")
    return any(part.strip().lower() == "application/json" for part in parts)


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


def decode_header_value(value: str | None) -> str | None:
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


def find_invalid_x_mcp_header(input_schema: Any) -> str | None:
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


def annotated_positions(input_schema: Any) -> Iterator[tuple[tuple[str, ...], str, dict[str, Any]]]:
    for path, schema in _walk_schema_positions(input_schema):
        token = schema.get(_X_MCP_HEADER_KEY)
        if path and isinstance(token, str):
            yield path, token, schema


def value_at_path(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = arguments
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def render_header_scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if not isinstance(value, str | int | float):
        return None
    try:
        return str(value)
    except ValueError:
        return None


def param_value_matches(prop_type: Any, value: Any, rendered: str, decoded: str) -> bool:
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


def check_param_headers(
    param_decls: Mapping[str, list[tuple[tuple[str, ...], str, dict[str, Any]]]],
    message: dict[str, Any],
    headers: dict[str, str],
    duplicated: set[str],
) -> None:
    """``Mcp-Param-*`` headers must mirror the ``x-mcp-header`` arguments of the called tool."""
    params = message.get("params") or {}
    name = params.get("name")
    decls = param_decls.get(name) if isinstance(name, str) else None
    arguments = params.get("arguments")
    if not decls or (arguments is not None and not isinstance(arguments, dict)):
        return
    arguments = arguments or {}
    for path, token, schema in decls:
        header_name = f"{PARAM_HEADER_PREFIX}{token}"
        key = header_name.lower()
        raw = headers.get(key)
        value = value_at_path(arguments, path)
        argument = ".".join(path)
        if raw is not None and key in duplicated:
            raise RpcError(HEADER_MISMATCH, f"{header_name} header appears more than once")
        if value is None:
            if raw is not None:
                raise RpcError(
                    HEADER_MISMATCH,
                    f"{header_name} header is present but the request body's {argument!r} argument is absent",
                )
            continue
        rendered = render_header_scalar(value)
        if rendered is None:
            if raw is not None:
                raise RpcError(
                    HEADER_MISMATCH, f"{header_name} header does not match the request body's {argument!r} argument"
                )
            continue
        if raw is None:
            raise RpcError(
                HEADER_MISMATCH,
                f"{header_name} header is missing but the request body's {argument!r} argument is present",
            )
        decoded = decode_header_value(raw)
        if decoded is None:
            raise RpcError(HEADER_MISMATCH, f"{header_name} header carries a malformed base64 sentinel value")
        if not param_value_matches(schema.get("type"), value, rendered, decoded):
            raise RpcError(
                HEADER_MISMATCH, f"{header_name} header does not match the request body's {argument!r} argument"
            )
