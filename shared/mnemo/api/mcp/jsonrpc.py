"""JSON-RPC 2.0 over one HTTP request: message classes, envelopes, errors and replies."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from mnemo.api import strict_json
from mnemo.api.mcp.protocol import JSON_HEADERS


@dataclass(frozen=True)
class HttpReply:
    """The HTTP answer to one request; ``body`` is ``""`` when there is none."""

    status: int
    headers: dict[str, str]
    body: str


class RpcError(Exception):
    NO_DATA: Final = object()

    def __init__(self, code: int, message: str, data: Any = NO_DATA) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def error_envelope(request_id: Any, code: int, message: str, data: Any = RpcError.NO_DATA) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not RpcError.NO_DATA and data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def json_reply(status: int, payload: Any) -> HttpReply:
    return HttpReply(status, dict(JSON_HEADERS), json.dumps(payload, ensure_ascii=False, separators=(",", ":")))


def rpc_error_reply(status: int, request_id: Any, code: int, message: str, data: Any = RpcError.NO_DATA) -> HttpReply:
    return json_reply(status, error_envelope(request_id, code, message, data))


def copy_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def parse_json(body: str | bytes | None) -> Any:
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


def classify(message: Any) -> str:
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
