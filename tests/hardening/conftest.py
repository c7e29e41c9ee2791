"""Fixtures for the hardening suites: a real ``mnemo serve`` with limits raised so that 429s
never mask a finding, and a raw HTTP client that can send any bytes at it."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.e2e.conftest import RunningServer, start_server, stop_server

#: limits far above anything a test sends: a 429 would hide the answer under test
UNLIMITED = {"MNEMO_SEARCH_PER_MINUTE": "1000000", "MNEMO_WRITE_PER_MINUTE": "1000000"}


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    raw: bytes

    @property
    def body(self) -> Any:
        return json.loads(self.raw)


def send(
    server: RunningServer,
    path: str,
    data: bytes | None,
    *,
    method: str = "POST",
    headers: dict[str, str | bytes] | None = None,
    key: str | None = None,
    content_type: str | None = "application/json",
) -> Reply:
    """One request with exactly these bytes (no client-side encoding or validation)."""
    host, port = server.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        sent: dict[str, str | bytes] = {"Authorization": f"Bearer {key or server.key}"}
        if content_type is not None:
            sent["Content-Type"] = content_type
        sent.update(headers or {})
        conn.request(method, path, body=data, headers=sent)
        reply = conn.getresponse()
        return Reply(reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read())
    finally:
        conn.close()


def call(server: RunningServer, tool: str, arguments: Any, **kwargs: Any) -> Reply:
    return send(server, f"/v1/tools/{tool}", json.dumps(arguments).encode(), **kwargs)


@pytest.fixture(scope="module")
def hard_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    running = start_server(tmp_path_factory.mktemp("mnemo-hardening"), UNLIMITED)
    yield running
    running.banner = stop_server(running)
