"""The local HTTP server: each request becomes an API Gateway HTTP API (v2) event and goes to
the function that serves its route (``mnemo.local.routes``) — the very handler code Lambda runs."""

from __future__ import annotations

import base64
import importlib
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from mnemo.api.errors import where
from mnemo.local.routes import Route, http_routes, match_route

log = logging.getLogger("mnemo.local")

#: API Gateway refuses payloads over 10 MB; we stop reading far earlier (the handler's own
#: limit, 64 KiB, still decides the answer of docs/contract.md §4 for bodies up to this size).
MAX_READ_BYTES = 1024 * 1024


@dataclass
class LocalContext:
    """The parts of a Lambda context object that Powertools reads."""

    function_name: str
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 512
    log_group_name: str = "local"
    log_stream_name: str = "local"

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:local:000000000000:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return 10_000


def _spec_error(status: int, code: str, message: str) -> tuple[int, dict[str, str], bytes]:
    body = json.dumps({"message": message, "code": code}).encode()
    return status, {"Content-Type": "application/json"}, body


def build_event(
    route: Route, params: dict[str, str], method: str, target: str, headers: dict[str, str], body: bytes, source_ip: str
) -> dict[str, Any]:
    parts = urlsplit(target)
    text: str | None
    try:
        text, encoded = body.decode("utf-8"), False
    except UnicodeDecodeError:
        text, encoded = base64.b64encode(body).decode(), True
    now = datetime.now(UTC)
    request_id = str(uuid.uuid4())
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route.route_key,
        "rawPath": parts.path,
        "rawQueryString": parts.query,
        "headers": headers,
        "requestContext": {
            "accountId": "000000000000",
            "apiId": "local",
            "domainName": headers.get("host", "localhost"),
            "domainPrefix": "local",
            "http": {
                "method": method,
                "path": parts.path,
                "protocol": "HTTP/1.1",
                "sourceIp": source_ip,
                "userAgent": headers.get("user-agent", ""),
            },
            "requestId": request_id,
            "routeKey": route.route_key,
            "stage": "$default",
            "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": int(now.timestamp() * 1000),
        },
        "isBase64Encoded": encoded,
    }
    if query:
        event["queryStringParameters"] = query
    if params:
        event["pathParameters"] = params
    if body:
        event["body"] = text
    return event


class LocalGateway:
    """Routes and invokes; independent of the socket server so tests can drive it directly.

    Connections are served on many threads, but handlers run one invocation at a time, as in a
    Lambda instance: Powertools' resolver keeps the current event on the app object, and its
    Logger and Metrics keep per-invocation state on objects that every function module shares,
    so two concurrent invocations in one process could see each other's event or keys.
    """

    def __init__(self, routes: tuple[Route, ...] | None = None) -> None:
        self.routes = routes if routes is not None else http_routes()
        self._handlers: dict[str, Callable[[dict[str, Any], Any], dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._invocation = threading.Lock()

    def handler_for(self, route: Route) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
        with self._lock:
            fn = self._handlers.get(route.function)
            if fn is None:
                fn = getattr(importlib.import_module(route.module), route.attribute)
                self._handlers[route.function] = fn
            return fn

    def warm(self) -> None:
        for route in self.routes:
            self.handler_for(route)

    def dispatch(
        self, method: str, target: str, headers: dict[str, str], body: bytes, source_ip: str = "127.0.0.1"
    ) -> tuple[int, dict[str, str], bytes]:
        path = urlsplit(target).path
        found = match_route(self.routes, method, path)
        if found is None:
            allowed = sorted({r.method for r in self.routes if r.pattern.match(path)})
            if allowed:
                status, hdrs, out = _spec_error(405, "invalid_request", f"use {', '.join(allowed)} on {path}")
                hdrs["Allow"] = ", ".join(allowed)
                return status, hdrs, out
            return _spec_error(404, "not_found", "no such route")
        route, params = found
        event = build_event(route, params, method, target, headers, body, source_ip)
        handler = self.handler_for(route)
        try:
            with self._invocation:
                result = handler(event, LocalContext(route.function))
        except Exception as exc:  # noqa: BLE001 - the Lambda runtime would answer 502; we keep the error shape of docs/contract.md §4
            # type and place only: the exception's text may quote user data
            log.error("handler %s crashed: %s at %s", route.function, type(exc).__name__, " < ".join(where(exc)[::-1]))
            return _spec_error(500, "internal", "internal error")
        return _response(result)


def _response(result: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    status = int(result.get("statusCode", 200))
    headers = {k: str(v) for k, v in (result.get("headers") or {}).items()}
    for name, values in (result.get("multiValueHeaders") or {}).items():
        headers[name] = ", ".join(str(v) for v in values)
    body = result.get("body") or ""
    data = base64.b64decode(body) if result.get("isBase64Encoded") else str(body).encode("utf-8")
    return status, headers, data


class _Handler(BaseHTTPRequestHandler):
    server: LocalServer
    protocol_version = "HTTP/1.1"
    server_version = "mnemo-local"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        log.debug("%s %s", self.address_string(), format % args)

    def _serve(self) -> None:
        started = time.perf_counter()
        headers: dict[str, str] = {}
        for name, value in self.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]},{value}" if key in headers else value
        try:
            length = int(headers.get("content-length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self._send(*_spec_error(400, "invalid_request", "bad Content-Length"), close=True)
            return
        if length > MAX_READ_BYTES:
            self._send(*_spec_error(413, "content_too_large", "the body is over 64 KiB"), close=True)
            return
        if headers.get("transfer-encoding", "").lower() == "chunked":
            self._send(*_spec_error(400, "invalid_request", "send a Content-Length"), close=True)
            return
        body = self.rfile.read(length) if length else b""
        status, out_headers, data = self.server.gateway.dispatch(
            self.command, self.path, headers, body, self.client_address[0]
        )
        self._send(status, out_headers, data)
        log.info(
            "%s %s -> %s in %.1f ms",
            self.command,
            urlsplit(self.path).path,
            status,
            (time.perf_counter() - started) * 1000,
        )

    def _send(self, status: int, headers: dict[str, str], data: bytes, close: bool = False) -> None:
        self.send_response(status)
        for name, value in headers.items():
            if name.lower() not in {"content-length", "connection", "transfer-encoding"}:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def __getattr__(self, name: str) -> Any:
        # Every method (TRACE, CONNECT, PROPFIND, …) reaches the router, which answers 405 with
        # Allow in the error shape of docs/contract.md §4, instead of the stdlib's 501 HTML page.
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Errors the stdlib's HTTP parser raises (bad request line, URI or headers too long)
        in the ``{message, code}`` shape of docs/contract.md §4, never its HTML page."""
        self.log_error("code %d, message %s", code, message)
        reason = self.responses.get(code, ("error",))[0]
        status, headers, body = _spec_error(code, "invalid_request", reason.lower())
        self._send(status, headers, body, close=True)


class LocalServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, host: str, port: int, gateway: LocalGateway | None = None) -> None:
        self.gateway = gateway or LocalGateway()
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"
