"""What one handler instance does for ``mnemo serve``: turn a request into an API Gateway HTTP API
(v2) event, invoke the function that serves its route (``mnemo.local.routes``) — the very
handler code Lambda runs — and turn its answer back into a status, headers and a body.

The HTTP server (``mnemo.local.server``) hands requests to a pool of worker processes
(``mnemo.local.workers``), each running one :class:`LocalGateway`; tests drive a gateway directly.
"""

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
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from mnemo.api.errors import where
from mnemo.local.routes import Route, http_routes, match_route

log = logging.getLogger("mnemo.local")

#: template.yaml's ``Globals.Function.Timeout`` for the HTTP functions
FUNCTION_TIMEOUT_S = 10.0

#: (status, headers, body) — one HTTP answer
Answer = tuple[int, dict[str, str], bytes]


@dataclass
class LocalContext:
    """The parts of a Lambda context object that Powertools reads; the remaining time counts
    down from the invocation's budget, as Lambda's does."""

    function_name: str
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 512
    log_group_name: str = "local"
    log_stream_name: str = "local"
    deadline: float = field(default_factory=lambda: time.monotonic() + FUNCTION_TIMEOUT_S)

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:local:000000000000:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline - time.monotonic()) * 1000))


def spec_error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Answer:
    """An answer in the ``{message, code}`` shape of docs/contract.md §4."""
    body = json.dumps({"message": message, "code": code}).encode()
    return status, {"Content-Type": "application/json", **(headers or {})}, body


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
            "domainName": "localhost",  # the server's own name, never the client's Host (api/origin.py)
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
    """Routes and invokes, one invocation at a time, as in a Lambda instance.

    Powertools' resolver keeps the current event on the app object, and its Logger and Metrics
    keep per-invocation state on objects that every function module shares, so two concurrent
    invocations in one process could see each other's event or keys. Concurrency comes from
    running several gateways, each in its own process (``mnemo.local.workers``).
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
        """What a first request would otherwise pay for: every handler's import, the store's
        connection, the MCP tool catalog (every tool's JSON Schemas), the embedder's model and, on
        SQLite, the vector search's numpy. A request that loads the model runs past the pool's
        ``demote_after_s``, and a demoted instance was replaced after its answer: the next semantic
        request then paid the load again (measured: every ``recall`` mode semantic 3-7 s through
        ``mnemo serve`` on the loaded box; bench/results/2026-12-01-first-query.md). A remote
        embedder is not called here (``runtime.warm``): an endpoint that is down must not keep an
        instance from starting."""
        from mnemo import runtime
        from mnemo.api.routers.mcp import mcp_endpoint

        for route in self.routes:
            self.handler_for(route)
        mcp_endpoint()
        runtime.warm()

    def close(self) -> None:
        from mnemo import runtime

        runtime.finish(1.5)  # the pool gives a stopping instance 2 s before it kills it
        runtime.service().ports.close()

    def dispatch(
        self,
        method: str,
        target: str,
        headers: dict[str, str],
        body: bytes,
        source_ip: str = "127.0.0.1",
        budget_s: float = FUNCTION_TIMEOUT_S,
    ) -> Answer:
        path = urlsplit(target).path
        found = match_route(self.routes, method, path)
        if found is None:
            allowed = sorted({r.method for r in self.routes if r.pattern.match(path)})
            if allowed:
                return spec_error(
                    405, "invalid_request", f"use {', '.join(allowed)} on {path}", {"Allow": ", ".join(allowed)}
                )
            return spec_error(404, "not_found", "no such route")
        route, params = found
        event = build_event(route, params, method, target, headers, body, source_ip)
        handler = self.handler_for(route)
        try:
            with self._invocation:
                context = LocalContext(route.function, deadline=time.monotonic() + budget_s)
                result = handler(event, context)
        except Exception as exc:  # noqa: BLE001 - the Lambda runtime would answer 502; we keep the error shape of docs/contract.md §4
            # type and place only: the exception's text may quote user data
            log.error("handler %s crashed: %s at %s", route.function, type(exc).__name__, " < ".join(where(exc)[::-1]))
            return spec_error(500, "internal", "internal error")
        return _response(result)


def _response(result: dict[str, Any]) -> Answer:
    status = int(result.get("statusCode", 200))
    headers = {k: str(v) for k, v in (result.get("headers") or {}).items()}
    for name, values in (result.get("multiValueHeaders") or {}).items():
        headers[name] = ", ".join(str(v) for v in values)
    body = result.get("body") or ""
    data = base64.b64decode(body) if result.get("isBase64Encoded") else str(body).encode("utf-8")
    return status, headers, data
