"""``GET /openapi.json`` (the document generated from the catalog's models) and ``GET /healthz``."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from mnemo.api.http import SurfaceRouter, json_response


def meta_router() -> SurfaceRouter:
    router = SurfaceRouter()

    @router.serve("GET", "/openapi.json")
    def openapi() -> Response:
        from mnemo.api.openapi import build_openapi

        return json_response(200, build_openapi())

    @router.serve("GET", "/healthz")
    def healthz() -> Response:
        return json_response(200, {"status": "ok"})

    return router
