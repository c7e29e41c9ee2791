"""Who may address this server: the MCP transport's rule against DNS rebinding, for every HTTP route.

A page on ``evil.example`` whose name an attacker re-points at 127.0.0.1 reaches a local server
with ``Host: evil.example`` and ``Origin: http://evil.example``; the transport specification says
servers MUST validate ``Origin``. A request is served when

* its ``Host`` names a loopback name (``localhost``, ``127.0.0.1``, ``[::1]``), an IP address
  (``mnemo serve --host 0.0.0.0`` reached from the network: rebinding needs a name), or the API's
  own domain as API Gateway reports it (``requestContext.domainName``, never taken from the client),
  or one of the names the operator allows (``MNEMO_ALLOWED_HOSTS``: ``mnemo serve --host 0.0.0.0``
  reached by a name, such as a machine's name on the LAN or a reverse proxy's);
* and its ``Origin``, when sent, is a loopback origin, the request's own (validated) host — the
  console is served by the API it calls — or one of the deployment's ``CorsAllowOrigins``.

Anything else is 403 ``{message, code: "forbidden"}``, before authentication or any work.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

LOCAL_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def _hostname(authority: str) -> str | None:
    """``host`` of ``host[:port]`` (``[v6]:port`` too), lower-cased; None when it is not one."""
    try:
        parts = urlsplit(f"//{authority.strip()}")
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        return None
    return parts.hostname or None


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def refusal(
    headers: Mapping[str, str],
    own_domain: str | None,
    allowed_origins: Iterable[str] = (),
    allowed_hosts: Iterable[str] = (),
) -> str | None:
    """Why this request may not be served (a message for the 403), or None. ``headers`` by
    lower-case name, as API Gateway v2 events carry them."""
    host_header = headers.get("host")
    host = _hostname(host_header) if host_header is not None else None
    if host_header is not None:
        own = (own_domain or "").lower()
        named = {h.strip().lower() for h in allowed_hosts if h.strip()}
        if host is None or not (host in LOCAL_NAMES or _is_ip(host) or (own and host == own) or host in named):
            return "this server does not answer to that Host name"
    origin = headers.get("origin")
    if origin is None:
        return None  # not from a browser page
    origin = origin.strip().rstrip("/").lower()
    parts = urlsplit(origin)
    if parts.scheme in ("http", "https") and parts.hostname in LOCAL_NAMES:
        return None
    if host_header is not None and parts.scheme in ("http", "https") and parts.netloc == host_header.strip().lower():
        return None  # same origin as the (validated) host: the console, served by this API
    if origin in {o.strip().rstrip("/").lower() for o in allowed_origins if o.strip()}:
        return None
    return "requests from this Origin are not accepted"
