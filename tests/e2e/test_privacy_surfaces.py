"""No secret gets past any write surface, and no ``<private>`` span is stored: REST
(memory_add, memory_update), MCP over HTTP and over stdio (tools/call), and ``mnemo import``,
against a real ``mnemo serve``. The hooks never write (tests/e2e/test_hooks.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.e2e.test_local_server import call
from tests.support.http import request
from tests.support.server import RunningServer, start_server, stop_server
from tests.unit.test_privacy import HOSTILE

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
UNLIMITED = {"MNEMO_SEARCH_PER_MINUTE": "100000", "MNEMO_WRITE_PER_MINUTE": "100000"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    running = start_server(tmp_path_factory.mktemp("privacy"), UNLIMITED, args=("--workers", "1"))
    yield running
    stop_server(running)


def mcp_call(server: RunningServer, tool: str, arguments: dict) -> dict:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    reply = request(server, "POST", "/mcp", message, headers={"Accept": "application/json"})
    assert reply.status == 200, reply.raw
    return dict(reply.body["result"])


def stored(server: RunningServer) -> list[str]:
    _, _, body = call(server, "memory_search", {"limit": 100})
    return [m["content"] for m in body["memories"]]


@pytest.mark.parametrize(("text", "kind"), HOSTILE, ids=[kind for _, kind in HOSTILE])
def test_rest_and_mcp_refuse_each_secret_and_store_nothing(server, text, kind):
    before = stored(server)
    status, _, rest = call(server, "memory_add", {"content": f"note: {text}"})
    result = mcp_call(server, "memory_add", {"content": f"note: {text}", "tags": ["x"]})
    _, _, plain = call(server, "memory_add", {"content": f"plain note for {kind}"})
    updated_status, _, updated = call(server, "memory_update", {"id": plain["memory"]["id"], "content": text})

    assert (status, rest["code"]) == (400, "secret_detected") and kind in rest["message"]
    mcp_body = json.loads(result["content"][0]["text"])
    assert result["isError"] is True and mcp_body["code"] == "secret_detected"
    assert (updated_status, updated["code"]) == (400, "secret_detected")
    after = stored(server)
    assert set(after) == {plain["memory"]["content"], *before}
    assert not any(text in content for content in after)


def test_private_spans_are_never_stored_through_rest_or_mcp(server):
    _, _, rest = call(server, "memory_add", {"content": "Ship on Monday <private>because Ana is out</private>"})
    result = mcp_call(server, "memory_add", {"content": "Freeze at noon <PRIVATE>and the vault is at 10.0.0.7"})

    assert rest["memory"]["content"] == "Ship on Monday"
    assert result["structuredContent"]["memory"]["content"] == "Freeze at noon"
    assert not any("Ana" in c or "vault" in c for c in stored(server))


def test_an_import_holding_a_secret_is_refused_whole_and_private_spans_are_stripped(server):
    assert server.output is not None
    mnemo = [sys.executable, "-m", "mnemo.local.cli", "--data-dir", str(server.output.parent)]
    subprocess.run([*mnemo, "project", "create", "imported"], check=True, capture_output=True)
    listed = subprocess.run([*mnemo, "--json", "workspace", "list"], check=True, capture_output=True, text=True)
    ws_id = re.search(r'"(ws_[^"]+)"', listed.stdout)[1]  # type: ignore[index]
    record = {"workspace_id": ws_id, "project_id": "p", "kind": None, "tags": [], "path": None, "team_id": None,
              "source": "t", "expires_at": None, "version": 1, "created_at": "2026-01-01T00:00:00.000Z",
              "updated_at": "2026-01-01T00:00:00.000Z"}  # fmt: skip
    lines = [
        {**record, "id": "mem_01HZZZZZZZZZZZZZZZZZZZZZZ1", "content": "kept <private>not this</private>"},
        {**record, "id": "mem_01HZZZZZZZZZZZZZZZZZZZZZZ2", "content": f"oops {HOSTILE[0][0]}"},
    ]
    source = "".join(json.dumps(line) + "\n" for line in lines)

    into = ["import", "--project", "imported"]
    refused = subprocess.run([*mnemo, *into], input=source, capture_output=True, text=True)
    accepted = subprocess.run([*mnemo, *into], input=source.splitlines()[0] + "\n", capture_output=True, text=True)
    exported = subprocess.run(
        [*mnemo, "export", "--project", "imported"], capture_output=True, text=True, check=True
    ).stdout

    assert refused.returncode == 1 and "aws_access_key_id" in refused.stderr
    assert HOSTILE[0][0].split()[2] not in refused.stderr
    assert accepted.returncode == 0, accepted.stderr
    assert [json.loads(line)["content"] for line in exported.splitlines()] == ["kept"]
