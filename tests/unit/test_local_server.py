"""The HTTP side of ``mnemo serve`` (``LocalServer``), in process with a gateway that answers at
once: one write per answer on a ``TCP_NODELAY`` socket, a real listen backlog, a status line and
the ``{message, code}`` body on every answer the parser gives, and quiet disconnects."""

from __future__ import annotations

import http.client
import json
import logging
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from mnemo.local.server import LocalServer

from tests.support.waiting import wait_until

BIG = b'{"padding": "' + b"x" * 100_000 + b'"}'


class AnsweringGateway:
    """Answers every request with a fixed JSON body; ``/big`` with 100 kB."""

    def dispatch(
        self, method: str, target: str, headers: dict[str, str], body: bytes, source_ip: str = "127.0.0.1"
    ) -> tuple[int, dict[str, str], bytes]:
        data = BIG if target == "/big" else json.dumps({"path": target, "length": len(body)}).encode()
        return 200, {"Content-Type": "application/json", "X-Extra": "1"}, data


class RecordingSocket:
    """The accepted socket, with every ``sendall`` and ``setsockopt`` the handler makes recorded."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.sends: list[bytes] = []
        self.options: list[tuple[Any, ...]] = []

    def sendall(self, data: bytes) -> None:
        self.sends.append(bytes(data))
        self._sock.sendall(data)

    def setsockopt(self, *args: Any) -> None:
        self.options.append(args)
        self._sock.setsockopt(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class RecordingServer(LocalServer):
    def __init__(self) -> None:
        self.accepted: list[RecordingSocket] = []
        super().__init__("127.0.0.1", 0, AnsweringGateway())

    def get_request(self) -> tuple[Any, Any]:
        sock, address = super().get_request()
        recorded = RecordingSocket(sock)
        self.accepted.append(recorded)
        return recorded, address


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    running = RecordingServer()
    thread = threading.Thread(target=running.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield running
    running.shutdown()
    running.server_close()
    thread.join(5)


def raw(server: LocalServer, data: bytes) -> bytes:
    """Send bytes on a new connection; everything the server answers until it closes."""
    with socket.create_connection(server.server_address[:2], timeout=10) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_each_answer_on_a_kept_alive_connection_leaves_in_one_write(server):
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=10)
    answers = []
    for path in ("/small", "/big", "/small"):
        conn.request("POST", path, body=b'{"a": 1}', headers={"Content-Type": "application/json"})
        reply = conn.getresponse()
        answers.append((reply.status, reply.getheader("X-Extra"), reply.read()))
    conn.close()

    assert [status for status, _, _ in answers] == [200, 200, 200]
    assert answers[1][2] == BIG and answers[0][1] == "1"
    (accepted,) = server.accepted  # one connection, kept alive
    assert len(accepted.sends) == 3, "status line, headers and body of each answer in one write"
    assert accepted.sends[1].startswith(b"HTTP/1.1 200 OK\r\n") and accepted.sends[1].endswith(BIG)


def test_every_accepted_socket_has_tcp_nodelay(server):
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=10)
    conn.request("GET", "/healthz")
    conn.getresponse().read()
    conn.close()

    (accepted,) = server.accepted
    assert (socket.IPPROTO_TCP, socket.TCP_NODELAY, True) in accepted.options


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the accept queue through TCP_INFO")
def test_a_burst_of_new_connections_waits_in_a_real_backlog():
    """50 connections to a server that accepts none yet: all 50 complete their handshake and wait
    in the accept queue (socketserver's default backlog of 5 keeps 6 and drops the rest's SYNs)."""
    server = LocalServer("127.0.0.1", 0, AnsweringGateway())
    clients = []
    try:
        for _ in range(50):
            client = socket.socket()
            client.setblocking(False)
            client.connect_ex(server.server_address[:2])
            clients.append(client)
        deadline = time.monotonic() + 10
        queued, backlog = 0, 0
        while time.monotonic() < deadline:
            # struct tcp_info: 8 one-byte fields, then u32 rto, ato, snd_mss, rcv_mss, unacked, sacked;
            # on a listening socket unacked is the accept queue's length and sacked its limit
            info = server.socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 32)
            queued, backlog = struct.unpack_from("II", info, 24)
            if queued == 50:
                break
            time.sleep(0.05)
    finally:
        for client in clients:
            client.close()
        server.server_close()

    assert queued == 50
    assert backlog >= 128


PARSER_ERRORS = {
    "HTTP/9.9": (b"GET /healthz HTTP/9.9\r\n\r\n", 505),
    "HTTP/2.0": (b"GET /healthz HTTP/2.0\r\n\r\n", 505),
    "HTTP/0.9 (no version)": (b"GET /healthz\r\n\r\n", 400),
    "garbage request line": (b"garbage\r\n\r\n", 400),
    "malformed version": (b"GET /healthz HTTP/1.x\r\n\r\n", 400),
    "request line over 64 KiB": (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", 414),
    "header line over 64 KiB": (b"GET / HTTP/1.1\r\nX-A: " + b"a" * 70_000 + b"\r\n\r\n", 431),
    "over 100 headers": (b"GET / HTTP/1.1\r\n" + b"X-A: 1\r\n" * 101 + b"\r\n", 431),
    "negative Content-Length": (b"POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
    "chunked body": (b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
}


@pytest.mark.parametrize(("request_bytes", "status"), PARSER_ERRORS.values(), ids=PARSER_ERRORS.keys())
def test_a_request_the_parser_refuses_gets_a_status_line_and_the_spec_body(server, request_bytes, status):
    answer = raw(server, request_bytes)

    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in header_lines)
    assert status_line.startswith(f"HTTP/1.1 {status} ")
    assert headers["Content-Type"] == "application/json"
    assert int(headers["Content-Length"]) == len(body)
    assert headers["Connection"] == "close"
    error = json.loads(body)
    assert set(error) == {"message", "code"} and error["code"] == "invalid_request"
    assert len(error["message"]) <= 200


def test_clients_that_go_away_cost_a_debug_line_and_the_server_keeps_serving(server, caplog):
    address = server.server_address[:2]
    with caplog.at_level(logging.DEBUG, logger="mnemo.local"):
        for request in (b"POST /big HTTP/1.1\r\nContent-Length: 0\r\n\r\n", b"POST /x HTTP/1.1\r\nContent-Le"):
            sock = socket.create_connection(address, timeout=10)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a RST
            sock.sendall(request)
            sock.close()
        sock = socket.create_connection(address, timeout=10)
        sock.sendall(b"POST /x HTTP/1.1\r\nContent-Length: 100\r\n\r\nonly part of it")
        sock.close()
        conn = http.client.HTTPConnection(*address, timeout=10)
        conn.request("GET", "/still-there")
        reply = conn.getresponse()
        assert (reply.status, json.loads(reply.read())["path"]) == (200, "/still-there")
        conn.close()

        # the connection threads write their line when they get to it (on a loaded machine, after
        # the next request's answer): wait for the three lines, then for nothing more
        def gone() -> list[str]:
            return [r.getMessage() for r in caplog.records if "went away" in r.getMessage()]

        wait_until(lambda: len(gone()) >= 3, timeout=30, what="three 'went away' lines")
        server.shutdown()

    messages = [r.getMessage() for r in caplog.records]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], messages
    assert len(gone()) == 3, messages
