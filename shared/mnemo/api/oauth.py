"""What the HTTP surfaces say about OAuth (docs/auth.md): the protected-resource metadata of RFC 9728
— for the REST API at ``/.well-known/oauth-protected-resource`` and for the MCP endpoint at the
path-suffixed ``/.well-known/oauth-protected-resource/mcp`` — and where a challenge points."""

from __future__ import annotations

from typing import Any

from mnemo.config import Settings, split_list
from mnemo.models.common import SCOPE_NAMES

WELL_KNOWN = "/.well-known/oauth-protected-resource"
MCP_PATH = "/mcp"
#: what a client should ask for when nothing more precise is known: read and write its memories
DEFAULT_REQUEST = ("memory:read", "memory:write")


def resource_url(cfg: Settings, path: str = "") -> str:
    """This deployment's resource identifier: the MCP endpoint's URL for ``/mcp``, else the base URL."""
    base = cfg.oauth_resource.rstrip("/")
    # API Gateway's rawPath carries the stage (/prod/mcp)
    return base + MCP_PATH if path.rstrip("/").endswith(MCP_PATH) else base


def metadata_url(cfg: Settings, path: str) -> str:
    resource = resource_url(cfg, path)
    base = cfg.oauth_resource.rstrip("/")
    return base + WELL_KNOWN + resource[len(base) :]


def requested_scopes(cfg: Settings, needed: list[str] | None = None) -> str:
    return " ".join(cfg.oauth_scope_prefix + s for s in (needed or DEFAULT_REQUEST))


def protected_resource_metadata(cfg: Settings, path: str = "") -> dict[str, Any]:
    return {
        "resource": resource_url(cfg, path),
        "authorization_servers": split_list(cfg.oauth_issuers),
        "scopes_supported": [cfg.oauth_scope_prefix + s for s in SCOPE_NAMES],
        "bearer_methods_supported": ["header"],
        "resource_name": "Mnemo",
    }
