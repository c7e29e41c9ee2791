"""Stores made by the real peers through their own interfaces, imported by ``mnemo import --from``
(a subprocess, as an operator runs it): every memory arrives once, verbatim, findable by recall; a
second import adds nothing; a damaged store loses nothing that was readable.

The official MCP memory server (npm, pinned in tests/clients/package.json) is driven over MCP by
the pinned TypeScript SDK client (tests/clients/server_memory.mjs)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mnemo.backends.sqlite import SqliteBackend
from mnemo.config import Settings
from mnemo.embedding import default_embedder
from mnemo.service import tenancy
from mnemo.service.pipeline import Service

pytestmark = [pytest.mark.slow, pytest.mark.node, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "tests" / "clients"
SERVER_MEMORY = CLIENTS / "node_modules" / "@modelcontextprotocol" / "server-memory" / "package.json"

ENTITIES = [
    {
        "name": "Ada Lovelace",
        "entityType": "person",
        "observations": ["Leads the billing team", "Prefers written design reviews over meetings"],
    },
    {"name": "Billing", "entityType": "team", "observations": ["Owns the invoice exporter (PDF/A for auditors)"]},
    {"name": "Quiet", "entityType": "project", "observations": []},
]
RELATIONS = [{"from": "Ada Lovelace", "to": "Billing", "relationType": "leads"}]
OBSERVATIONS = [{"entityName": "Billing", "contents": ["Ships on Tuesdays, never on Fridays — «a rule»"]}]


def expected() -> list[tuple[str, str, str]]:
    """(content, kind, path) of every memory the graph holds, once the server has added them."""
    memories = [(o, e["entityType"], e["name"]) for e in ENTITIES for o in e["observations"]]
    memories += [(c, "team", o["entityName"]) for o in OBSERVATIONS for c in o["contents"]]
    memories += [(f"{r['from']} {r['relationType']} {r['to']}", "relation", r["from"]) for r in RELATIONS]
    return memories


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    node = shutil.which("node")
    if node is None or not SERVER_MEMORY.is_file():
        pytest.fail("the pinned MCP memory server is missing: run `make clients`", pytrace=False)
    pinned = json.loads((CLIENTS / "package.json").read_text())["dependencies"]["@modelcontextprotocol/server-memory"]
    assert json.loads(SERVER_MEMORY.read_text())["version"] == pinned
    store = tmp_path_factory.mktemp("server-memory") / "memory.jsonl"
    spec = {"file": str(store), "entities": ENTITIES, "relations": RELATIONS, "observations": OBSERVATIONS}
    done = subprocess.run(
        [node, str(CLIENTS / "server_memory.mjs"), json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=CLIENTS,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    graph = json.loads(done.stdout)
    assert {e["name"] for e in graph["entities"]} == {e["name"] for e in ENTITIES}  # the server kept them
    assert store.is_file()
    return store


class Store:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir()
        assert self.mnemo("workspace", "create", "moving").returncode == 0

    def mnemo(self, *argv: str) -> subprocess.CompletedProcess[str]:
        env = {"PATH": "/usr/bin:/bin", "MNEMO_DATA_DIR": str(self.folder), "HOME": str(self.folder)}
        return subprocess.run(
            [sys.executable, "-m", "mnemo.local.cli", *argv], capture_output=True, text=True, env=env, check=False
        )

    def import_(self, *argv: str) -> dict[str, Any]:
        done = self.mnemo("import", *argv, "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def memories(self) -> list[dict[str, Any]]:
        done = self.mnemo("export")
        assert done.returncode == 0, done.stderr
        return [json.loads(line) for line in done.stdout.splitlines()]

    def recall(self, query: str) -> list[str]:
        """The contents recall returns for the query, through the service as a key of the workspace."""
        backend = SqliteBackend(Settings(backend="sqlite", data_dir=self.folder).sqlite_path)
        try:
            svc = Service(backend, embedder=default_embedder())
            workspace = backend.tenants.list_workspaces()[0]
            key = tenancy.create_key(backend, workspace.id, label="reader", scopes=["memory:read"])
            caller = svc.authenticate(f"Bearer {key.plain}")
            result = svc.invoke("recall", caller, {"query": query, "mode": "lexical"}).result
            return [r.content for r in result.results]
        finally:
            backend.close()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    yield Store(tmp_path / "data")


def test_server_memory_store_arrives_once_verbatim_and_findable(store: Store, graph_file: Path) -> None:
    first = store.import_("--from", "server-memory", str(graph_file))
    again = store.import_("--from", "server-memory", str(graph_file))

    got = sorted((m["content"], m["kind"], m["path"]) for m in store.memories())
    assert got == sorted(expected())
    assert first["added"] == len(expected()) and first["refused"] == []
    assert again["added"] == 0 and len(again["skipped"]) == len(expected())
    for content, _, _ in expected():
        assert content in store.recall(content), content


def test_a_damaged_server_memory_store_loses_nothing_readable(store: Store, graph_file: Path, tmp_path: Path) -> None:
    lines = graph_file.read_text().splitlines()
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("\n".join([lines[0], '{"type":"entity","name":"Cut off', *lines[1:], "\x00\x01garbage"]) + "\n")

    report = store.import_("--from", "server-memory", str(damaged))

    assert sorted((m["content"], m["kind"], m["path"]) for m in store.memories()) == sorted(expected())
    assert [r["position"] for r in report["refused"]] == ["line 2", f"line {len(lines) + 2}"]
