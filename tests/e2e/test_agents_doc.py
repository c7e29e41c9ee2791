"""docs/agents.md's configurations, each run as its host would: every JSON or TOML block under
"Configurations" is parsed, each MCP server it declares is started (stdio: the command and
arguments as written, with ``mnemo`` from this environment) or reached (HTTP: the URL and headers
with the host's variables filled in, against a real ``mnemo serve``), and must list the tools,
the prompts and the resources."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.doc_runner import blocks
from tests.support.http import request, split
from tests.support.server import RunningServer, start_server, stop_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "agents.md").read_text()
HOSTS = ["Claude Code", "Claude Desktop", "Codex CLI", "Cursor", "VS Code"]
MNEMO = Path(sys.executable).parent / "mnemo"
METHODS = ["tools/list", "prompts/list", "resources/list"]


def servers(host: str) -> list[tuple[str, dict]]:
    """(name, server) of every block under the host's heading."""
    found = []
    for lang in ("json", "toml"):
        try:
            texts = blocks(DOC, host, lang)
        except AssertionError:
            continue
        for text in texts:
            config = json.loads(text) if lang == "json" else tomllib.loads(text)
            table = config.get("mcpServers") or config.get("servers") or config.get("mcp_servers")
            found.extend(table.items())
    return found


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    running = start_server(tmp_path_factory.mktemp("agents-doc"), args=("--workers", "1"))
    yield running
    stop_server(running)


def fill(text: str, server: RunningServer) -> str:
    """The host's variables, as each host spells them."""
    values = {"MNEMO_MCP": f"{server.url}/mcp", "MNEMO_KEY": server.key, "mnemo-key": server.key}
    text = re.sub(r"\$\{(?:env:|input:)?([A-Za-z_-]+)\}", lambda m: values[m[1]], text)
    return text.replace("http://127.0.0.1:8787", server.url)


def over_stdio(entry: dict, data: Path) -> dict[str, dict]:
    assert entry["command"] == "mnemo"
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "doc", "version": "1"}}
    messages = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}] + [
        {"jsonrpc": "2.0", "id": i + 1, "method": method, "params": {}} for i, method in enumerate(METHODS)
    ]
    env = {"PATH": os.environ["PATH"], "HOME": str(data), "MNEMO_DATA_DIR": str(data)}
    done = subprocess.run(
        [str(MNEMO), *entry["args"]],
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    return {METHODS[a["id"] - 1]: a["result"] for a in answers if a["id"]}


def over_http(entry: dict, server: RunningServer) -> dict[str, dict]:
    target, path = split(fill(entry["url"], server))
    headers = {name: fill(value, server) for name, value in entry.get("headers", {}).items()}
    if "bearer_token_env_var" in entry:  # Codex: the key from the variable it names
        headers["Authorization"] = f"Bearer {fill('${' + entry['bearer_token_env_var'] + '}', server)}"
    seen = {}
    for method in METHODS:
        message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {}}
        reply = request(target, "POST", path, message, headers={**headers, "Accept": "application/json"})
        assert reply.status == 200, reply.raw
        seen[method] = reply.body["result"]
    return seen


@pytest.mark.parametrize("host", HOSTS)
def test_each_configuration_starts_or_reaches_mnemo(host, server, tmp_path):
    from mnemo.service.catalog import TOOLS

    declared = servers(host)

    assert declared, f"no configuration under {host!r}"
    for name, entry in declared:
        seen = over_http(entry, server) if "url" in entry else over_stdio(entry, tmp_path / name)
        assert [t["name"] for t in seen["tools/list"]["tools"]] == list(TOOLS), name
        assert [p["name"] for p in seen["prompts/list"]["prompts"]] == ["recall_for_task", "save_decision"]
        assert seen["resources/list"]["resources"][0]["uri"] == "mnemo://memories/recent"
