"""What ``mnemo serve`` writes, and how it treats clients that misbehave at the HTTP level: output
for people (metrics only with ``-v`` or ``--metrics FILE``), no traceback when clients go away,
and a status line with the ``{message, code}`` body on every answer of its HTTP parser."""

from __future__ import annotations

import json
import socket
import struct
import time
from pathlib import Path

import pytest

from tests.hardening.conftest import UNLIMITED, call, send
from tests.support.server import RunningServer, start_server, stop_server
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow]

MCP_CALL = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_search", "arguments": {"q": "x"}}}
).encode()
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


def busy_session(server: RunningServer) -> None:
    """Enough calls of each kind for Powertools to have flushed its metric blobs (100 values)."""
    for i in range(110):
        assert call(server, "memory_add", {"content": f"note {i}"}).status == 200
        assert send(server, "/mcp", MCP_CALL, headers=MCP_HEADERS).status == 200
    assert call(server, "memory_add", {"content": "x" * 5000}).status == 413  # a rejection too


def json_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.lstrip().startswith("{")]


def test_the_output_is_for_people_and_carries_no_metrics(tmp_path):
    server = start_server(tmp_path, UNLIMITED)
    try:
        busy_session(server)
    finally:
        output = stop_server(server)

    assert output.splitlines()[0].startswith(f"Mnemo listening on {server.url}")
    assert json_lines(output) == []
    assert "Traceback" not in output


def test_metrics_go_to_the_file_named_by_metrics_one_emf_line_per_call(tmp_path):
    metrics = tmp_path / "metrics.jsonl"
    server = start_server(tmp_path, UNLIMITED, args=("--metrics", str(metrics)))
    try:
        busy_session(server)
    finally:
        output = stop_server(server)

    lines = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert json_lines(output) == []
    names = [{m["Name"] for m in line["_aws"]["CloudWatchMetrics"][0]["Metrics"]} for line in lines]
    assert names.count({"write_calls"}) == 110  # each REST add: one line of its own
    assert names.count({"mcp_requests", "search_calls"}) == 110
    assert names.count({"error_content_too_large"}) == 1  # the rejected add
    assert all(len(values) == 1 for line in lines for name, values in line.items() if name not in ("_aws", "service"))


def test_verbose_logs_each_request_and_its_metrics(tmp_path):
    server = start_server(tmp_path, UNLIMITED, args=("--verbose",))
    try:
        assert call(server, "memory_add", {"content": "seen"}).status == 200
    finally:
        output = stop_server(server)

    assert any(line.startswith("POST /v1/tools/memory_add -> 200 in ") for line in output.splitlines())
    assert [json.loads(line)["write_calls"] for line in json_lines(output)] == [[1.0]]


def _rst(server: RunningServer, data: bytes) -> None:
    host, port = server.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.sendall(data)
    sock.close()  # a reset, mid-request or before the answer is read


def test_clients_that_go_away_leave_no_traceback(tmp_path):
    server = start_server(tmp_path, UNLIMITED)
    try:
        search = f"POST /openapi.json HTTP/1.1\r\nAuthorization: Bearer {server.key}\r\nContent-Length: 0\r\n\r\n"
        for _ in range(30):
            _rst(server, b"GET /openapi.json HTTP/1.1\r\n\r\n")  # a large answer nobody reads
            _rst(server, search.encode())
            _rst(server, b"POST /v1/tools/memory_add HTTP/1.1\r\nContent-Length: 50\r\n\r\n{")  # half a body
            _rst(server, b"POST /v1/tools/memory_add HTTP/1.1\r\nContent-Le")  # half a header

        # the 120 resets queue behind the workers: on a loaded machine the first answer may be the
        # honest 503 "retry shortly", so the client retries it, as a client would, until a deadline
        def served() -> int | None:
            reply = call(server, "memory_add", {"content": "still serving"})
            retry = reply.status == 503 and reply.body.get("code") == "unavailable"
            return None if retry else reply.status

        assert wait_until(served, timeout=120, what="an answer other than 503 unavailable", poll=0.5) == 200
    finally:
        output = stop_server(server)

    assert "Traceback" not in output
    assert "Error" not in output, output[-2000:]


RAW_REQUESTS = {
    "HTTP/9.9": (b"GET /healthz HTTP/9.9\r\n\r\n", 505),
    "HTTP/0.9 request line": (b"GET /healthz\r\n\r\n", 400),
    "not a request line": (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400),  # TLS to a plain port
    "GET /mcp": (b"GET /mcp HTTP/1.1\r\nAuthorization: Bearer e2e-admin-key-0123456789\r\n\r\n", 405),
    "DELETE /mcp": (b"DELETE /mcp HTTP/1.1\r\nAuthorization: Bearer e2e-admin-key-0123456789\r\n\r\n", 405),
}


@pytest.mark.parametrize(("data", "status"), RAW_REQUESTS.values(), ids=RAW_REQUESTS.keys())
def test_every_answer_has_a_status_line_and_the_spec_body(server: RunningServer, data: bytes, status: int):
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        answer = b"".join(iter(lambda: sock.recv(65536), b""))

    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0].startswith(f"HTTP/1.1 {status} "), answer[:200]
    headers = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines[1:])}
    assert int(headers["content-length"]) == len(body)
    error = json.loads(body)
    assert error["code"] == "invalid_request" and error["message"]
    if status == 405:
        assert headers["allow"] == "POST"


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="walks the process tree through /proc")
def test_stopping_the_server_stops_its_handler_instances(tmp_path: Path):
    server = start_server(tmp_path, UNLIMITED)
    processes = descendants(server.process.pid)
    stop_server(server)

    deadline = time.monotonic() + 10  # the forkserver notices its parent is gone, the instances follow
    while any(running(pid) for pid in processes) and time.monotonic() < deadline:
        time.sleep(0.05)

    assert len(processes) >= 3, "a forkserver and at least two warm handler instances"
    assert [pid for pid in processes if running(pid)] == []
