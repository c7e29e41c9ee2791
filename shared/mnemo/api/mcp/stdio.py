"""MCP over stdio: newline-delimited JSON-RPC messages on stdin and stdout (``mnemo mcp``).

The rules, from the 2025-11-25 transports page: messages are delimited by newlines and contain
none; "the server MUST NOT write anything to its stdout that is not a valid MCP message" (the
caller hands :func:`run_stdio` a private stdout and keeps logs on stderr). From 2026-07-28:
"servers SHOULD exit promptly when their standard input is closed", and there is no header
layer — the era of each request is read from its ``params._meta``
(:meth:`McpEndpoint.handle_message`). A client that probes with ``server/discover`` gets its
answer at once, whichever era it then speaks.

Messages are answered in order, one at a time; each answer is flushed as one line of ASCII JSON.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import threading
from collections.abc import Callable, Iterator
from typing import IO, Any, Protocol

from mnemo.api.mcp.endpoint import McpEndpoint
from mnemo.api.mcp.jsonrpc import error_envelope, parse_json
from mnemo.api.mcp.protocol import INVALID_REQUEST, PARSE_ERROR


class WorkBetween(Protocol):
    """Work the serving thread does between messages (``service.between.Between``): vectors made
    after an answer by another thread, stored through the connection the calls read with; and,
    when no message waits, the backend's own work when due (SQLite: a checkpoint of its log)."""

    def hand_over(self, wake: Callable[[], None]) -> None: ...

    def write_ready(self) -> int: ...

    def idle(self) -> bool: ...

    def hand_back(self) -> None: ...


class NothingBetween:
    """A :class:`WorkBetween` with no work (a host with no service behind it, e.g. a test's endpoint)."""

    def hand_over(self, wake: Callable[[], None]) -> None:
        """Nothing is ever handed over: ``wake`` is never called."""

    def write_ready(self) -> int:
        return 0

    def idle(self) -> bool:
        return False

    def hand_back(self) -> None:
        """Nothing to hand back."""


#: messages read ahead of the one being answered, at most (then reading waits: the pipe fills)
READ_AHEAD = 16

_END = object()  # the reader ended
_WORK = object()  # work is ready between messages


def run_stdio(
    endpoint: McpEndpoint,
    reader: IO[bytes],
    writer: IO[bytes],
    *,
    max_message_bytes: int,
    after_message: Callable[[], None] | None = None,
    between: WorkBetween | None = None,
) -> None:
    """Serve messages from ``reader`` until it ends; answers go to ``writer``, one line each.

    A thread reads the messages and this one answers them in order and, whenever it would otherwise
    wait for the next (and after each answer), does the work ``between`` hands over to it; when no
    message waits, ``between.idle()`` (None: no such work)."""
    negotiated: str | None = None

    def answer(line: bytes | None) -> None:
        nonlocal negotiated
        reply: Any
        if line is None:
            reply = error_envelope(None, INVALID_REQUEST, f"a message is at most {max_message_bytes} bytes")
        else:
            try:
                message = parse_json(line)
            except ValueError:
                reply = error_envelope(None, PARSE_ERROR, "Parse error")
            else:
                reply = endpoint.handle_message(message, negotiated)
                negotiated = _negotiated(message, reply) or negotiated
        if after_message is not None:
            after_message()
        if reply is not None:
            writer.write(encode_line(reply))
            writer.flush()

    between = between if between is not None else NothingBetween()
    # The thread reads the descriptor itself, never through ``reader``'s buffer: a daemon thread
    # blocked inside a buffered reader's lock aborts the interpreter's shutdown ("could not acquire
    # lock for <_io.BufferedReader name='<stdin>'>": SIGTERM while the host keeps stdin open)
    lines = (
        _fd_lines(fd, max_message_bytes) if (fd := _fileno(reader)) is not None else _lines(reader, max_message_bytes)
    )
    events: queue.Queue[Any] = queue.Queue(maxsize=READ_AHEAD)

    def wake() -> None:
        with contextlib.suppress(queue.Full):  # messages are waiting: the work is done after the next answer
            events.put_nowait(_WORK)

    def read() -> None:
        try:
            for line in lines:
                events.put(line)
        except BaseException as exc:  # noqa: BLE001 - raised again on the serving thread
            events.put(exc)
        events.put(_END)

    between.hand_over(wake)
    try:
        threading.Thread(target=read, name="mnemo-stdio-reader", daemon=True).start()
        while (event := events.get()) is not _END:
            if isinstance(event, BaseException):
                raise event
            if event is not _WORK:
                answer(event)
            between.write_ready()
            if events.empty():
                between.idle()
    finally:
        between.hand_back()


def _fileno(reader: IO[bytes]) -> int | None:
    try:
        return reader.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return None


def _fd_lines(fd: int, max_message_bytes: int, read: Callable[[int, int], bytes] = os.read) -> Iterator[bytes | None]:
    """:func:`_lines` read from a file descriptor (nothing read through a buffer before), as
    ``read`` returns its bytes (a pipe: whatever has arrived)."""
    buffered, skipping = b"", False
    while chunk := read(fd, 1 << 16):
        buffered += chunk
        while (end := buffered.find(b"\n")) >= 0:
            line, buffered = buffered[: end + 1], buffered[end + 1 :]
            if skipping:  # the end of an over-long line, already answered
                skipping = False
            elif (message := _message(line, max_message_bytes)) != b"":
                yield message
        if skipping:
            buffered = b""
        elif len(buffered) > max_message_bytes + 2:  # over-long, its end not read yet
            yield None
            buffered, skipping = b"", True
    if buffered and not skipping and (message := _message(buffered, max_message_bytes)) != b"":
        yield message


def _message(line: bytes, max_message_bytes: int) -> bytes | None:
    """A line's message without its line ending; None: longer than allowed; b"": blank."""
    message_bytes = line.rstrip(b"\r\n")
    if len(message_bytes) > max_message_bytes:
        return None
    return message_bytes if message_bytes.strip() else b""


def _lines(reader: IO[bytes], max_message_bytes: int) -> Iterator[bytes | None]:
    """The messages of ``reader``, each without its line ending (None: one longer than allowed,
    skipped); blank lines left out."""
    while line := reader.readline(max_message_bytes + 2):
        message = _message(line, max_message_bytes)
        if message is None:
            while line and not line.endswith(b"\n"):  # skip the rest of the over-long line
                line = reader.readline(1 << 16)
            yield None
        elif message:
            yield message


def encode_line(reply: Any) -> bytes:
    """One message as a line of ASCII JSON: JSON never holds a raw newline, and with everything
    outside ASCII escaped, U+2028 and U+2029 (which some readers take for line breaks) are too.
    (Measured against UTF-8 output with the Python SDK's stdio client on CJK results: no
    difference beyond the noise, p50 1.8-3.0 ms either way.)"""
    return json.dumps(reply, separators=(",", ":")).encode("ascii") + b"\n"


def _negotiated(message: Any, reply: Any) -> str | None:
    """The version a successful ``initialize`` agreed, else None."""
    if isinstance(message, dict) and message.get("method") == "initialize" and isinstance(reply, dict):
        version = (reply.get("result") or {}).get("protocolVersion")
        return version if isinstance(version, str) else None
    return None
