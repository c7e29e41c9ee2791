"""A recording HTTP proxy in front of a test engine (the moto server, the OpenSearch node): every
request a process under test sends is written down — method, path, ``X-Amz-Target``, body — with
the label of whoever is being run at the time, then forwarded, or refused with a given answer
(an OpenSearch domain that does not map the function's role answers 403 to everything).

The process under test is pointed at the proxy's URL instead of the engine's; nothing inside it
is patched or hooked."""

from __future__ import annotations

import http.client
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

#: hop-by-hop headers (RFC 9110 §7.6.1), and the length we set ourselves
_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}


@dataclass(frozen=True)
class Call:
    label: str
    method: str
    path: str
    target: str  # X-Amz-Target (DynamoDB's operation), "" for OpenSearch
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"{}")


@dataclass(frozen=True)
class Refusal:
    status: int
    body: dict[str, Any]


class RecordingProxy:
    def __init__(self, upstream: str) -> None:
        url = urlsplit(upstream)
        self.upstream = (url.hostname or "127.0.0.1", url.port or 80)
        self.calls: list[Call] = []
        self.label = ""
        self.refusal: Refusal | None = None
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="recording-proxy", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def of(self, label: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.label == label]

    def _record(self, call: Call) -> None:
        with self._lock:
            self.calls.append(call)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs use it
            disable_nagle_algorithm = True  # or each small write waits for a delayed ACK
            upstream: http.client.HTTPConnection | None = None

            def log_message(self, *_: Any) -> None:
                pass

            def _relay(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                path = self.path.split("?", 1)[0]
                proxy._record(Call(proxy.label, self.command, path, self.headers.get("X-Amz-Target", ""), body))
                refusal = proxy.refusal
                if refusal is not None:
                    payload = json.dumps(refusal.body).encode()
                    self.send_response(refusal.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(payload)
                    return
                if self.upstream is None:
                    self.upstream = http.client.HTTPConnection(*proxy.upstream, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP | {"content-length"}}
                headers["Content-Length"] = str(len(body))
                self.upstream.request(self.command, self.path, body=body, headers=headers)
                answer = self.upstream.getresponse()
                data = answer.read()  # a HEAD answer has no body, whatever its Content-Length says
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in _HOP | {"content-length", "date", "server"}:
                        self.send_header(key, value)
                self.send_header("Content-Length", answer.getheader("Content-Length", str(len(data))))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _relay

        return Handler
