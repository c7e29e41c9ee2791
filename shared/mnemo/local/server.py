"""The local HTTP server of ``mnemo serve``: HTTP/1.1 with keep-alive on a thread per connection,
each request handed to a pool of handler instances (``mnemo.local.workers``) that run the very
handler code Lambda runs (``mnemo.local.gateway``).

What a client sees:

* every answer leaves in one write on a socket with ``TCP_NODELAY``: a reused connection
  answers at the speed of the work, never after the delay that Nagle's algorithm and the
  client's delayed ACK add when a response goes out in pieces;
* a listen backlog of :attr:`LocalServer.request_queue_size`, so a burst of new connections is
  accepted, not reset;
* every answer — parser errors (bad request line, HTTP/0.9, HTTP/2+ request lines, oversized
  headers), 404s and 405s included — has a status line and the ``{message, code}`` body of docs/contract.md §4;
* a client that goes away mid-request costs a debug line, never a traceback.
"""

from __future__ import annotations

import logging
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mnemo.config import Settings
from urllib.parse import urlsplit

from mnemo.api.errors import where
from mnemo.local.background import Child, cleanup_schedule
from mnemo.local.gateway import FUNCTION_TIMEOUT_S, Answer, LocalContext, LocalGateway, build_event, spec_error
from mnemo.local.workers import PoolOptions, WorkerPool

__all__ = [
    "LocalContext",
    "LocalGateway",
    "LocalServer",
    "ServeOptions",
    "build_event",
    "console_logging",
    "serve",
]

log = logging.getLogger("mnemo.local")

#: API Gateway refuses payloads over 10 MB; we stop reading far earlier (the handler's own
#: limit, 64 KiB, still decides the answer of docs/contract.md §4 for bodies up to this size).
MAX_READ_BYTES = 1024 * 1024
#: the longest parser message echoed back (it may quote the request line)
_MAX_ECHO = 200


class Gateway(Protocol):
    def dispatch(
        self, method: str, target: str, headers: dict[str, str], body: bytes, source_ip: str = ...
    ) -> Answer: ...


