"""The embedded backend's side of the cleanup job (``mnemo.ports.Maintenance``).

The FTS row of a memory commits in the same transaction as the memory itself, so drift here is
rare (a file edited by hand, a crash of an older version): FTS rows whose memory row is gone, and
memories without an FTS row. Walks page by ``seq`` (the memory's rowid, also its FTS rowid), so a
cursor is one integer; the expiry walk pages by ``(expires_at, seq)`` over the partial index
``memories_expiry``. There are no tombstones: a delete removes the FTS row in its transaction.
"""

from __future__ import annotations

import sqlite3
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mnemo.backends.errors import translate_errors
from mnemo.models.common import format_ts
from mnemo.models.records import MemoryRecord
from mnemo.ports import Comparison, IndexEntry, Page, RepairMark, Scope

if TYPE_CHECKING:
    from mnemo.backends.sqlite.backend import Database


def _outage(exc: BaseException) -> Any:
    from mnemo.backends.sqlite.backend import outage  # the two modules import each other lazily

    return outage(exc)


def _record(row: sqlite3.Row) -> MemoryRecord:
    return MemoryRecord.model_validate_json(row["body"])


def _seq_cursor(cursor: str | None) -> int:
    return int(cursor) if cursor else 0


def _entry(seq: int, record: MemoryRecord | None) -> IndexEntry:
    return IndexEntry(
        ref=str(seq),
        scope=Scope(record.workspace_id, record.project_id) if record else None,
        memory_id=record.id if record else None,
        version=None,  # an FTS row commits with its record: it is always the record's version
    )


def _page(items: list[Any], rows: list[sqlite3.Row], limit: int, cursor_of: str) -> Page[Any]:
    return Page(items, str(rows[-1][cursor_of]) if len(rows) == limit else None)


@translate_errors(lambda exc: _outage(exc))
class SqliteMaintenance:
    def __init__(self, db: Database) -> None:
        self.db = db

    def expired(self, now: datetime, cursor: str | None, limit: int) -> Page[MemoryRecord]:
        after_at, _, after_seq = (cursor or "|0").partition("|")
        rows = (
            self.db.conn()
            .execute(
                "SELECT seq, expires_at, body FROM memories"
                " WHERE expires_at IS NOT NULL AND expires_at <= ? AND (expires_at, seq) > (?, ?)"
                " ORDER BY expires_at, seq LIMIT ?",
                (format_ts(now), after_at, int(after_seq), limit),
            )
            .fetchall()
        )
        last = f"{rows[-1]['expires_at']}|{rows[-1]['seq']}" if len(rows) == limit else None
        return Page([_record(r) for r in rows], last)

    def repair_marks(self, cursor: str | None, limit: int) -> Page[RepairMark]:
        rows = (
            self.db.conn()
            .execute(
                "SELECT seq, body FROM memories WHERE needs_repair = 1 AND seq > ? ORDER BY seq LIMIT ?",
                (_seq_cursor(cursor), limit),
            )
            .fetchall()
        )
        marks = []
        for row in rows:
            record = _record(row)
            scope = Scope(record.workspace_id, record.project_id)
            marks.append(RepairMark(scope, record.id, record.version, record, token=str(record.version)))
        return _page(marks, rows, limit, "seq")

    def clear_repair(self, mark: RepairMark) -> None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE memories SET needs_repair = 0 WHERE id = ? AND project_id = ? AND version = ?",
                (mark.memory_id, mark.scope.project_id, mark.version),
            )

    def store_walk(self, cursor: str | None, limit: int) -> Page[Comparison]:
        rows = (
            self.db.conn()
            .execute(
                "SELECT m.seq, m.body, f.rowid AS fts FROM memories m LEFT JOIN memory_fts f ON f.rowid = m.seq"
                " WHERE m.seq > ? ORDER BY m.seq LIMIT ?",
                (_seq_cursor(cursor), limit),
            )
            .fetchall()
        )
        items = []
        for row in rows:
            record = _record(row)
            items.append(Comparison(record, _entry(row["seq"], record) if row["fts"] is not None else None))
        return _page(items, rows, limit, "seq")

    def index_walk(self, cursor: str | None, limit: int) -> Page[Comparison]:
        rows = (
            self.db.conn()
            .execute(
                "SELECT f.rowid AS fts, m.body FROM memory_fts f LEFT JOIN memories m ON m.seq = f.rowid"
                " WHERE f.rowid > ? ORDER BY f.rowid LIMIT ?",
                (_seq_cursor(cursor), limit),
            )
            .fetchall()
        )
        items = []
        for row in rows:
            record = _record(row) if row["body"] is not None else None
            items.append(Comparison(record, _entry(row["fts"], record)))
        return _page(items, rows, limit, "fts")

    def drop(self, entry: IndexEntry) -> bool:
        with self.db.write() as conn:
            if conn.execute("SELECT 1 FROM memories WHERE seq = ?", (int(entry.ref),)).fetchone():
                return False  # the FTS row belongs to a live memory
            return conn.execute("DELETE FROM memory_fts WHERE rowid = ?", (int(entry.ref),)).rowcount > 0

    def purge(self, entry: IndexEntry) -> bool:
        return False  # no tombstones here

    def checkpoint(self, name: str) -> str | None:
        row = self.db.conn().execute("SELECT cursor FROM maintenance_checkpoints WHERE name = ?", (name,)).fetchone()
        return row["cursor"] if row else None

    def save_checkpoint(self, name: str, cursor: str | None) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO maintenance_checkpoints (name, cursor, updated_ms) VALUES (?, ?, ?)"
                " ON CONFLICT (name) DO UPDATE SET cursor = excluded.cursor, updated_ms = excluded.updated_ms",
                (name, cursor, time.time_ns() // 1_000_000),
            )
