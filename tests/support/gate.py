"""A TCP gate in front of an engine: it relays bytes both ways until it is shut, and while shut the
engine is gone to whoever talks through it, as when its process stops — the connections open
through the gate are closed and new ones are refused (nothing listens on the port) — while the
engine itself keeps running for everyone else. ``open()`` listens on the same port again.

Stopping and restarting the session's OpenSearch node for an outage took ≈ 11 s per test (a JVM
start on a loaded machine) and left every other test without the node meanwhile; the gate's
outage starts and ends at once, and works on a node the suite did not start. Stdlib only."""

from __future__ import annotations

import contextlib
import socket
import threading
from urllib.parse import urlsplit


class Gate:
    def __init__(self, target_url: str) -> None:
        target = urlsplit(target_url)
        self._target = (target.hostname or "127.0.0.1", target.port or 80)
        self._scheme = target.scheme
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"{self._scheme}://127.0.0.1:{self.port}"

    def open(self) -> Gate:
        """Listen (on the gate's port once it has one) and relay every connection to the target."""
        with self._lock:
            if self._listener is not None:
                return self
            listener = socket.socket()
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", self.port))
            listener.listen(64)
            self.port = listener.getsockname()[1]
            self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True, name="gate-accept").start()
        return self

    def shut(self) -> None:
        """Refuse new connections and close the open ones, as a stopped engine's port does."""
        with self._lock:
            listener, self._listener = self._listener, None
            sockets, self._open = self._open, set()
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
            listener.close()
        for sock in sockets:
            _close(sock)

    def __enter__(self) -> Gate:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.shut()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # shut
            try:
                upstream = socket.create_connection(self._target, timeout=10)
            except OSError:
                _close(client)
                continue
            upstream.settimeout(None)
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                if self._listener is not listener:  # shut meanwhile
                    _close(client)
                    _close(upstream)
                    return
                self._open |= {client, upstream}
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._relay, args=(source, sink), daemon=True, name="gate-relay").start()

    def _relay(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with self._lock:
                self._open -= {source, sink}
            _close(source)
            _close(sink)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