class _Handler(BaseHTTPRequestHandler):
    server: LocalServer
    protocol_version = "HTTP/1.1"
    server_version = "mnemo-local"
    sys_version = ""
    #: TCP_NODELAY on every accepted socket (set by StreamRequestHandler.setup)
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        log.debug("%s %s", self.address_string(), format % args)

    def handle(self) -> None:
        try:
            super().handle()
        except (ConnectionError, TimeoutError) as exc:  # BrokenPipe, ConnectionReset, ConnectionAborted
            log.debug("%s went away: %s", self.client_address[0], type(exc).__name__)
            self.close_connection = True

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        if self.request_version == "HTTP/0.9":  # a request line without a version: "GET /"
            self.send_error(400, "send an HTTP/1.1 request line: METHOD TARGET HTTP/1.1")
            return False
        return True

    def _serve(self) -> None:
        started = time.perf_counter()
        headers: dict[str, str] = {}
        for name, value in self.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]},{value}" if key in headers else value
        try:
            length = int(headers.get("content-length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self._send(*spec_error(400, "invalid_request", "bad Content-Length"), close=True)
            return
        if length > MAX_READ_BYTES:
            self._send(*spec_error(413, "content_too_large", "the body is over 64 KiB"), close=True)
            return
        if headers.get("transfer-encoding", "").lower() == "chunked":
            self._send(*spec_error(400, "invalid_request", "send a Content-Length"), close=True)
            return
        body = self.rfile.read(length) if length else b""
        if len(body) < length:  # the client closed before sending its whole body
            log.debug("%s went away mid-body", self.client_address[0])
            self.close_connection = True
            return
        status, out_headers, data = self.server.gateway.dispatch(
            self.command, self.path, headers, body, self.client_address[0]
        )
        self._send(status, out_headers, data)
        log.info(
            "%s %s -> %s in %.1f ms",
            self.command,
            urlsplit(self.path).path,
            status,
            (time.perf_counter() - started) * 1000,
        )

    def _send(self, status: int, headers: dict[str, str], data: bytes, close: bool = False) -> None:
        """Status line, headers and body in one write."""
        if close:
            self.close_connection = True
        reason = self.responses.get(status, ("",))[0]
        lines = [f"HTTP/1.1 {status} {reason}", f"Server: {self.server_version}", f"Date: {self.date_time_string()}"]
        for name, value in headers.items():
            if name.lower() not in {"content-length", "connection", "transfer-encoding", "server", "date"}:
                lines.append(f"{name}: {value}")
        lines.append(f"Content-Length: {len(data)}")
        if self.close_connection:
            lines.append("Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "strict")
        self.wfile.write(head if self.command == "HEAD" else head + data)

    def __getattr__(self, name: str) -> Any:
        # Every method (TRACE, CONNECT, PROPFIND, …) reaches the router, which answers 405 with
        # Allow in the error shape of docs/contract.md §4, instead of the stdlib's 501 HTML page.
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Errors of the stdlib's HTTP parser (bad request line or version, URI or headers too
        long) with a status line and the ``{message, code}`` body of docs/contract.md §4, never its HTML page, and
        never without a status line (it omits one while it still takes the request for HTTP/0.9)."""
        self.log_error("code %d, message %s", code, message)
        reason = self.responses.get(code, ("error",))[0]
        text = reason if not message or message == reason else f"{reason}: {message}"
        self._send(*spec_error(code, "invalid_request", text[:_MAX_ECHO]), close=True)


class LocalServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    #: the listen backlog (socketserver's default is 5); the kernel caps it at net.core.somaxconn
    request_queue_size = 1024

    def __init__(self, host: str, port: int, gateway: Gateway | None = None) -> None:
        self.gateway: Gateway = gateway or LocalGateway()
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Anything a connection's thread did not handle: one line, no traceback on the console."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError):
            log.debug("%s went away: %s", client_address[0], type(exc).__name__)
            return
        place = " < ".join(where(exc)[::-1]) if exc is not None else "?"
        log.error("serving %s failed: %s at %s", client_address[0], type(exc).__name__, place)
        log.debug("serving %s failed", client_address[0], exc_info=exc)


def console_logging(verbose: bool) -> None:
    """The server's own lines — each request with ``verbose``, warnings and errors always — as
    plain text on stderr, for people; never through the handlers' JSON logger."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.handlers[:] = [handler]
    log.setLevel(logging.INFO if verbose else logging.WARNING)
    log.propagate = False


@dataclass(frozen=True)
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 8787
    #: handler instances kept warm, and the most that run at once
    min_instances: int = 2
    max_instances: int = 8
    #: seconds one request may run before its instance is stopped (the function's Timeout)
    budget_s: float = FUNCTION_TIMEOUT_S
    #: each invocation's metrics: None drops them, "-" is stderr, anything else a file
    metrics_to: str | None = None
    #: feed the memories table's stream to the indexer, as Lambda's event source mapping does
    #: (the AWS backend: ``mnemo.local.stream``)
    follow_stream: bool = False
    #: run the scheduled cleanup job in a child process at start and then every this many seconds
    #: (``mnemo.local.background.cleanup_schedule``; 0: never — ``mnemo cleanup`` runs it by hand)
    cleanup_every_s: int = 0
    #: the settings the handler instances and the stream follower run with (None: each process
    #: reads the environment's)
    settings: Settings | None = None


class _Stop(Exception):
    """SIGTERM: stop serving, as Ctrl-C does."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop


def serve(
    options: ServeOptions,
    announce: Callable[[LocalServer], None] | None = None,
    bound: Callable[[LocalServer], None] | None = None,
) -> None:
    """Listen, call ``bound`` (the socket is bound and nothing else has started: ``mnemo serve``
    opens and bootstraps the store there), start the handler instances, call ``announce`` once
    ready, and serve until Ctrl-C or SIGTERM; then stop the instances. Raises ``OSError`` when the
    port cannot be bound."""
    pool = WorkerPool(
        PoolOptions(
            min_instances=min(options.min_instances, options.max_instances),
            max_instances=options.max_instances,
            budget_s=options.budget_s,
            metrics_to=options.metrics_to,
            settings=options.settings,
        )
    )
    server = LocalServer(options.host, options.port, pool)  # listening: connections queue until served
    jobs = []
    if options.follow_stream:
        from mnemo.local.stream import follow

        jobs.append(Child(follow, options.settings, name="mnemo-stream"))
    if options.cleanup_every_s:
        jobs.append(Child(cleanup_schedule, options.settings, name="mnemo-cleanup"))
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        if bound is not None:
            bound(server)
        pool.start()
        for job in jobs:
            job.start()
        if announce is not None:
            announce(server)
        server.serve_forever(poll_interval=0.2)
    except (KeyboardInterrupt, _Stop):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.server_close()
        for job in jobs:
            job.close()
        pool.close()
