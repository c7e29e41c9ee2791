"""``tests/support/gate.Gate``: relays both ways while open; shut, its port refuses connections and
the connections it held are closed, as a stopped engine's are; opened again, the same port relays."""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator

import pytest

from tests.support.gate import Gate


class _Echo(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        while line := self.rfile.readline():
            self.wfile.write(line.upper())


@pytest.fixture
def echo() -> Iterator[str]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _ask(sock: socket.socket, line: bytes) -> bytes:
    sock.sendall(line)
    return sock.makefile("rb").readline()


def test_a_shut_gate_is_a_stopped_engine_and_an_opened_one_relays_on_the_same_port(echo: str) -> None:
    with Gate(echo) as gate:
        port = gate.port
        held = socket.create_connection(("127.0.0.1", port), timeout=5)
        assert _ask(held, b"hello\n") == b"HELLO\n"

        gate.shut()

        assert held.recv(1) == b""  # the open connection is closed
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=5)

        gate.open()

        assert gate.port == port
        with socket.create_connection(("127.0.0.1", port), timeout=5) as again:
            assert _ask(again, b"back\n") == b"BACK\n"
        held.close()
