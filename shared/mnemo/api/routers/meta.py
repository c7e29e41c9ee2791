"""``GET /openapi.json`` (the document generated from the catalog's models), ``GET /healthz`` and the
OAuth protected-resource metadata (``api.oauth``).

The OpenAPI document is served from ``mnemo/api/openapi.json``, generated from the models by
``make openapi`` and committed (tests/unit/test_openapi_document.py fails when it differs from what
the models generate): generating it builds every deferred pydantic model, seconds of CPU that a cold
read function or a handler instance would otherwise pay on the console's first call
(bench/results/docstring-figures.md).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

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


@cache
def served_openapi() -> dict[str, Any]:
    """The committed OpenAPI document (``make openapi`` writes it), read once per process."""
    doc: dict[str, Any] = json.loads(resources.files("mnemo.api").joinpath("openapi.json").read_text("utf-8"))
    return doc


def meta_router(root: ServiceProvider) -> SurfaceRouter:
    """``root``: whose settings say whether OAuth is on (the metadata)."""
    router = SurfaceRouter(root)

    @router.serve("GET", "/openapi.json")
    def openapi() -> Response:
        return json_response(200, served_openapi())

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
