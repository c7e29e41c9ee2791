"""The official MCP conformance suite (``@modelcontextprotocol/conformance``, pinned in
tests/clients) against a real ``mnemo serve``: its general server scenarios — the handshake,
ping, tools/list, and DNS-rebinding protection (a request whose Host/Origin names another site is
refused, one from localhost is served).

The suite sends no credentials and has no option to; Mnemo answers 401 without a key. A small
proxy on localhost adds the key and forwards every other header as sent, ``Host`` and ``Origin``
included, so the server judges exactly what the suite sends.

Version 0.1.16 calls ``fs.globSync`` (Node.js 22): on Node 20 it stops at start-up with "The
requested module 'fs' does not provide an export named 'globSync'". tests/clients therefore pins
the ``node`` package (a Node.js 22 binary, from npm like the clients) and the suite runs on that.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support.server import RunningServer

pytestmark = [pytest.mark.slow, pytest.mark.node]

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
NODE = CLIENTS / "node_modules" / ".bin" / "node"
SUITE = CLIENTS / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
SCENARIOS = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"]
_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length"}


@pytest.fixture(scope="module")
def keyed(server: RunningServer) -> Iterator[str]:
    """``http://localhost:<port>/mcp`` of a proxy that adds the server's key to each request."""
    host, port = server.url.removeprefix("http://").split(":")

    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
            pass

        def _forward(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
            headers["Authorization"] = f"Bearer {server.key}"
            conn = http.client.HTTPConnection(host, int(port), timeout=60)
            try:
                conn.request(self.command, self.path, body=body, headers=headers)
                reply = conn.getresponse()
                data = reply.read()
            finally:
                conn.close()
            self.send_response(reply.status)
            for name, value in reply.getheaders():
                if name.lower() not in _HOP:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_DELETE = _forward

    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Forward)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    yield f"http://localhost:{proxy.server_address[1]}/mcp"
    proxy.shutdown()
    proxy.server_close()


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_official_conformance_suite_passes_its_general_server_scenarios(keyed, scenario, tmp_path):
    assert SUITE.is_file() and NODE.exists(), "the pinned conformance suite is missing: run `make clients`"

    done = subprocess.run(
        [str(NODE), str(SUITE), "server", "--url", keyed, "--scenario", scenario, "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
    )

    (checks_file,) = tmp_path.glob("*/checks.json")
    checks = json.loads(checks_file.read_text())
    failed = [(c["id"], c.get("errorMessage"), c.get("details")) for c in checks if c["status"] == "FAILURE"]
    assert checks and not failed, failed
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
