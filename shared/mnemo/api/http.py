"""What every HTTP surface shares: reading a request body strictly, answering JSON, turning any
exception into docs/contract.md §4's ``{message, code}`` (through ``api.errors``; a 401 or 403's
``WWW-Authenticate`` challenge is ``api.oauth``'s), and the resolver and
routers the functions are assembled from.

The routers do not find the service themselves: each is given a :class:`ServiceProvider` by the
composition root (the functions' handlers pass ``mnemo.runtime``; a test may pass its own), and
asks it for the service on each request, so nothing is built at import.

A :class:`SurfaceRouter` is a Powertools ``Router`` that also records the routes it declares in
``template.yaml``'s form (``/v1/admin/keys/{key_id}/revoke``), so a test holds each function's
routes to the template, and the local server routes by them.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.metrics import MetricUnit

from mnemo.api import strict_json
from mnemo.api.errors import as_mnemo_error
from mnemo.api.origin import refusal
from mnemo.errors import ContentTooLarge, Forbidden, InsufficientScope, InvalidRequest, NotFound
from mnemo.observability import logger, metrics

if TYPE_CHECKING:
    from mnemo.config import Settings
    from mnemo.service.pipeline import Service

JSON = "application/json"


class ServiceProvider(Protocol):
    """What a surface receives from the composition root: the process's service and settings,
    asked for per request (``mnemo.runtime`` builds them on first use)."""

    def service(self) -> Service: ...

    def settings(self) -> Settings: ...


def json_response(status: int, payload: Any, headers: dict[str, str] | None = None) -> Response:
    return Response(
        status_code=status,
        content_type=JSON,
        body=json.dumps(payload, ensure_ascii=False, separators=(",", ":")),
        headers=headers or {},
    )


def error_response(exc: Exception, path: str = "", cfg: Settings | None = None) -> Response:
    """``exc`` as docs/contract.md §4's answer; with ``cfg`` (the deployment's settings) a challenge
    names the OAuth metadata, the one of ``path`` (the request's)."""
    error = as_mnemo_error(exc)
    logger.info("rejected", extra={"status": error.status, "code": error.code})
    metrics.add_metric(name=f"error_{error.code}", unit=MetricUnit.Count, value=1)
    headers = dict(error.headers)
    if error.retry_after is not None:
        headers.setdefault("Retry-After", str(error.retry_after))
    if error.status == 401 or isinstance(error, InsufficientScope):
        from mnemo.api.oauth import challenge  # reads the settings module: only on a refusal

        headers["WWW-Authenticate"] = challenge(error, path, cfg)
    return json_response(error.status, error.body(), headers)


def raw_body(event: Any, max_bytes: int) -> bytes:
    """The body's bytes (base64 undone); 413 over ``max_bytes``."""
    raw: str | bytes = event.get("body") or b""
    if event.get("isBase64Encoded") and raw:
        try:
            raw = base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidRequest("the body is not valid base64") from None
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if len(data) > max_bytes:
        raise ContentTooLarge(f"the body is {len(data)} bytes; the limit is {max_bytes}")
    return data


def request_body(event: Any, max_bytes: int) -> Any:
    """The JSON body as a Python value; 413 over ``max_bytes``, 400 for anything not JSON."""
    data = raw_body(event, max_bytes)
    content_type = (event.get("headers") or {}).get("content-type", JSON).split(";")[0].strip().lower()
    if content_type not in {JSON, "", "application/*+json"} and not content_type.endswith("+json"):
        raise InvalidRequest(f"send the arguments as application/json, not {content_type}")
    try:
        # UTF-8 only (RFC 8259 §8.1): json.loads(bytes) would also guess UTF-16/32 and accept
        # CESU-style surrogates; a leading byte-order mark is tolerated, as the RFC allows.
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise InvalidRequest("the body is not valid UTF-8") from None
    if not text.strip():
        return {}
    try:
        return strict_json.loads(text)
    except RecursionError:
        raise InvalidRequest("the body is nested too deeply") from None
    except strict_json.DuplicateKey as exc:
        raise InvalidRequest(f"the key {exc.key!r} appears twice in one object") from None
    except json.JSONDecodeError as exc:
        raise InvalidRequest(f"the body is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except ValueError:  # NaN / Infinity, or an integer too long to convert
        raise InvalidRequest("the body is not valid JSON") from None


@dataclass(frozen=True, slots=True)
class CallHeaders:
    """The headers that travel with a tool call, read from a request the same way on every surface
    (``POST /v1/tools/<name>`` and ``tools/call`` over ``POST /mcp``). They are passed on as sent —
    an empty header is not "no header" — and ``Service.invoke`` holds them to their rules
    (``X-Project`` 1-64 characters, ``Idempotency-Key`` 1-255), so both surfaces answer alike."""

    project: str | None = None
    idempotency_key: str | None = None

    @classmethod
    def of(cls, headers: Mapping[str, str]) -> CallHeaders:
        """From a request's headers (API Gateway v2 events carry their names in lower case)."""
        return cls(project=headers.get("x-project"), idempotency_key=headers.get("idempotency-key"))


class SurfaceRouter(Router):
    """A Powertools ``Router`` that remembers the (method, path) of each route it declares."""

    def __init__(self, root: ServiceProvider | None = None) -> None:
        super().__init__()
        self.served: list[tuple[str, str]] = []
        #: the composition root its routes are served by (None: a router that needs no service)
        self.root = root

    def serve(self, method: str | list[str], path: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Declare a route by ``template.yaml``'s path (``{param}``); returns Powertools' decorator."""
        methods = [method] if isinstance(method, str) else list(method)
        self.served.extend((m.upper(), path) for m in methods)
        return self.route(re.sub(r"\{(\w+)\}", r"<\1>", path), methods)


class Resolver(APIGatewayHttpResolver):
    """A function's HTTP app: the routers it includes, and every failure answered in the error shape
    of docs/contract.md §4."""

    def __init__(self, *routers: SurfaceRouter, root: ServiceProvider | None = None) -> None:
        """``root``: the composition root, whose settings name the origins allowed besides
        loopback and the API's own (none without it)."""
        super().__init__()
        self.served: list[tuple[str, str]] = []
        for router in routers:
            self.include_router(router)
            self.served.extend(router.served)
        #: whose settings the origin check and the error answers (the OAuth challenge) read: the one
        #: given, else the routers' composition root
        self.root = root if root is not None else next((r.root for r in routers if r.root is not None), None)

        def only_our_origins(app: APIGatewayHttpResolver, next_middleware: NextMiddleware) -> Response:
            """Every route: 403 for a Host or Origin this server does not answer to (``api.origin``)."""
            event = app.current_event
            domain = (event.raw_event.get("requestContext") or {}).get("domainName")
            settings = self.root.settings() if self.root is not None else None
            why = refusal(
                event.headers or {},
                domain,
                settings.origins if settings is not None else (),
                settings.hosts if settings is not None else (),
            )
            if why is not None:
                return error_response(Forbidden(why))
            return next_middleware(app)

        self.use([only_our_origins])

        @self.not_found
        def not_found(_: NotFoundError) -> Response:
            return error_response(NotFound("no such route"))

        @self.exception_handler(Exception)
        def any_error(exc: Exception) -> Response:
            return error_response(exc, self.current_event.path, self.root.settings() if self.root else None)
