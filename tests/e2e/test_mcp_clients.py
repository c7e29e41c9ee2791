"""The MCP clients agents actually run, each against a real ``mnemo serve`` (or ``mnemo mcp``): the
official TypeScript SDK ``Client`` over Streamable HTTP and over stdio, the MCP Inspector CLI, and
mcp-remote as the stdio proxy Claude Desktop uses. Each lists the tools, adds a memory, finds it,
and sees a rejected call as an ``isError`` result carrying its code — the TypeScript SDK v1 and the
Inspector validate ``structuredContent`` against the tool's ``outputSchema`` even on errors, which
is why error results carry none. The Python SDK's matrix is ``test_mcp_server.py``.

The clients are pinned in ``tests/clients/package.json`` (lock committed) and installed by
``make clients``, which ``make test`` runs first.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support.server import RunningServer

pytestmark = [pytest.mark.slow, pytest.mark.node, pytest.mark.timeout(180)]

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
MODULES = CLIENTS / "node_modules"
PINNED = json.loads((CLIENTS / "package.json").read_text())["dependencies"]


@pytest.fixture(scope="module")
def node() -> str:
    found = shutil.which("node")
    installed = all((MODULES / name / "package.json").is_file() for name in PINNED)
    if found is None or not installed:
        pytest.fail(
            "the pinned MCP clients are missing: run `make clients` (Node.js 20.18+ and npm ci in tests/clients)",
            pytrace=False,
        )
    for name, version in PINNED.items():  # what npm ci installed is what package.json pins
        assert json.loads((MODULES / name / "package.json").read_text())["version"] == version
    return found


def scenario(node: str, spec: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(
        [node, str(CLIENTS / "scenario.mjs"), json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=CLIENTS,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def error_text(result: dict[str, Any]) -> dict[str, Any]:
    assert "threw" not in result, result
    assert result["isError"] is True
    body = json.loads(result["content"][0]["text"])
    assert result["structuredContent"] == body  # the client accepted it: it matches the outputSchema
    return body


def check_session(seen: dict[str, Any], marker: str) -> None:
    from mnemo.service.catalog import TOOLS

    assert [tool["name"] for tool in seen["tools"]] == list(TOOLS)
    assert all(tool["outputSchema"]["type"] == "object" for tool in seen["tools"])
    added = seen["added"]
    assert "threw" not in added and added["isError"] is False, added
    memory_id = added["structuredContent"]["memory"]["id"]
    assert json.loads(added["content"][0]["text"]) == added["structuredContent"]
    assert [r["reference"] for r in seen["found"]["structuredContent"]["results"]] == [memory_id]
    assert marker in seen["found"]["structuredContent"]["results"][0]["content"]
    assert error_text(seen["refused"])["code"] == "content_too_large"
    refused_search = error_text(seen["refusedSearch"])
    assert refused_search["code"] == "invalid_request" and refused_search["details"][0]["loc"] == ["limit"]
    assert seen["unknown"]["threw"]["code"] == -32602
    check_prompts_and_resources(seen, marker, memory_id)


def check_prompts_and_resources(seen: dict[str, Any], marker: str, memory_id: str) -> None:
    from mnemo.api.routers.mcp_library import PROMPTS, TEMPLATES

    assert {"prompts", "resources", "tools"} <= set(seen["capabilities"])
    assert [p["name"] for p in seen["prompts"]] == [p.name for p in PROMPTS]
    (message,) = seen["prompt"]["messages"]
    assert message["role"] == "user" and f"Use Typst {marker}" in message["content"]["text"]
    assert [r["uri"] for r in seen["resources"]] == ["mnemo://memories/recent"]
    assert [t["uriTemplate"] for t in seen["templates"]] == [t["uriTemplate"] for t in TEMPLATES]
    (recent,) = seen["recent"]["contents"]
    assert memory_id in [m["id"] for m in json.loads(recent["text"])["memories"]]
    (memory,) = seen["memory"]["contents"]
    assert json.loads(memory["text"])["memory"]["id"] == memory_id
    assert seen["missing"]["threw"]["code"] == -32002


def test_the_typescript_sdk_client_over_streamable_http(node, server: RunningServer):
    marker = f"ts{uuid.uuid4().hex[:8]}"

    seen = scenario(
        node,
        {
            "transport": "http",
            "url": f"{server.url}/mcp",
            "headers": {"Authorization": f"Bearer {server.key}"},
            "marker": marker,
        },
    )

    check_session(seen, marker)
    assert seen["protocolVersion"] == "2025-11-25"
    assert seen["server"]["name"] == "mnemo"
    assert "Search before you add" in seen["instructions"]


def test_the_typescript_sdk_client_over_stdio_to_mnemo_mcp(node, tmp_path):
    marker = f"stdio{uuid.uuid4().hex[:8]}"
    command = {"command": sys.executable, "args": ["-m", "mnemo.local.cli", "--data-dir", str(tmp_path), "mcp"]}

    seen = scenario(node, {"transport": "stdio", **command, "env": {}, "marker": marker})

    check_session(seen, marker)
    assert seen["server"]["name"] == "mnemo"
    assert "created the default workspace and project" in seen["stderr"]


def test_mcp_remote_as_a_stdio_proxy_to_mnemo_serve(node, server: RunningServer, tmp_path):
    marker = f"remote{uuid.uuid4().hex[:8]}"
    state = tmp_path / "mcp-remote"
    state.mkdir()
    proxy = MODULES / "mcp-remote" / "dist" / "proxy.js"
    args = [str(proxy), f"{server.url}/mcp", "--transport", "http-only", "--header", "Authorization:${MNEMO_AUTH}"]
    env = {"MNEMO_AUTH": f"Bearer {server.key}", "MCP_REMOTE_CONFIG_DIR": str(state), "HOME": str(state)}

    seen = scenario(node, {"transport": "stdio", "command": node, "args": args, "env": env, "marker": marker})

    check_session(seen, marker)
    assert server.key not in seen["stderr"]


def inspector(node: str, server: RunningServer, home: Path, *method: str) -> tuple[int, Any]:
    done = subprocess.run(
        [
            node,
            str(MODULES / "@modelcontextprotocol" / "inspector" / "cli" / "build" / "cli.js"),
            "--cli",
            f"{server.url}/mcp",
            "--transport",
            "http",
            "--header",
            f"Authorization: Bearer {server.key}",
            *method,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": str(Path(node).parent), "HOME": str(home)},
        cwd=CLIENTS,
    )
    try:
        return done.returncode, json.loads(done.stdout)
    except json.JSONDecodeError:
        return done.returncode, {"stdout": done.stdout, "stderr": done.stderr[-2000:]}


def test_the_inspector_cli(node, server: RunningServer, tmp_path):
    marker = f"insp{uuid.uuid4().hex[:8]}"

    listed = inspector(node, server, tmp_path, "--method", "tools/list")
    added = inspector(
        node, server, tmp_path, "--method", "tools/call", "--tool-name", "memory_add",
        "--tool-arg", f"content=Inspector note {marker}", "kind=note",
    )  # fmt: skip
    found = inspector(
        node,
        server,
        tmp_path,
        "--method",
        "tools/call",
        "--tool-name",
        "search_memory",
        "--tool-arg",
        f"query={marker}",
    )
    refused = inspector(
        node,
        server,
        tmp_path,
        "--method",
        "tools/call",
        "--tool-name",
        "memory_add",
        "--tool-arg",
        "content=" + "x" * 4097,
    )

    from mnemo.service.catalog import TOOLS

    assert listed[0] == 0 and [tool["name"] for tool in listed[1]["tools"]] == list(TOOLS), listed
    assert added[0] == 0 and added[1]["isError"] is False, added
    memory_id = added[1]["structuredContent"]["memory"]["id"]
    assert found[0] == 0 and [r["reference"] for r in found[1]["structuredContent"]["results"]] == [memory_id]
    assert refused[0] == 0, refused
    assert error_text(refused[1])["code"] == "content_too_large"
