"""What the HTTP surfaces say about OAuth (docs/auth.md): the protected-resource metadata of RFC 9728
— for the REST API at ``/.well-known/oauth-protected-resource`` and for the MCP endpoint at the
path-suffixed ``/.well-known/oauth-protected-resource/mcp`` — and the ``WWW-Authenticate``
challenge a refused call answers with, which points there."""

from __future__ import annotations

from typing import Any

from mnemo.config import Settings, split_list
from mnemo.errors import InsufficientScope, InvalidToken
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


def challenge(error: Exception, path: str, cfg: Settings | None) -> str:
    """RFC 6750's ``WWW-Authenticate: Bearer``: with OAuth on, it points at the protected-resource
    metadata (RFC 9728 §5.1, the MCP authorization spec) and names the scopes to ask for; the error
    says whether a token was refused (``invalid_token``) or lacks a scope (``insufficient_scope``)."""
    params = ['realm="mnemo"']
    if isinstance(error, InsufficientScope):
        params.append('error="insufficient_scope"')
    elif isinstance(error, InvalidToken):
        params.append('error="invalid_token"')
    if cfg is not None and cfg.oauth_enabled:
        params.append(f'resource_metadata="{metadata_url(cfg, path)}"')
        needed = error.needed if isinstance(error, InsufficientScope) else None
        params.append(f'scope="{requested_scopes(cfg, needed)}"')
    return "Bearer " + ", ".join(params)
