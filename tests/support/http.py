"""The one HTTP client of the suites: a request with exactly the bytes and headers a test gives, to a
server on loopback, and the answer whatever its status (stdlib ``http.client``: no client-side
encoding, validation, redirects or proxies). Stdlib only, no pytest: ``bench/`` may import it too.

    reply = call(server, "memory_add", {"content": "…"})        # POST /v1/tools/memory_add
    reply = request(server, "GET", "/v1/admin/keys")            # any route, a JSON body or none
    reply = send(server, "/mcp", b"{", headers={"Origin": …})   # raw bytes
    reply.status, reply.headers["x-ratelimit-remaining"], reply.body
    server, path = split("http://localhost:8765/mcp")        # a whole URL (no key unless given)
    healthy(url)                                             # GET /healthz answered 200
"""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

#: ``key=NO_KEY``: send no Authorization header at all
NO_KEY = ""
#: ``headers=CLOSE``: the server closes the connection after its answer
CLOSE: dict[str, str | bytes] = {"Connection": "close"}


class Target(Protocol):
    """A running server: its base URL (``http://127.0.0.1:<port>``) and a key it accepts."""

    @property
    def url(self) -> str: ...

    @property
    def key(self) -> str: ...


@dataclass(frozen=True)
class Server:
    """A ``Target`` from a URL and a key (``Server(url, key)``), for servers started by hand."""

    url: str
    key: str


class Headers(dict[str, str]):
    """Response headers by lower-cased name; looked up in any case."""

    def __getitem__(self, name: str) -> str:
        return super().__getitem__(name.lower())

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return super().get(name.lower(), default)

    def __contains__(self, name: object) -> bool:
        return super().__contains__(name.lower() if isinstance(name, str) else name)


def split(url: str, key: str = NO_KEY) -> tuple[Server, str]:
    """A whole URL (``http://host:port/path?query``) as the target and path the functions here take."""
    where = urlsplit(url)
    return Server(f"{where.scheme}://{where.netloc}", key), where.path + (f"?{where.query}" if where.query else "")


@dataclass
class Reply:
    status: int
    headers: Headers
    raw: bytes

    @property
    def body(self) -> Any:
        return json.loads(self.raw)


def send(
    target: Target,
    path: str,
    data: bytes | None,
    *,
    method: str = "POST",
    headers: dict[str, str | bytes] | None = None,
    key: str | None = None,
    content_type: str | None = "application/json",
    timeout: float = 30,
) -> Reply:
    """One request with exactly these bytes. ``key``: the target's own by default, ``NO_KEY`` for
    none; ``content_type=None`` sends no Content-Type."""
    where = urlsplit(target.url)
    conn = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=timeout)
    try:
        sent: dict[str, str | bytes] = {}
        bearer = target.key if key is None else key
        if bearer != NO_KEY:
            sent["Authorization"] = f"Bearer {bearer}"
        if content_type is not None:
            sent["Content-Type"] = content_type
        sent.update(headers or {})
        conn.request(method, path, body=data, headers=sent)
        reply = conn.getresponse()
        return Reply(reply.status, Headers((k.lower(), v) for k, v in reply.getheaders()), reply.read())
    finally:
        conn.close()


def request(target: Target, method: str, path: str, body: Any = None, **kwargs: Any) -> Reply:
    """A JSON body (``None``: no body) to any route."""
    data = None if body is None else json.dumps(body).encode()
    return send(target, path, data, method=method, **kwargs)


def call(target: Target, tool: str, arguments: Any, **kwargs: Any) -> Reply:
    """One REST tool call: ``POST /v1/tools/<tool>`` with the arguments as JSON."""
    return send(target, f"/v1/tools/{tool}", json.dumps(arguments).encode(), **kwargs)


def healthy(url: str, timeout: float = 1) -> bool:
    """Whether the server at ``url`` answers ``GET /healthz`` with 200 now; False while it cannot be reached.
    With ``Connection: close``, as urllib sent it: a probe loop on a kept-alive connection left
    ``mnemo serve`` logging "the handler instance died" at the Ctrl-C that followed (2 of 2 runs
    of test_first_start's restart test, 1 of 3 probe loops; none with it)."""
    try:
        target = Server(url, NO_KEY)
        reply = send(target, "/healthz", None, method="GET", headers=CLOSE, content_type=None, timeout=timeout)
    except (OSError, http.client.HTTPException):
        return False
    return reply.status == 200
