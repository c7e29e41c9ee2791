"""Stores made by the Python peers (PyPI, pinned, installed by ``make peers`` into their own venvs)
through their own MCP servers, imported by ``mnemo import --from ...`` (a subprocess, as an operator
runs it): mcp-memory-service's database and the JSON export its own exporter writes, and a
basic-memory project (on a Python 3.12 or later found on the machine). Every memory arrives once,
verbatim, findable by recall; a deleted one does not; a second import adds nothing; a damaged
export loses nothing readable."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.test_import_peers import Store, store
from tests.support.missing import unavailable

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

__all__ = ["store"]  # the fixture, shared with the MCP memory server's tests

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / ".cache" / "peers-venv"
DRIVER = ROOT / "tests" / "clients" / "make_mcp_memory_service_store.py"
BASIC_MEMORY = ROOT / ".cache" / "basic-memory-venv"
BASIC_MEMORY_DRIVER = ROOT / "tests" / "clients" / "make_basic_memory_store.py"

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


# -- basic-memory -------------------------------------------------------------------------------

#: a note over 4,096 bytes, cut on its own headings: ten sections of a few hundred bytes each
HANDBOOK = "# On-call handbook\n\n" + "\n\n".join(
    f"## Step {n}\n\n" + " ".join([f"Step {n} of the on-call rota: page the owner, then write down what was seen."] * 7)
    for n in range(1, 11)
)
NOTES = [
    {
        "title": "Coffee Brewing",
        "directory": "notes",
        "tags": ["coffee", "brewing"],
        "content": "# Coffee Brewing\n\nWe grind beans fresh each morning.\n\n## Observations\n"
        "- [method] Pour over gives the cleanest cup #technique\n\n## Relations\n- relates_to [[Coffee Beans]]",
    },
    {
        "title": "Release day",
        "directory": "decisions",
        "note_type": "decision",
        "content": "Releases are cut on Tuesdays — «no Friday deploys»\n\n发布在周二，周五不发布",
    },
    {"title": "On-call handbook", "directory": "ops", "tags": ["ops"], "content": HANDBOOK},
    {"title": "Scratch", "directory": "notes", "content": "A note the user deleted before moving"},
]
DELETED_NOTES = [3]


def basic_memory(home: Path, spec: dict[str, Any]) -> dict[str, Any]:
    """Run basic-memory's own MCP server on ``spec`` (tests/clients/make_basic_memory_store.py), its
    configuration and database under ``home``; its answers."""
    python = BASIC_MEMORY / "bin" / "python"
    if not python.is_file():
        unavailable(
            "MNEMO_REQUIRE_BASIC_MEMORY",
            "basic-memory",
            "the pinned basic-memory is not installed (`make peers` needs a Python 3.12 or later)",
        )
    done = subprocess.run(
        [str(python), str(BASIC_MEMORY_DRIVER), json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=home,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answers: dict[str, Any] = json.loads(done.stdout)
    return answers


@pytest.fixture(scope="module")
def basic_memory_project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, str]]]:
    """A basic-memory project folder made by its own MCP server (``create_memory_project``,
    ``write_note``, ``delete_note``), and what ``write_note`` answered for each note."""
    home = tmp_path_factory.mktemp("basic-memory")
    folder = home / "project"
    answers = basic_memory(home, {"project": "moving", "folder": str(folder), "notes": NOTES, "delete": DELETED_NOTES})
    asked = "import importlib.metadata as m; print(m.version('basic-memory'))"
    version = subprocess.run(
        [str(BASIC_MEMORY / "bin" / "python"), "-c", asked],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert f"basic-memory=={version}" in (ROOT / "constraints-basic-memory.txt").read_text().splitlines()
    assert [w["action"] for w in answers["written"]] == ["created"] * len(NOTES), answers
    assert answers["deleted"] == ["true"] * len(DELETED_NOTES), answers
    assert sorted(p.name for p in folder.rglob("*.md")) == sorted(
        f"{n['title']}.md" for i, n in enumerate(NOTES) if i not in DELETED_NOTES
    )
    return folder, answers["written"]


def test_basic_memory_project_arrives_once_verbatim_and_findable(
    store: Store, basic_memory_project: tuple[Path, list[dict[str, str]]]
) -> None:
    folder, written = basic_memory_project
    first = store.import_("--from", "basic-memory", str(folder))
    again = store.import_("--from", "basic-memory", str(folder))

    memories = store.memories()
    kept = [(i, n) for i, n in enumerate(NOTES) if i not in DELETED_NOTES]
    for i, note in kept:
        parts = [m for m in memories if m["path"] == written[i]["permalink"]]
        # each part a verbatim run of the note, in order; together, the note (the blank lines between them aside)
        parts.sort(key=lambda m: note["content"].index(m["content"]))
        assert "\n\n".join(m["content"] for m in parts) == note["content"], note["title"]
        assert all(len(m["content"].encode()) <= 4096 for m in parts)
        assert {(m["kind"], tuple(m["tags"])) for m in parts} == {
            (note.get("note_type", "note"), tuple(note.get("tags", [])))
        }
    handbook = [m for m in memories if m["path"] == written[2]["permalink"]]
    assert len(handbook) >= 2  # it was cut
    assert {m["path"] for m in memories} == {written[i]["permalink"] for i, _ in kept}
    assert first["added"] == len(memories) and first["refused"] == []
    assert again["added"] == 0 and len(again["skipped"]) == len(memories)
    assert not any("deleted before moving" in m["content"] for m in memories)
    asked = {
        "Pour over gives the cleanest cup": 0,
        "Releases are cut on Tuesdays": 1,
        "发布在周二": 1,
        "Step 9 of the on-call rota": 2,
    }
    for query, note in asked.items():
        assert any(found in NOTES[note]["content"] for found in store.recall(query)), query


def test_a_damaged_basic_memory_project_loses_nothing_readable(
    store: Store, basic_memory_project: tuple[Path, list[dict[str, str]]], tmp_path: Path
) -> None:
    folder, written = basic_memory_project
    damaged = tmp_path / "damaged"
    shutil.copytree(folder, damaged)
    release = damaged / "decisions" / "Release day.md"
    release.write_text(release.read_text().replace("type: decision", "type: [decision"))  # its frontmatter cut
    (damaged / "notes" / "binary.md").write_bytes(b"\xff\xfe\x00not a note")

    report = store.import_("--from", "basic-memory", str(damaged))

    paths = {m["path"] for m in store.memories()}
    assert paths == {written[0]["permalink"], written[2]["permalink"]}
    assert sorted(r["position"] for r in report["refused"]) == ["decisions/Release day.md", "notes/binary.md"]
    assert report["added"] == len(store.memories())


def test_basic_memory_reads_back_the_markdown_export(
    store: Store, basic_memory_project: tuple[Path, list[dict[str, str]]], tmp_path: Path
) -> None:
    """No lock-in (issue 40, item 3): ``mnemo export --format markdown`` writes notes basic-memory
    itself reads as notes, each with the memory's text, type and tags."""
    store.import_("--from", "basic-memory", str(basic_memory_project[0]))
    memories = store.memories()
    out = tmp_path / "exported"
    assert store.mnemo("export", "--format", "markdown", str(out)).returncode == 0
    titles = [yaml.safe_load(f.read_text().split("---\n")[1])["title"] for f in sorted(out.rglob("*.md"))]
    assert len(titles) == len(set(titles)) == len(memories)

    read = basic_memory(tmp_path, {"project": "back", "folder": str(out), "notes": [], "delete": [], "read": titles})

    notes = read["read"]
    assert [n.get("error") for n in notes] == [None] * len(titles), notes
    got = sorted((n["content"].strip("\n"), n["frontmatter"]["type"], n["frontmatter"].get("tags", [])) for n in notes)
    assert got == sorted((m["content"], m["kind"], m["tags"]) for m in memories)
