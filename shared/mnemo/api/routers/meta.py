"""``GET /openapi.json`` (the document generated from the catalog's models), ``GET /healthz`` and the
OAuth protected-resource metadata (``api.oauth``)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from mnemo.api.http import ServiceProvider, SurfaceRouter, json_response
from mnemo.api.oauth import MCP_PATH, WELL_KNOWN, protected_resource_metadata
from mnemo.errors import NotFound


def _metadata(root: ServiceProvider, path: str) -> Response:
    """RFC 9728 metadata; 404 while this deployment accepts no access tokens. Public, cacheable."""
    cfg = root.settings()
    if not cfg.oauth_enabled:
        raise NotFound("this deployment accepts API keys only: no OAuth authorization server is configured")
    return json_response(200, protected_resource_metadata(cfg, path), {"Cache-Control": "public, max-age=300"})


def meta_router(root: ServiceProvider) -> SurfaceRouter:
    """``root``: whose settings say whether OAuth is on (the metadata)."""
    router = SurfaceRouter(root)

    @router.serve("GET", "/openapi.json")
    def openapi() -> Response:
        from mnemo.api.openapi import build_openapi

        return json_response(200, build_openapi())

    @router.serve("GET", WELL_KNOWN)
    def protected_resource() -> Response:
        return _metadata(root, "")

    @router.serve("GET", WELL_KNOWN + MCP_PATH)
    def protected_mcp_resource() -> Response:
        return _metadata(root, MCP_PATH)

    @router.serve("GET", "/healthz")
    def healthz() -> Response:
        return json_response(200, {"status": "ok"})

    return router
