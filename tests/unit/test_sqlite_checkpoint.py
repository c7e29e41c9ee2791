"""The embedded backend's write-ahead log checkpointed between calls by a host that waits for them
(``Database.checkpoint_when_due``, through ``Ports.idle``), not inside a write: SQLite's own
checkpoint, in the commit that takes the log past 1,000 pages, ran inside every eighth or so
memory_add at 100,000 memories (bench/results/2026-12-05-checkpoint-between-calls.md)."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from mnemo.backends.sqlite import SqliteBackend
from mnemo.backends.sqlite.db import BACKSTOP_PAGES, CHECKPOINT_AFTER, Database

PAGE = 4096


def _write_pages(db: Database, transactions: int, pages: int) -> None:
    """``transactions`` write transactions of about ``pages`` new pages each."""
    for _ in range(transactions):
        with db.write() as conn:
            conn.execute("INSERT INTO scratch (b) VALUES (?)", (os.urandom(pages * PAGE),))


def _change_rows(db: Database, rows: int) -> None:
    """One write transaction that inserts ``rows`` small rows."""
    with db.write() as conn:
        conn.executemany("INSERT INTO scratch (b) VALUES (x'00')", [()] * rows)


def _frames_in_log(path: Path) -> int:
    """Frames the log holds (another connection's passive checkpoint reports them)."""
    with sqlite3.connect(path) as other:
        busy, frames, _ = other.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    assert busy == 0
    return int(frames)


def test_a_host_that_waits_checkpoints_the_log_when_due_not_inside_its_writes(tmp_path: Path) -> None:
    path = tmp_path / "mnemo.db"
    db = Database(path)
    db.conn().execute("CREATE TABLE scratch (b BLOB)")
    # Given a host that tidies between calls (its first wait sets the backstop on its connection)
    assert db.checkpoint_when_due() is False  # nothing committed yet
    assert db.conn().execute("PRAGMA wal_autocheckpoint").fetchone()[0] == BACKSTOP_PAGES
    size_before = path.stat().st_size
    # When its writes take the log past SQLite's default 1,000 pages, changing fewer rows than due
    _write_pages(db, 20, 64)
    assert db.checkpoint_when_due() is False
    # Then no write checkpointed (the log holds every frame, the database file has not grown)...
    assert path.stat().st_size == size_before
    # ...and once enough rows were changed, the wait checkpoints: the pages reach the file
    _change_rows(db, CHECKPOINT_AFTER - 20)
    assert db.checkpoint_when_due() is True
    assert path.stat().st_size > size_before + 20 * 64 * PAGE
    assert db.checkpoint_when_due() is False  # counted afresh
    db.close()


def test_the_log_is_not_checkpointed_by_writes_below_the_backstop(tmp_path: Path) -> None:
    path = tmp_path / "mnemo.db"
    db = Database(path)
    db.conn().execute("CREATE TABLE scratch (b BLOB)")
    db.checkpoint_when_due()
    _write_pages(db, 20, 64)
    # (checked from another connection, whose own checkpoint reports the frames it found)
    assert _frames_in_log(path) >= 20 * 64
    db.close()


def test_a_connection_whose_host_never_waits_keeps_sqlites_checkpoint(tmp_path: Path) -> None:
    db = Database(tmp_path / "mnemo.db")
    db.checkpoint_when_due()  # this thread's connection: a serving thread's
    found: list[int] = []
    other = threading.Thread(target=lambda: found.append(db.conn().execute("PRAGMA wal_autocheckpoint").fetchone()[0]))
    other.start()
    other.join(30)
    assert found == [1000]  # e.g. the embedding thread's, or the cleanup's
    db.close()


def test_reads_alone_seldom_make_a_checkpoint_due(tmp_path: Path) -> None:
    """A call that only reads changes one row (its rate bucket): hundreds of them make no
    checkpoint due (one after a checkpoint made the next read cost more)."""
    db = Database(tmp_path / "mnemo.db")
    db.conn().execute("CREATE TABLE scratch (b BLOB)")
    db.checkpoint_when_due()
    for _ in range(CHECKPOINT_AFTER - 1):
        _change_rows(db, 1)
        assert db.checkpoint_when_due() is False
    _change_rows(db, 1)
    assert db.checkpoint_when_due() is True
    db.close()


def test_the_backend_checkpoints_through_idle(tmp_path: Path) -> None:
    backend = SqliteBackend(tmp_path / "mnemo.db")
    backend.db.conn().execute("CREATE TABLE scratch (b BLOB)")
    assert backend.idle() is False
    _change_rows(backend.db, CHECKPOINT_AFTER)
    assert backend.idle() is True
    backend.close()
