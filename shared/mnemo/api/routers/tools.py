"""REST tools: ``POST /v1/tools/<name>``, one route per tool a function serves.

A route authenticates, reads the JSON body, hands it to ``Service.invoke`` with the headers that
travel with a call (``api.http.CallHeaders``: ``X-Project``, ``Idempotency-Key``, read exactly as
the MCP route reads them) and serialises the result model."""

from __future__ import annotations

import time
from collections.abc import Callable

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.metrics import MetricUnit

from mnemo.api.http import JSON, CallHeaders, ServiceProvider, SurfaceRouter, request_body
from mnemo.errors import NotFound
from mnemo.observability import logger, metrics
from mnemo.service.catalog import TOOLS

PREFIX = "/v1/tools/"


def tools_router(root: ServiceProvider, *names: str, unknown: bool = False) -> SurfaceRouter:
    """Routes for the tools ``names``, served by ``root``'s service; with ``unknown``, also
    ``/v1/tools/{name}``, which answers 404 for a name no function serves (API Gateway sends every
    other name to this function)."""
    router = SurfaceRouter(root)
    for name in names:
        if name not in TOOLS:
            raise ValueError(f"no tool named {name!r} in the catalog")
        router.serve("POST", PREFIX + name)(_route_for(router, root, name))
    if unknown:

        @router.serve("POST", PREFIX + "{name}")
        def unknown_tool(name: str) -> Response:
            root.service().authenticate(router.current_event.headers.get("authorization"))
            raise NotFound(f"no tool named {name!r}" + (" here" if name in TOOLS else ""))

    return router


def _route_for(router: SurfaceRouter, root: ServiceProvider, name: str) -> Callable[[], Response]:
    def call_tool() -> Response:
        started = time.perf_counter()
        event = router.current_event
        svc = root.service()
        caller = svc.authenticate(event.headers.get("authorization"))
        arguments = request_body(event.raw_event, root.settings().max_body_bytes)
        headers = CallHeaders.of(event.headers)
        invocation = svc.invoke(
            name, caller, arguments, project_header=headers.project, idempotency_key=headers.idempotency_key
        )
        metrics.add_metric(name=f"{TOOLS[name].rate_class}_calls", unit=MetricUnit.Count, value=1)
        logger.info(
            "tool call",
            extra={
                "tool": name,
                "workspace_id": caller.workspace_id,
                "key_id": caller.key_id,
                "duration_ms": round((time.perf_counter() - started) * 1000, 2),
            },
        )
        # pydantic's own serialiser: compact UTF-8 JSON like json_response's, without the
        # intermediate dict (≈ 0.8 ms less for a page of 50 memories)
        return Response(
            status_code=200,
            content_type=JSON,
            body=invocation.result.model_dump_json(),
            headers=invocation.rate.headers(),
        )

    call_tool.__name__ = f"tool_{name}"
    return call_tool
