"""A long-lived ``mnemo serve`` as a user starts it: no Powertools environment at all."""

from __future__ import annotations

import collections
import json
import os

import pytest

from tests.hardening.conftest import SERVER_BACKENDS, UNLIMITED, backend_env, call, send
from tests.support.server import start_server, stop_server

pytestmark = [pytest.mark.slow]

MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "memory_search",
}
MCP_CALL = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            "name": "memory_search",
            "arguments": {"q": "call"},
        },
    }
).encode()


@pytest.mark.parametrize("backend", SERVER_BACKENDS)
def test_the_hundredth_call_of_a_kind_is_not_a_500_without_a_metrics_namespace(request, backend, tmp_path, monkeypatch):
    """Metrics are disabled locally, so nothing flushes them; Powertools publishes by itself at
    100 values of one metric and needs a namespace then. Without one (no POWERTOOLS_METRICS_NAMESPACE,
    as when a user runs ``mnemo serve``) the 100th call answered 500."""
    monkeypatch.delenv("POWERTOOLS_METRICS_NAMESPACE", raising=False)
    assert "POWERTOOLS_METRICS_NAMESPACE" not in os.environ
    server = start_server(tmp_path, {**UNLIMITED, **backend_env(request, backend, "long-running")})
    try:
        # the searches first, in a project still empty: on AWS each search also reads the memories
        # written in the last minute (read-your-writes), which at moto's pace made 110 searches
        # after 120 adds take ~60 s; which memories a search finds is not what this test is about
        statuses = collections.Counter(send(server, "/mcp", MCP_CALL, headers=MCP_HEADERS).status for _ in range(110))
        statuses.update(call(server, "memory_add", {"content": f"call {i}"}).status for i in range(120))
    finally:
        stop_server(server)

    assert statuses == {200: 230}
