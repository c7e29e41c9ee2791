"""The 2026-07-28 stateless revision's per-request envelope (``params._meta``) and its checks
(mcp/shared/inbound.py ``classify_inbound_request``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mnemo.api.mcp.headers import decode_header_value
from mnemo.api.mcp.jsonrpc import RpcError
from mnemo.api.mcp.protocol import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    HEADER_MISMATCH,
    INVALID_PARAMS,
    METHOD_HEADER,
    MODERN_PROTOCOL_VERSIONS,
    NAME_BEARING_METHODS,
    NAME_HEADER,
    PROTOCOL_VERSION_META_KEY,
    UNSUPPORTED_PROTOCOL_VERSION,
    VERSION_HEADER,
)


def unsupported_data(requested: Any) -> dict[str, Any]:
    return {"supported": list(MODERN_PROTOCOL_VERSIONS), "requested": requested}


def is_implementation(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("name"), str) and isinstance(value.get("version"), str)


def check_cursor(params: dict[str, Any]) -> None:
    if params.get("cursor") is not None and not isinstance(params["cursor"], str):
        raise RpcError(INVALID_PARAMS, "Invalid request parameters: cursor must be a string")


def check_envelope(message: dict[str, Any], headers: Mapping[str, str]) -> str:
    """The 2026-07-28 request ladder (mcp/shared/inbound.py classify_inbound_request); returns the version."""
    params = message.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("_meta"), dict):
        raise RpcError(
            INVALID_PARAMS,
            "params._meta must be an object carrying the required "
            f"{PROTOCOL_VERSION_META_KEY!r} and {CLIENT_CAPABILITIES_META_KEY!r} envelope keys",
        )
    meta: dict[str, Any] = params["_meta"]
    missing = [key for key in (PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY) if key not in meta]
    if missing:
        raise RpcError(INVALID_PARAMS, f"params._meta is missing the required envelope key(s): {', '.join(missing)}")
    version = meta[PROTOCOL_VERSION_META_KEY]
    version_header = headers.get(VERSION_HEADER)
    if version_header is None or version_header != version:
        raise RpcError(
            HEADER_MISMATCH, f"{VERSION_HEADER} header does not match the request envelope's protocol version"
        )
    method = message["method"]
    if headers.get(METHOD_HEADER) != method:
        raise RpcError(HEADER_MISMATCH, f"{METHOD_HEADER} header does not match the request body's method")
    name_key = NAME_BEARING_METHODS.get(method)
    if name_key is not None:
        body_value = params.get(name_key)
        if body_value is not None and decode_header_value(headers.get(NAME_HEADER)) != body_value:
            raise RpcError(
                HEADER_MISMATCH, f"{NAME_HEADER} header does not match the request body's {name_key!r} parameter"
            )
    if not isinstance(version, str):
        raise RpcError(INVALID_PARAMS, "the protocol-version envelope value must be a string")
    if version not in MODERN_PROTOCOL_VERSIONS:
        raise RpcError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", unsupported_data(version))
    return version


def envelope_version(message: dict[str, Any]) -> str:
    """The 2026-07-28 request ladder without headers (stdio): the envelope keys must be present,
    the version a string the server supports; returns it."""
    params = message.get("params")
    meta: dict[str, Any] = params["_meta"] if isinstance(params, dict) and isinstance(params.get("_meta"), dict) else {}
    missing = [key for key in (PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY) if key not in meta]
    if missing:
        raise RpcError(INVALID_PARAMS, f"params._meta is missing the required envelope key(s): {', '.join(missing)}")
    version = meta[PROTOCOL_VERSION_META_KEY]
    if not isinstance(version, str):
        raise RpcError(INVALID_PARAMS, "the protocol-version envelope value must be a string")
    if version not in MODERN_PROTOCOL_VERSIONS:
        raise RpcError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", unsupported_data(version))
    return version


def check_envelope_shape(meta: dict[str, Any]) -> None:
    """What the 2026-07-28 RequestMetaObject demands beyond presence (else INVALID_PARAMS)."""
    if not isinstance(meta.get(CLIENT_CAPABILITIES_META_KEY), dict):
        raise RpcError(INVALID_PARAMS, f"Invalid request parameters: {CLIENT_CAPABILITIES_META_KEY} must be an object")
    client_info = meta.get(CLIENT_INFO_META_KEY)
    if client_info is not None and not is_implementation(client_info):
        raise RpcError(
            INVALID_PARAMS,
            f"Invalid request parameters: {CLIENT_INFO_META_KEY} must be an object with name and version",
        )
