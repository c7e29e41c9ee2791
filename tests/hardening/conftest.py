"""Fixtures for the hardening suites: a real ``mnemo serve`` with limits raised so that 429s
never mask a finding — once per backend: the embedded SQLite one, and ``--backend aws`` on the
session's AWS stack (moto server + the real OpenSearch node); the raw HTTP client that can send any
bytes at it is tests/support/http.py's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.http import Reply, call, send
from tests.support.server import RunningServer, start_server, stop_server

__all__ = ["MCP_META", "UNLIMITED", "Outcome", "Reply", "call", "mcp_call", "rest_call", "send"]

#: limits far above anything a test sends: a 429 would hide the answer under test
UNLIMITED = {"MNEMO_SEARCH_PER_MINUTE": "1000000", "MNEMO_WRITE_PER_MINUTE": "1000000"}


#: the backends a hardening suite runs against; "aws" needs the session's AWS stack
SERVER_BACKENDS = ["sqlite", pytest.param("aws", marks=pytest.mark.aws)]


def backend_env(request: pytest.FixtureRequest, backend: str, name: str) -> dict[str, str]:
    """What a ``mnemo serve`` needs on top of UNLIMITED to run on ``backend``."""
    if backend == "sqlite":
        return {}
    from tests.support.aws_stack import serve_env

    return serve_env(request.getfixturevalue("aws_stack"), name)


@pytest.fixture(scope="module", params=SERVER_BACKENDS)
def hard_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    env = {**UNLIMITED, **backend_env(request, request.param, "hardening")}
    # --timeout 120: the suites judge answers, not speed. On AWS every call queues at a moto server
    # that answers one request at a time; under `make fuzz` on a loaded 2-core machine a call
    # waited past the default 10 s budget and was (rightly) answered 503, which schemathesis then
    # reported as a wrong status (ST401).
    running = start_server(tmp_path_factory.mktemp(f"mnemo-hardening-{request.param}"), env, ("--timeout", "120"))
    yield running
    running.banner = stop_server(running)


# -- MCP: one tools/call per request, as a client of protocol 2026-07-28 sends it ----------------

MCP_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "hardening", "version": "1"},
}


@dataclass
class Outcome:
    """What a caller learns from one tool call, on either surface: the HTTP status, and for an
    answered call whether it failed and its docs/contract.md §4 code, or its result."""

    status: int
    code: str | None
    body: Any

    @property
    def ok(self) -> bool:
        return self.status == 200 and self.code is None


def rest_call(server: RunningServer, tool: str, arguments: Any, **kwargs: Any) -> Outcome:
    reply = call(server, tool, arguments, **kwargs)
    body = reply.body
    return Outcome(reply.status, body.get("code") if reply.status >= 400 else None, body)


def mcp_call(server: RunningServer, tool: str, arguments: Any, **kwargs: Any) -> Outcome:
    """``tools/call`` over ``POST /mcp``; a rejected call is an ``isError`` result whose text is
    the docs/contract.md §4 body (read from the text content, which every MCP client receives)."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"_meta": MCP_META, "name": tool, "arguments": arguments},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": tool,
        **kwargs.pop("headers", {}),
    }
    reply = send(server, "/mcp", json.dumps(message).encode(), headers=headers, **kwargs)
    if reply.status != 200:
        return Outcome(reply.status, reply.body.get("code"), reply.body)
    result = reply.body["result"]
    body = json.loads(result["content"][0]["text"])
    return Outcome(200, body["code"] if result.get("isError") else None, body)
