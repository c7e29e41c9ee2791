"""A stand-in for the X-Ray daemon: a UDP socket on 127.0.0.1 that keeps every segment document
sent to it (the SDK sends ``{"format":"json","version":1}\\n{document}`` per datagram). Point a
process at it with ``AWS_XRAY_DAEMON_ADDRESS``."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any


class XRayListener:
    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * 1024 * 1024)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self.raw: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._last = time.monotonic()
        self._thread = threading.Thread(target=self._listen, name="xray-listener", daemon=True)

    @property
    def address(self) -> str:
        host, port = self._sock.getsockname()
        return f"{host}:{port}"

    def __enter__(self) -> XRayListener:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()

    def _listen(self) -> None:
        while not self._stop.is_set():
            try:
                data = self._sock.recv(65536)
            except TimeoutError:
                continue
            with self._lock:
                self.raw.append(data.decode("utf-8"))
                self._last = time.monotonic()

    def settle(self, quiet_s: float = 0.3, timeout_s: float = 5.0) -> None:
        """Wait until nothing has arrived for ``quiet_s`` (the sender has exited by then)."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end and time.monotonic() - self._last < quiet_s:
            time.sleep(0.05)

    def documents(self, trace_root: str | None = None) -> list[dict[str, Any]]:
        """Every segment and subsegment document received (for one trace, if given)."""
        with self._lock:
            raw = list(self.raw)
        docs = []
        for datagram in raw:
            header, _, body = datagram.partition("\n")
            assert json.loads(header) == {"format": "json", "version": 1}, header
            doc = json.loads(body)
            if trace_root is None or doc.get("trace_id") == trace_root:
                docs.append(doc)
        return docs

    def text(self, trace_root: str | None = None) -> str:
        """The raw datagrams (of one trace): what a leak search must look through."""
        docs = self.documents(trace_root)
        return "\n".join(json.dumps(d, ensure_ascii=False) for d in docs)
