"""The stdio transport (``api/mcp/stdio.run_stdio``) over byte streams: one JSON-RPC message a line
in, one answer a line out, both eras told apart per request by ``params._meta``, and every bad line
answered without ending the session."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import threading
from collections.abc import Iterator
from typing import IO, Any

import pytest
from mnemo.api.mcp.stdio import _fd_lines, _lines, run_stdio

from tests.support.waiting import wait_until
from tests.unit.test_mcp_protocol import CAPS_KEY, MODERN, PV_KEY, SERVER_INFO_KEY, make_endpoint, rpc

LIMIT = 1024


def session(*lines: bytes | dict | list, limit: int = LIMIT) -> list[Any]:
    """Feed these lines to a fresh endpoint's stdio loop until EOF; every answer, decoded."""
    endpoint, _ = make_endpoint(instructions="Save decisions.")
    data = b"".join(line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n" for line in lines)
    out = io.BytesIO()
    run_stdio(endpoint, io.BytesIO(data), out, max_message_bytes=limit)
    text = out.getvalue().decode()
    assert text == "" or text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def initialize(version: str = "2025-11-25", id_: int = 0) -> dict:
    return rpc(
        "initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}, id_
    )


def modern(method: str, params: dict | None = None, id_: int = 1, version: str = MODERN) -> dict:
    meta = {PV_KEY: version, CAPS_KEY: {}}
    return rpc(method, {**(params or {}), "_meta": meta}, id_)


def test_a_handshake_session_answers_each_request_on_its_own_line():
    answers = session(
        initialize(),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        rpc("ping", id_=1),
        rpc("tools/list", id_=2),
        rpc("tools/call", {"name": "echo", "arguments": {"text": "héllo\u2028"}}, id_=3),
        rpc("tools/call", {"name": "fail"}, id_=4),
    )

    assert [a["id"] for a in answers] == [0, 1, 2, 3, 4]  # the notification got no answer
    assert answers[0]["result"]["protocolVersion"] == "2025-11-25"
    assert answers[0]["result"]["instructions"] == "Save decisions."
    assert answers[1]["result"] == {}
    assert [t["name"] for t in answers[2]["result"]["tools"]] == ["echo", "fail", "routed"]
    assert answers[3]["result"]["structuredContent"] == {"echo": {"text": "héllo\u2028"}}
    failed = answers[4]["result"]
    assert failed["isError"] is True and failed["structuredContent"] == json.loads(failed["content"][0]["text"])


def test_a_2026_client_discovers_and_calls_with_the_envelope_in_meta():
    answers = session(modern("server/discover", id_=1), modern("tools/call", {"name": "echo", "arguments": {}}, id_=2))

    discovered, called = answers[0]["result"], answers[1]["result"]
    assert discovered["supportedVersions"] == [MODERN] and discovered["instructions"] == "Save decisions."
    assert called["resultType"] == "complete" and SERVER_INFO_KEY in called["_meta"]
    assert called["structuredContent"] == {"echo": {}}


def test_discover_without_the_envelope_is_method_not_found_at_once():
    """The Python SDK probes ``server/discover`` first; a legacy-era answer must come promptly."""
    (answer,) = session(rpc("server/discover", {}, id_=9))
    assert answer["id"] == 9 and answer["error"]["code"] == -32601


def test_an_unsupported_envelope_version_names_the_supported_ones():
    (answer,) = session(modern("tools/list", version="2099-01-01"))
    assert answer["error"]["code"] == -32022
    assert answer["error"]["data"] == {"supported": [MODERN], "requested": "2099-01-01"}


def test_bad_lines_get_an_error_and_the_session_goes_on():
    answers = session(
        b"{not json\n",
        b"\n",
        b"   \r\n",
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\r\n',  # CRLF is tolerated
        b'{"jsonrpc": "1.0", "id": 2}\n',
        b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"t": "'
        + b"x" * 2000
        + b'"}}}\n',
        rpc("ping", id_=4),
    )

    assert answers[0] == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    assert answers[1] == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert answers[2]["id"] is None and answers[2]["error"]["code"] == -32600
    assert answers[3]["id"] is None and "1024 bytes" in answers[3]["error"]["message"]
    assert answers[4] == {"jsonrpc": "2.0", "id": 4, "result": {}}


def test_batches_only_after_a_2025_03_26_handshake():
    batch = [rpc("ping", id_=1), rpc("ping", id_=2)]

    (refused,) = session(batch)
    _, accepted = session(initialize("2025-03-26"), batch)

    assert refused["error"]["code"] == -32600 and "2025-11-25" in refused["error"]["message"]
    assert accepted == [{"jsonrpc": "2.0", "id": 1, "result": {}}, {"jsonrpc": "2.0", "id": 2, "result": {}}]


def test_the_last_message_needs_no_trailing_newline_and_eof_ends_the_loop():
    answers = session(b'{"jsonrpc": "2.0", "id": 7, "method": "ping"}')
    assert answers == [{"jsonrpc": "2.0", "id": 7, "result": {}}]


# -- work handed over between messages (the vectors ``mnemo mcp`` stores on its serving thread) -----


class Handed:
    """A :class:`~mnemo.api.mcp.stdio.WorkBetween` that records where and when it runs."""

    def __init__(self) -> None:
        self.wake: Any = None
        self.ready = 0  # work items the other thread left
        self.done: list[tuple[str, int]] = []  # (thread, items) of each write_ready that found some
        self.calls: list[str] = []
        self.idled: list[str] = []  # the thread of each idle()
        self.lock = threading.Lock()

    def hand_over(self, wake: Any) -> None:
        self.calls.append("hand_over")
        self.wake = wake

    def write_ready(self) -> int:
        with self.lock:
            found, self.ready = self.ready, 0
        if found:
            self.done.append((threading.current_thread().name, found))
        return found

    def idle(self) -> bool:
        self.idled.append(threading.current_thread().name)
        return False

    def hand_back(self) -> None:
        self.calls.append("hand_back")
        self.write_ready()

    def leave(self) -> None:
        """What the daemon does: leave an item, wake the serving thread."""
        with self.lock:
            self.ready += 1
        self.wake()


def test_with_work_between_messages_every_line_is_answered_as_without():
    lines = [
        initialize(),
        b"\n",
        b"{not json\n",
        b"x" * (LIMIT + 10) + b"\n",
        modern("tools/list", id_=2),
        rpc("ping", {}, 3),
    ]
    data = b"".join(line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n" for line in lines)
    answers = []
    for between in (None, Handed()):
        endpoint, _ = make_endpoint(instructions="Save decisions.")
        out = io.BytesIO()
        run_stdio(endpoint, io.BytesIO(data), out, max_message_bytes=LIMIT, between=between)
        answers.append(out.getvalue())
        if between is not None:
            assert between.calls == ["hand_over", "hand_back"]
    assert answers[0] == answers[1]
    assert len(answers[0].splitlines()) == 5  # the blank line gets no answer


@contextlib.contextmanager
def serving_over_a_pipe(handed: Handed) -> Iterator[tuple[IO[bytes], io.BytesIO]]:
    """``run_stdio`` on a thread named "serving", reading a real pipe (kept open: the server waits
    for messages), with ``handed`` between messages; yields the pipe's writing end and the answers.
    On exit, EOF ends the loop and the thread."""
    endpoint, _ = make_endpoint(instructions="Save decisions.")
    read_fd, write_fd = os.pipe()
    out = io.BytesIO()
    server = threading.Thread(
        target=run_stdio,
        args=(endpoint, os.fdopen(read_fd, "rb"), out),
        kwargs={"max_message_bytes": LIMIT, "between": handed},
        name="serving",
    )
    server.start()
    feed = os.fdopen(write_fd, "wb")
    try:
        yield feed, out
    finally:
        feed.close()  # EOF: the loop ends, hands the work back
        server.join(30)
    assert not server.is_alive()


def test_work_left_while_the_server_waits_for_a_message_is_done_on_the_serving_thread_at_once():
    handed = Handed()
    with serving_over_a_pipe(handed) as (feed, out):
        feed.write(json.dumps(rpc("ping", {}, 1)).encode() + b"\n")
        feed.flush()
        wait_until(lambda: out.getvalue().count(b"\n") == 1, 30, "the first answer")
        wait_until(lambda: handed.wake is not None, 30, "the work handed over")
        # no message comes: the serving thread, waiting for one, does the work left for it
        threading.Thread(target=handed.leave, name="embedder").start()
        wait_until(lambda: handed.done, 30, "the work done while waiting")
        assert handed.done == [("serving", 1)]
    assert handed.calls == ["hand_over", "hand_back"]


def test_once_no_message_waits_the_serving_thread_does_the_idle_work():
    """After an answer, with nothing more to read, the serving thread calls ``idle`` (the backend's
    work, e.g. SQLite's checkpoint), on itself."""
    handed = Handed()
    with serving_over_a_pipe(handed) as (feed, out):
        assert handed.idled == []  # nothing answered yet
        feed.write(json.dumps(rpc("ping", {}, 1)).encode() + b"\n")
        feed.flush()
        wait_until(lambda: out.getvalue().count(b"\n") == 1, 30, "the answer")
        wait_until(lambda: handed.idled, 30, "the idle work once no message waits")
        assert set(handed.idled) == {"serving"}


def _in_chunks(data: bytes, chunks: list[int], limit: int) -> list[bytes | None]:
    """``_fd_lines`` over ``data`` arriving in chunks of these sizes (a pipe's reads), then the rest."""
    parts = []
    for size in chunks:
        parts.append(data[:size])
        data = data[size:]
    parts = [part for part in [*parts, data] if part]
    return list(_fd_lines(-1, limit, read=lambda fd, most: parts.pop(0) if parts else b""))


@pytest.mark.parametrize("seed", range(40))
def test_messages_read_from_the_descriptor_are_those_read_through_the_buffer(seed):
    rng = random.Random(seed)
    limit = rng.choice([8, 16, 40])
    pieces = [b"{}", b" ", b"", b"x" * (limit - 1), b"y" * limit, b"z" * (limit + 1), b"w" * (3 * limit), b"ab\r"]
    data = b"".join(rng.choice(pieces) + rng.choice([b"\n", b"\r\n", b"\n\n"]) for _ in range(rng.randint(0, 12)))
    data += rng.choice([b"", b"tail", b"t" * (limit + 5)])  # the last line may have no end
    chunks = [rng.randint(1, 2 * limit) for _ in range(len(data))]
    assert _in_chunks(data, chunks, limit) == list(_lines(io.BytesIO(data), limit))
