"""The SQLite store's dedup claims on a database written before they existed: the column, each
record's claim (the oldest live record of a fingerprint), and the unique index."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from mnemo.backends.sqlite import SqliteBackend
from mnemo.models.records import MemoryRecord
from mnemo.ports import Duplicate, Scope

from tests.support.records import memory_record

SCOPE = Scope("ws_1", "prj_1")
NOW = datetime.now(UTC)


def _record(content: str, minutes: int, *, expired: bool = False) -> MemoryRecord:
    at = NOW - timedelta(days=1) + timedelta(minutes=minutes)
    return memory_record(content, scope=SCOPE, at=at, expires_at=NOW - timedelta(minutes=1) if expired else None)


def test_a_database_without_claims_gets_them_when_opened(tmp_path: Path) -> None:
    # Given a database of the old layout: no dedup column, and the same memory stored twice
    backend = SqliteBackend(tmp_path / "mnemo.db")
    expired = _record("same words", 0, expired=True)
    older, newer, other = _record("same words", 1), _record("Same  WORDS", 2), _record("other words", 3)
    for record in (expired, older, newer, other):
        backend.store.create(record, dedupe=False)
    conn = backend.db.conn()
    conn.execute("DROP INDEX memories_dedup")
    conn.execute("ALTER TABLE memories DROP COLUMN dedup")
    backend.close()

    # When it is opened again
    reopened = SqliteBackend(tmp_path / "mnemo.db")

    # Then the oldest live record of each fingerprint holds its claim, and adds see it
    held = dict(reopened.db.conn().execute("SELECT id, dedup IS NOT NULL FROM memories").fetchall())
    assert held == {expired.id: 0, older.id: 1, newer.id: 0, other.id: 1}
    with pytest.raises(Duplicate) as found:
        reopened.store.create(_record("same words", 4), dedupe=True)
    assert found.value.memory_id == older.id
    indexes = {row[0] for row in reopened.db.conn().execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "memories_dedup" in indexes
    reopened.close()


def test_two_holders_of_one_claim_are_impossible(tmp_path: Path) -> None:
    backend = SqliteBackend(tmp_path / "mnemo.db")
    first, second = _record("x", 1), _record("x", 2)
    backend.store.create(first)
    backend.store.create(second)  # a duplicate asked for: stored, without the claim
    conn = backend.db.conn()
    with pytest.raises(Exception, match="UNIQUE"):
        conn.execute("UPDATE memories SET dedup = (SELECT dedup FROM memories WHERE id = ?) WHERE id = ?",
                     (first.id, second.id))  # fmt: skip
    backend.close()
