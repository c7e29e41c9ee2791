"""``GET /console`` and ``GET /console/{asset}``: the memory console (docs/console.md).

The console is static files shipped inside the package (``mnemo/api/console/``: HTML, CSS and
JavaScript modules, no build step), read once per process. Every answer carries a strict
Content-Security-Policy — scripts, styles, images and fetches from this origin only, no inline
script or style, no framing, no form posts — and ``X-Content-Type-Options: nosniff``. The
console holds no secret and needs no key to load: it asks for one and then calls the REST API
like any client, so everything it shows is what that key may see.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from aws_lambda_powertools.event_handler import Response

from mnemo.api.http import SurfaceRouter, error_response
from mnemo.errors import NotFound

CONSOLE_PATH = "/console"
INDEX = "index.html"

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    )
)

#: sent with every answer of the console's routes, the error ones included
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
}

#: the assets are not fingerprinted (no build step), so a browser revalidates every time and
#: the ETag makes that a bodiless 304
CACHE_CONTROL = "no-cache"

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
_ASSET_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*\.(?:html|js|css|svg)$")


@dataclass(frozen=True, slots=True)
class Asset:
    body: str
    content_type: str
    etag: str


@cache
def assets() -> dict[str, Asset]:
    """Every file of the console by name (read once per process)."""
    found: dict[str, Asset] = {}
    for entry in (resources.files("mnemo.api") / "console").iterdir():
        name = entry.name
        if not entry.is_file() or not _ASSET_NAME.match(name):
            continue
        body = entry.read_text(encoding="utf-8")
        digest = hashlib.sha256(body.encode("utf-8")).hexdigest()[:20]
        found[name] = Asset(body, _TYPES[name[name.rindex(".") :]], f'"{digest}"')
    return found


def _answer(asset: Asset, if_none_match: str | None) -> Response:
    headers = {**SECURITY_HEADERS, "Cache-Control": CACHE_CONTROL, "ETag": asset.etag}
    if if_none_match and asset.etag in {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}:
        return Response(status_code=304, headers=headers, body="")
    return Response(status_code=200, content_type=asset.content_type, headers=headers, body=asset.body)


def console_router() -> SurfaceRouter:
    router = SurfaceRouter()

    @router.serve("GET", CONSOLE_PATH)
    def console_page() -> Response:
        return _answer(assets()[INDEX], router.current_event.headers.get("if-none-match"))

    @router.serve("GET", CONSOLE_PATH + "/{asset}")
    def console_asset(asset: str) -> Response:
        found = assets().get(asset) if asset != INDEX else None
        if found is None:
            missing = error_response(NotFound("the console has no such file"))
            missing.headers.update(SECURITY_HEADERS)
            return missing
        return _answer(found, router.current_event.headers.get("if-none-match"))

    return router
