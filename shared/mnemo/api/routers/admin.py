"""The workspace operations of ``service.catalog`` (``/v1/admin/…`` for ``admin`` keys, and
``GET /v1/whoami``), each as its own route. Like the tools, a function names the ones it serves:
each goes to the function whose permissions fit the data it touches."""

from __future__ import annotations

from collections.abc import Callable

from aws_lambda_powertools.event_handler import Response

from mnemo.api.http import ServiceProvider, SurfaceRouter, json_response, request_body
from mnemo.observability import logger
from mnemo.service.catalog import ADMIN_OPERATIONS
from mnemo.service.operations import Operation


def admin_router(root: ServiceProvider, *names: str) -> SurfaceRouter:
    """Routes for the workspace operations ``names``, served by ``root``'s service."""
    router = SurfaceRouter(root)
    for name in names:
        if name not in ADMIN_OPERATIONS:
            raise ValueError(f"no workspace operation named {name!r} in the catalog")
        op = ADMIN_OPERATIONS[name]
        router.serve(op.method, op.path)(_route_for(router, root, op))
    return router


def _route_for(router: SurfaceRouter, root: ServiceProvider, op: Operation) -> Callable[..., Response]:
    def call_admin(**params: str) -> Response:
        event = router.current_event
        svc = root.service()
        caller = svc.authenticate(event.headers.get("authorization"))
        arguments = request_body(event.raw_event, root.settings().max_body_bytes) if op.args else None
        invocation = svc.invoke(op.name, caller, arguments, params=params)
        logger.info(
            "admin call", extra={"operation": op.name, "workspace_id": caller.workspace_id, "key_id": caller.key_id}
        )
        return json_response(invocation.status, invocation.result.model_dump(mode="json"), invocation.rate.headers())

    call_admin.__name__ = op.name
    return call_admin
