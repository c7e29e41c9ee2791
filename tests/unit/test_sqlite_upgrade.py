"""A database written by the code before the stems index (``tests/fixtures/sqlite-layout3.db``,
made by ``tests/fixtures/make_sqlite_layout3.py`` with that code: FTS5 index layout 3, no dedup
claims, the same memory stored twice) upgrades when ``mnemo serve`` opens it: every memory kept and
searchable through stems, each fingerprint's claim given to its oldest live memory, the old
index's tables gone — and it opens again without work."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from mnemo.backends.sqlite import SqliteBackend
from mnemo.backends.sqlite.db import INDEX_VERSION
from mnemo.embedding import default_embedder
from mnemo.service.pipeline import Service

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def old(tmp_path: Path) -> tuple[Path, dict]:
    db = tmp_path / "mnemo.db"
    shutil.copyfile(FIXTURES / "sqlite-layout3.db", db)
    return db, json.loads((FIXTURES / "sqlite-layout3.json").read_text())


def _tables(backend: SqliteBackend) -> set[str]:
    return {row[0] for row in backend.db.conn().execute("SELECT name FROM sqlite_master")}


def test_the_fixture_is_of_the_old_layout(old: tuple[Path, dict]) -> None:
    import sqlite3

    conn = sqlite3.connect(old[0])
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert {"memory_fts", "index_rows"} <= names and "postings" not in names
    assert "dedup" not in {row[1] for row in conn.execute("PRAGMA table_info(memories)")}
    conn.close()


def test_a_database_of_the_old_layout_upgrades_when_opened(old: tuple[Path, dict]) -> None:
    db, manifest = old
    ids = manifest["ids"]

    # When the new code opens it
    backend = SqliteBackend(db)
    svc = Service(backend, embedder=default_embedder())
    caller = svc.authenticate(f"Bearer {manifest['key']}")

    def call(tool: str, **arguments):
        return svc.invoke(tool, caller, arguments).result

    # Then the key still works and every memory is kept (the expired one is not listed)
    live = {name: i for name, i in ids.items() if name != "expired"}
    assert sorted(m.id for m in call("memory_search", limit=100).memories) == sorted(live.values())
    # and the new index holds them, words matching through their stems, CJK as before
    recalled = {r.reference for r in call("recall", query="deployments").results}
    assert recalled and recalled <= {ids["deploys"], ids["deploys_again"], ids["team"]}
    found = {r.reference for r in call("search_memory", query="deployment freezes").results}
    assert found == {ids["deploys"], ids["deploys_again"], ids["team"]}
    assert [r.reference for r in call("search_memory", query="caches").results] == [ids["cache"]]
    assert [r.reference for r in call("search_memory", query="数据库").results] == [ids["cache"]]
    assert [r.reference for r in call("search_memory", query="会議室").results] == [ids["meeting"]]
    # and the time window works on old records
    window = call("memory_search", updated_after="2000-01-01T00:00:00Z", limit=100).memories
    assert {m.id for m in window} == set(live.values())
    assert call("memory_search", updated_before="2000-01-01T00:00:00Z").memories == []
    # and the stored duplicates: the older holds the claim, so an add finds it
    again = call("memory_add", content="Deploys freeze on Fridays", kind="decision", path="ops/release")
    assert (again.deduplicated, again.memory.id) == (True, ids["deploys"])
    in_team = call(
        "memory_add", content="deploys freeze on fridays", kind="decision", path="ops/release", team_id="sre"
    )
    assert (in_team.deduplicated, in_team.memory.id) == (True, ids["team"])
    # the expired memory holds nothing: its content is a new memory
    assert call("memory_add", content="temporary pass 1234").deduplicated is False
    # and deleting the holder frees the claim, the second copy stays a memory of its own
    call("memory_delete", id=ids["deploys"])
    fresh = call("memory_add", content="Deploys freeze on Fridays", kind="decision", path="ops/release")
    assert fresh.deduplicated is False
    assert ids["deploys_again"] in {m.id for m in call("memory_search", limit=100).memories}
    # and the old index is gone, the new one recorded
    assert not _tables(backend) & {"memory_fts", "index_rows"}
    assert backend.db.conn().execute("PRAGMA user_version").fetchone()[0] == INDEX_VERSION
    backend.close()


def test_an_upgraded_database_opens_again_without_rebuilding(old: tuple[Path, dict], monkeypatch) -> None:
    db, manifest = old
    SqliteBackend(db).close()
    from mnemo.backends.sqlite.index import SqliteSearchIndex

    def refuse(self) -> None:
        raise AssertionError("rebuilt again")

    monkeypatch.setattr(SqliteSearchIndex, "rebuild", refuse)
    backend = SqliteBackend(db)
    svc = Service(backend, embedder=default_embedder())
    caller = svc.authenticate(f"Bearer {manifest['key']}")
    results = svc.invoke("search_memory", caller, {"query": "standups"}).result.results
    assert [r.reference for r in results] == [manifest["ids"]["standup"]]
    backend.close()


def test_a_database_written_before_the_superseded_column_gets_it_from_the_bodies(tmp_path: Path) -> None:
    """The filters read ``memories.superseded_by``; a database written before the column existed
    (its marks only in the records' bodies) gets the column filled when opened, so its superseded
    memories stay out of searches and its current ones stay in."""
    from mnemo.service import tenancy
    from mnemo.service.identity import ADMIN

    db = tmp_path / "mnemo.db"
    backend = SqliteBackend(db)
    svc = Service(backend, embedder=default_embedder())
    workspace, _ = tenancy.create_workspace(svc.ports, "w")
    key = tenancy.create_key(svc.ports, workspace.id, label="admin", scopes=[ADMIN]).plain

    def call(tool: str, **arguments):
        return svc.invoke(tool, svc.authenticate(f"Bearer {key}"), arguments).result

    old = call("memory_add", content="deploy day is Friday").memory.id
    new = call("memory_add", content="deploy day is Tuesday", supersedes=[old]).memory.id
    other = call("memory_add", content="deploy freeze in December").memory.id
    # Given the database as the code before the column left it: the mark in the body only
    conn = backend.db.conn()
    conn.execute("ALTER TABLE memories DROP COLUMN superseded_by")
    conn.commit()
    backend.close()

    # When it is opened again
    backend = SqliteBackend(db)
    svc = Service(backend, embedder=default_embedder())

    # Then the column holds each memory's mark, and the searches read it
    held = dict(backend.db.conn().execute("SELECT id, superseded_by FROM memories").fetchall())
    assert held == {old: new, new: None, other: None}
    assert sorted(m.id for m in call("memory_search", q="deploy").memories) == sorted([new, other])
    assert {r.reference for r in call("recall", query="deploy day", mode="lexical").results} == {new, other}
    everything = call("memory_search", q="deploy", include_superseded=True).memories
    assert sorted(m.id for m in everything) == sorted([old, new, other])
    backend.close()


def test_the_superseded_column_follows_every_write(tmp_path: Path) -> None:
    """A mark, and a memory written again after it, keep the column equal to the body's field."""
    from mnemo.service import tenancy
    from mnemo.service.identity import ADMIN

    backend = SqliteBackend(tmp_path / "mnemo.db")
    svc = Service(backend, embedder=default_embedder())
    workspace, _ = tenancy.create_workspace(svc.ports, "w")
    caller = svc.authenticate(f"Bearer {tenancy.create_key(svc.ports, workspace.id, label='a', scopes=[ADMIN]).plain}")
    first = svc.invoke("memory_add", caller, {"content": "the cache TTL is 60 s"}).result.memory.id
    newer = {"content": "the cache TTL is 90 s", "supersedes": [first]}
    second = svc.invoke("memory_add", caller, newer).result.memory.id
    third = svc.invoke("memory_add", caller, {"content": "the cache TTL is 120 s"}).result.memory.id
    svc.invoke("memory_update", caller, {"id": third, "content": "the cache TTL is 30 s", "supersedes": [second]})

    rows = backend.db.conn().execute("SELECT superseded_by, json_extract(body, '$.superseded_by') FROM memories")
    pairs = [tuple(row) for row in rows]
    assert len(pairs) == 3 and all(column == body for column, body in pairs)
    assert sorted(column or "" for column, _ in pairs) == sorted(["", second, third])
    backend.close()
