"""The Claude Code plugins (plugins/mnemo, plugins/mnemo-remote) and the repository's marketplace
(.claude-plugin/marketplace.json), validated by Claude Code's own ``claude plugin validate`` (the
pinned @anthropic-ai/claude-code of tests/clients, installed by ``make clients``; it runs offline),
and what the validator does not check: the two plugins run the same hooks, each hook's timeout
leaves room for its own deadline, and no key is written into a file."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from mnemo.hook.events import DEADLINE_S, EVENTS

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = ROOT / "tests" / "clients" / "node_modules" / ".bin" / "claude"
PLUGINS = ["plugins/mnemo", "plugins/mnemo-remote"]

pytestmark = [pytest.mark.slow, pytest.mark.node, pytest.mark.timeout(180)]


@pytest.mark.parametrize("path", [".", *PLUGINS])
def test_claude_code_validates_the_marketplace_and_each_plugin(path, tmp_path):
    assert CLAUDE.exists(), "run `make clients` (installs Claude Code for this test)"
    env = {**os.environ, "HOME": str(tmp_path), "DISABLE_AUTOUPDATER": "1"}

    done = subprocess.run(
        [str(CLAUDE), "plugin", "validate", str(ROOT / path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout


def test_the_marketplace_lists_each_plugin_by_its_manifests_name():
    marketplace = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())

    listed = {entry["name"]: entry["source"] for entry in marketplace["plugins"]}

    manifests = {
        json.loads((ROOT / p / ".claude-plugin" / "plugin.json").read_text())["name"]: f"./{p}" for p in PLUGINS
    }
    assert listed == manifests


def test_both_plugins_run_every_hook_through_mnemo_hook_within_its_timeout():
    local, remote = (json.loads((ROOT / p / "hooks" / "hooks.json").read_text()) for p in PLUGINS)

    assert local == remote
    for event in EVENTS:
        (entry,) = local["hooks"][event]
        (command,) = entry["hooks"]
        assert command["command"] == f"mnemo hook {event}"
        assert command["timeout"] >= DEADLINE_S[event] + 1  # a cold process starts within a second


def test_no_key_or_url_is_written_into_a_plugin_file():
    texts = {p: (ROOT / p).read_text() for p in ["plugins/mnemo/.mcp.json", "plugins/mnemo-remote/.mcp.json"]}

    remote = json.loads(texts["plugins/mnemo-remote/.mcp.json"])["mcpServers"]["mnemo"]
    local = json.loads(texts["plugins/mnemo/.mcp.json"])["mcpServers"]["mnemo"]
    assert remote == {
        "type": "http",
        "url": "${MNEMO_MCP}",
        "headers": {"Authorization": "Bearer ${MNEMO_KEY}"},
    }
    assert (local["command"], local["args"]) == ("mnemo", ["mcp"])
    assert not any(re.search(r"Bearer [^$]|https?://", text) for text in texts.values())
