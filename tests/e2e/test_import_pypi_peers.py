"""A store made by mcp-memory-service (PyPI, pinned in constraints-peers.txt, installed by
``make peers`` into its own venv on Debian's Python) through its own MCP server, imported by
``mnemo import --from mcp-memory-service`` (a subprocess, as an operator runs it), its database and
the JSON export its own exporter writes: every memory arrives once, verbatim, findable by recall; a
deleted one does not; a second import adds nothing; a damaged export loses nothing readable.

basic-memory is not here: no Python it runs on (3.12 or later) can be installed on this machine
(docs/operations.md, "Moving to Mnemo")."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from tests.e2e.test_import_peers import Store, store

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

__all__ = ["store"]  # the fixture, shared with the MCP memory server's tests

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / ".cache" / "peers-venv"
DRIVER = ROOT / "tests" / "clients" / "make_mcp_memory_service_store.py"

MEMORIES = [
    {"content": "Releases are cut on Tuesdays", "metadata": {"tags": ["release", "ops"], "type": "decision"}},
    {"content": "Ada prefers written design reviews — «no meetings»", "metadata": {"tags": "people,reviews"}},
    {"content": "The invoice exporter writes PDF/A\nfor the auditors, one file a month", "metadata": {}},
    {"content": "A memory the user deleted", "metadata": {"tags": ["gone"]}},
]
DELETED = [3]


@pytest.fixture(scope="module")
def peer_store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The service's ``sqlite_vec.db`` and its JSON export, made by its own MCP server and exporter."""
    python = PEERS / "bin" / "python"
    if not python.is_file():
        pytest.fail("the pinned mcp-memory-service is missing: run `make peers`", pytrace=False)
    pinned = next(
        line
        for line in (ROOT / "constraints-peers.txt").read_text().splitlines()
        if line.startswith("mcp-memory-service==")
    )
    version = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('mcp-memory-service'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert pinned == f"mcp-memory-service=={version}"
    home = tmp_path_factory.mktemp("mcp-memory-service")
    db = home / "sqlite_vec.db"
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "MCP_MEMORY_STORAGE_BACKEND": "sqlite_vec",
        "MCP_MEMORY_SQLITE_PATH": str(db),
        "MCP_MEMORY_BASE_DIR": str(home),
        # no embedding model can be had here: the service's hash embeddings, which it allows on a
        # store that holds memories (the exporter opens it after the server) only when told
        "MCP_MEMORY_ALLOW_HASH_EMBEDDINGS": "1",
    }
    export = home / "export.json"
    done = subprocess.run(
        [str(python), str(DRIVER), json.dumps({"store": MEMORIES, "delete": DELETED, "export": str(export)})],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=home,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answers = json.loads(done.stdout)
    assert all("stored successfully" in a for a in answers["stored"]), answers
    assert all("deleted" in a.lower() for a in answers["deleted"]), answers
    assert db.is_file() and export.is_file()
    return {"database": db, "export": export}


def expected() -> list[tuple[str, str, list[str]]]:
    """(content, kind, tags) of each memory left in the store, as the service keeps it: a list or
    comma-separated tags, kind its type or ``note`` when none is given, no tags when none were."""
    kept = [m for i, m in enumerate(MEMORIES) if i not in DELETED]
    got = []
    for m in kept:
        tags = m["metadata"].get("tags", [])
        tags = tags.split(",") if isinstance(tags, str) else tags
        got.append((m["content"], m["metadata"].get("type", "note"), sorted(tags)))
    return got


@pytest.mark.parametrize("form", ["database", "export"])
def test_mcp_memory_service_store_arrives_once_verbatim_and_findable(
    store: Store, peer_store: dict[str, Path], form: str
) -> None:
    first = store.import_("--from", "mcp-memory-service", str(peer_store[form]))
    again = store.import_("--from", "mcp-memory-service", str(peer_store[form]))

    memories = store.memories()
    got = sorted((m["content"], m["kind"], sorted(m["tags"])) for m in memories)
    assert got == sorted(expected())
    assert {m["path"] for m in memories} == {"mcp-memory-service"}
    kept = {m["content"]: m["created_at"] for m in json.loads(peer_store["export"].read_text())["memories"]}
    for m in memories:  # the service's own times, to Mnemo's millisecond
        imported = datetime.fromisoformat(m["created_at"]).timestamp()
        assert abs(imported - kept[m["content"]]) < 0.001, (m["content"], m["created_at"])
    assert first["added"] == len(expected()) and first["refused"] == []
    assert again["added"] == 0 and len(again["skipped"]) == len(expected())
    for content, _, _ in expected():
        assert content in store.recall(content), content


def test_a_damaged_mcp_memory_service_export_loses_nothing_readable(
    store: Store, peer_store: dict[str, Path], tmp_path: Path
) -> None:
    document = json.loads(peer_store["export"].read_text())
    document["memories"][1:1] = [{"tags": ["cut"], "memory_type": "note"}, "not a memory"]
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(document))

    report = store.import_("--from", "mcp-memory-service", str(damaged))

    assert sorted((m["content"], m["kind"], sorted(m["tags"])) for m in store.memories()) == sorted(expected())
    assert [r["position"] for r in report["refused"]] == ["memory 2", "memory 3"]
