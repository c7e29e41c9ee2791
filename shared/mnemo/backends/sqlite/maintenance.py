"""The embedded backend's side of the cleanup job (``mnemo.ports.Maintenance``).

A memory's index row commits in the same transaction as the memory itself, so drift here is rare
(a file edited by hand, a write that reached only one side): index documents whose memory is gone,
and memories the index lacks or holds at another version. The store walk pages ``memories`` by
``seq`` (a one-integer cursor); the index walk pages the index's document table ``index_docs`` by
(project, memory id); the expiry walk pages by ``(expires_at, seq)`` over the partial index
``memories_expiry``. There are no tombstones: a delete removes the index row in its transaction.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Any

from mnemo.backends.errors import translate_errors
from mnemo.backends.sqlite.db import VECTOR_COLUMNS, Database, now_ms, outage, record_of
from mnemo.backends.sqlite.index import drop_document
from mnemo.models.common import format_ts
from mnemo.models.records import MemoryRecord
from mnemo.ports import Comparison, IndexEntry, Page, RepairMark, Scope


def _seq_cursor(cursor: str | None) -> int:
    return int(cursor) if cursor else 0


def _entry(row: sqlite3.Row) -> IndexEntry:
    """The index document of a row carrying ``index_docs``' columns (``x_*``)."""
    return IndexEntry(
        ref=str(row["x_rowid"]),
        scope=Scope(row["x_workspace"], row["x_project"]),
        memory_id=row["x_id"],
        version=row["x_version"],
    )


_INDEX_COLUMNS = (
    "x.workspace_id AS x_workspace, x.project_id AS x_project, x.id AS x_id, x.doc AS x_rowid, x.version AS x_version"
)


def _page(items: list[Any], rows: list[sqlite3.Row], limit: int, cursor_of: str) -> Page[Any]:
    return Page(items, str(rows[-1][cursor_of]) if len(rows) == limit else None)


@translate_errors(outage)
class SqliteMaintenance:
    def __init__(self, db: Database) -> None:
        self.db = db

    def expired(self, now: datetime, cursor: str | None, limit: int) -> Page[MemoryRecord]:
        after_at, _, after_seq = (cursor or "|0").partition("|")
        rows = (
            self.db.conn()
            .execute(
                f"SELECT m.seq, m.expires_at, {VECTOR_COLUMNS} FROM memories m"
                " WHERE expires_at IS NOT NULL AND expires_at <= ? AND (expires_at, seq) > (?, ?)"
                " ORDER BY expires_at, seq LIMIT ?",
                (format_ts(now), after_at, int(after_seq), limit),
            )
            .fetchall()
        )
        last = f"{rows[-1]['expires_at']}|{rows[-1]['seq']}" if len(rows) == limit else None
        return Page([record_of(r) for r in rows], last)

    def repair_marks(self, cursor: str | None, limit: int) -> Page[RepairMark]:
        rows = (
            self.db.conn()
            .execute(
                f"SELECT m.seq, {VECTOR_COLUMNS} FROM memories m WHERE needs_repair = 1 AND seq > ?"
                " ORDER BY seq LIMIT ?",
                (_seq_cursor(cursor), limit),
            )
            .fetchall()
        )
        marks = []
        for row in rows:
            record = record_of(row)
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
                f"SELECT m.seq, {VECTOR_COLUMNS}, {_INDEX_COLUMNS} FROM memories m"
                " LEFT JOIN index_docs x ON x.project_id = m.project_id AND x.id = m.id"
                " WHERE m.seq > ? ORDER BY m.seq LIMIT ?",
                (_seq_cursor(cursor), limit),
            )
            .fetchall()
        )
        items = [Comparison(record_of(row), _entry(row) if row["x_id"] is not None else None) for row in rows]
        return _page(items, rows, limit, "seq")

    def index_walk(self, cursor: str | None, limit: int) -> Page[Comparison]:
        after_project, after_id = json.loads(cursor) if cursor else ("", "")
        rows = (
            self.db.conn()
            .execute(
                f"SELECT {_INDEX_COLUMNS}, {VECTOR_COLUMNS} FROM index_docs x"
                " LEFT JOIN memories m ON m.project_id = x.project_id AND m.id = x.id"
                " WHERE (x.project_id, x.id) > (?, ?) ORDER BY x.project_id, x.id LIMIT ?",
                (after_project, after_id, limit),
            )
            .fetchall()
        )
        items = [Comparison(record_of(row) if row["body"] is not None else None, _entry(row)) for row in rows]
        last = json.dumps([rows[-1]["x_project"], rows[-1]["x_id"]]) if len(rows) == limit else None
        return Page(items, last)

    def drop(self, entry: IndexEntry) -> bool:
        if entry.scope is None or entry.memory_id is None:
            return False
        with self.db.write() as conn:
            live = "SELECT 1 FROM memories WHERE project_id = ? AND id = ?"
            if conn.execute(live, (entry.scope.project_id, entry.memory_id)).fetchone():
                return False  # the document belongs to a live memory
            return drop_document(conn, entry.scope.project_id, entry.memory_id)  # False: dropped by another run

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
                (name, cursor, now_ms()),
            )
