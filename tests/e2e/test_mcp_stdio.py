"""``mnemo mcp``: the tools over MCP's stdio transport, started as MCP hosts start it — a subprocess
of the official Python SDK's ``stdio_client`` with nothing but the SDK's default environment —
on an empty folder, beside a running ``mnemo serve``, and in a chosen workspace and project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.test_cli import mnemo
from tests.e2e.test_local_server import call
from tests.support.server import start_server, stop_server

mcp = pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

MODES = ["legacy", "2026-07-28", "auto"]
EXPECTED_VERSION = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28", "auto": "2026-07-28"}


def mnemo_mcp(data_dir: Path, *flags: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mnemo.local.cli", "--data-dir", str(data_dir), "mcp", *flags],
        env=env or {},
    )


def text_of(result: Any) -> dict:
    return json.loads(result.content[0].text)


async def _session(params: StdioServerParameters, mode: str, errlog: Path, marker: str) -> dict[str, Any]:
    with errlog.open("a") as sink:
        async with Client(stdio_client(params, errlog=sink), mode=mode, read_timeout_seconds=30) as client:
            listed = await client.list_tools()
            added = await client.call_tool("memory_add", {"content": f"Stdio decision {marker}", "kind": "decision"})
            found = await client.call_tool("search_memory", {"query": marker})
            refused = await client.call_tool("memory_add", {"content": "x" * 4097})
            memory_id = added.structured_content["memory"]["id"]
            prompts = await client.list_prompts()
            prompt = await client.get_prompt("recall_for_task", {"task": f"ship {marker}"})
            templates = await client.list_resource_templates()
            resources = await client.list_resources()
            read = await client.read_resource(f"mnemo://projects/default/memories/{memory_id}")
            return {
                "prompts": [p.name for p in prompts.prompts],
                "prompt": prompt.messages[0].content.text,
                "templates": [t.uri_template for t in templates.resource_templates],
                "resources": [str(r.uri) for r in resources.resources],
                "read": json.loads(read.contents[0].text),
                "version": client.protocol_version,
                "instructions": getattr(client, "instructions", None),
                "tools": [tool.name for tool in listed.tools],
                "added": added,
                "found": found,
                "refused": refused,
            }


@pytest.mark.parametrize("mode", MODES)
def test_the_sdk_stdio_client_lists_adds_finds_and_sees_errors(tmp_path, mode):
    from mnemo.service.catalog import TOOLS

    marker = f"zebra{uuid.uuid4().hex[:8]}"
    errlog = tmp_path / "stderr.log"

    seen = anyio.run(_session, mnemo_mcp(tmp_path / "data"), mode, errlog, marker)

    assert seen["version"] == EXPECTED_VERSION[mode]
    assert seen["tools"] == list(TOOLS)
    added = seen["added"]
    assert added.is_error is False
    memory = added.structured_content["memory"]
    assert (memory["source"], added.structured_content["project"]["slug"]) == ("mnemo-mcp", "default")
    assert [r["reference"] for r in seen["found"].structured_content["results"]] == [memory["id"]]
    refused = seen["refused"]
    assert refused.is_error is True and refused.structured_content == json.loads(refused.content[0].text)
    assert text_of(refused)["code"] == "content_too_large"
    assert seen["prompts"] == ["recall_for_task", "save_decision"]
    assert f"ship {marker}" in seen["prompt"] and "recall_context" in seen["prompt"]
    assert "mnemo://memories/{id}" in seen["templates"] and seen["resources"] == ["mnemo://memories/recent"]
    assert seen["read"]["memory"]["id"] == memory["id"]
    # an empty folder: the default workspace and project were created, and said so on stderr
    assert "created the default workspace and project" in errlog.read_text()


def test_the_sdk_passes_session_and_time_arguments_as_any_host_would(tmp_path):
    """session on memory_add and as recall's filter, time words read in the caller's tz, parse_time
    false, an unknown tz refused: the arguments of this round, as the official SDK sends them."""
    marker = f"kiwi{uuid.uuid4().hex[:8]}"

    async def calls() -> dict[str, Any]:
        async with Client(stdio_client(mnemo_mcp(tmp_path / "data")), mode="legacy", read_timeout_seconds=30) as client:
            first = await client.call_tool("memory_add", {"content": f"plan {marker} one", "session": "conv-1"})
            await client.call_tool("memory_add", {"content": f"plan {marker} two", "session": "conv-2"})
            return {
                "first": first.structured_content["memory"],
                "by_session": await client.call_tool("recall", {"query": marker, "session": "conv-1"}),
                "timed": await client.call_tool("recall", {"query": f"{marker} today", "tz": "Asia/Shanghai"}),
                "untimed": await client.call_tool("recall", {"query": f"{marker} today", "parse_time": False}),
                "bad_tz": await client.call_tool("recall", {"query": marker, "tz": "Mars/Olympus_Mons"}),
            }

    seen = anyio.run(calls)

    assert seen["first"]["session"] == "conv-1"
    assert [r["reference"] for r in seen["by_session"].structured_content["results"]] == [seen["first"]["id"]]
    timed = seen["timed"].structured_content
    assert timed["time_window"]["expressions"] == ["today"] and timed["time_window"]["tz"] == "Asia/Shanghai"
    assert len(timed["results"]) == 2 and timed["time_window"]["applied"] is True
    assert "time_window" not in seen["untimed"].structured_content
    assert seen["bad_tz"].is_error is True and text_of(seen["bad_tz"])["code"] == "invalid_request"


def test_stdout_carries_protocol_only_and_eof_ends_the_process(tmp_path):
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
         "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "memory_add", "arguments": {"content": "a"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "nope", "arguments": {}}},
    ]  # fmt: skip
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "POWERTOOLS_LOG_LEVEL": "DEBUG"}

    done = subprocess.run(
        [sys.executable, "-m", "mnemo.local.cli", "--data-dir", str(tmp_path / "data"), "mcp"],
        input="".join(json.dumps(m) + "\n" for m in messages).encode(),
        capture_output=True,
        env=env,
        timeout=60,
    )

    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.decode("ascii").split("\n")
    assert lines[-1] == ""
    answers = [json.loads(line) for line in lines[:-1]]
    assert [a["id"] for a in answers] == [1, 2, 3]
    assert all(a["jsonrpc"] == "2.0" for a in answers)
    assert answers[2]["error"]["code"] == -32602
    assert b"created the default workspace" in done.stderr
    assert b'"message":"tool call"' in done.stderr  # the handlers' logs exist, and they went to stderr


def test_beside_mnemo_serve_on_the_same_folder(tmp_path):
    """Two processes, one SQLite file: what either writes the other finds, and writes racing from
    both sides are all kept."""
    server = start_server(tmp_path, {"MNEMO_SEARCH_PER_MINUTE": "100000", "MNEMO_WRITE_PER_MINUTE": "100000"})
    http_ids: list[str] = []

    def http_writes() -> None:
        for i in range(30):
            status, _, body = call(server, "memory_add", {"content": f"from http {i}", "tags": ["race"]})
            assert status == 200, body
            http_ids.append(body["memory"]["id"])

    async def stdio_side() -> dict[str, Any]:
        async with Client(stdio_client(mnemo_mcp(tmp_path)), mode="legacy", read_timeout_seconds=30) as client:
            writer = threading.Thread(target=http_writes)
            writer.start()
            stdio_ids = []
            for i in range(30):
                added = await client.call_tool("memory_add", {"content": f"from stdio {i}", "tags": ["race"]})
                assert added.is_error is False, added.content
                stdio_ids.append(added.structured_content["memory"]["id"])
            await anyio.to_thread.run_sync(writer.join)
            listed = await client.call_tool("memory_search", {"tags": ["race"], "limit": 100})
            return {"stdio_ids": stdio_ids, "listed": [m["id"] for m in listed.structured_content["memories"]]}

    try:
        seen = anyio.run(stdio_side)
        status, _, over_http = call(server, "memory_search", {"tags": ["race"], "limit": 100})
    finally:
        stop_server(server)

    assert len(http_ids) == 30 and len(seen["stdio_ids"]) == 30
    assert set(seen["listed"]) == set(http_ids) | set(seen["stdio_ids"])
    assert status == 200 and {m["id"] for m in over_http["memories"]} == set(seen["listed"])


def test_the_workspace_and_project_come_from_flags_or_the_environment(tmp_path):
    data = tmp_path / "data"
    data.mkdir()  # only serve and mcp create a data folder
    assert mnemo(data, "workspace", "create", "first").code == 0
    second = mnemo(data, "--json", "workspace", "create", "second").json()["workspace"]["id"]
    assert mnemo(data, "project", "create", "notes", "-w", second).code == 0
    projects = {p["slug"]: p["id"] for p in mnemo(data, "--json", "project", "list", "-w", second).json()["projects"]}

    async def add(params: StdioServerParameters) -> dict:
        async with Client(stdio_client(params), mode="legacy", read_timeout_seconds=30) as client:
            return (await client.call_tool("memory_add", {"content": "where am I"})).structured_content

    by_flags = anyio.run(add, mnemo_mcp(data, "--workspace", second, "--project", "notes"))
    by_env = anyio.run(add, mnemo_mcp(data, env={"MNEMO_WORKSPACE": second, "MNEMO_PROJECT": "notes"}))
    default_project = anyio.run(add, mnemo_mcp(data, "--workspace", second))

    assert by_flags["project"] == by_env["project"] == {"id": projects["notes"], "slug": "notes"}
    assert default_project["project"] == {"id": projects["default"], "slug": "default"}


def test_an_ambiguous_workspace_is_a_usage_error_with_nothing_on_stdout(tmp_path):
    data = tmp_path / "data"
    data.mkdir()  # only serve and mcp create a data folder
    assert mnemo(data, "workspace", "create", "first").code == 0
    assert mnemo(data, "workspace", "create", "second").code == 0

    done = mnemo(data, "mcp", stdin="")

    assert done.code == 2
    assert done.out == ""
    assert "2 workspaces" in done.err and "--workspace" in done.err
