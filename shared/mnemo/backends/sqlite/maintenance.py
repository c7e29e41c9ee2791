"""The embedded backend's side of the cleanup job (``mnemo.ports.Maintenance``).

A memory's index row commits in the same transaction as the memory itself, so drift here is rare
(a file edited by hand, a write that reached only one side): index documents whose memory is gone,
and memories the index lacks or holds at another version. The store walk pages ``memories`` by
``seq`` (a one-integer cursor) and asks the index for those memories' documents
(``SqliteSearchIndex.entries``); the index walk pages the index's documents by (project, memory
id) (``SqliteSearchIndex.walk``) and reads their records; the expiry walk pages by
``(expires_at, seq)`` over the partial index ``memories_expiry``. The index's tables are its own:
this module reads them only through its public methods. There are no tombstones: a delete removes
the index row in its transaction.

A walk reads the memories and the index's documents in two statements, inside one read
transaction (``Database.snapshot``), so they see the same state, as the one join they replace did.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Any

from mnemo.backends.errors import translate_errors
from mnemo.backends.sqlite.db import VECTOR_COLUMNS, Database, now_ms, outage, record_of
from mnemo.backends.sqlite.index import SqliteSearchIndex
from mnemo.models.common import format_ts
from mnemo.models.records import MemoryRecord
from mnemo.ports import Comparison, IndexEntry, Page, RepairMark, Scope


def _seq_cursor(cursor: str | None) -> int:
    return int(cursor) if cursor else 0


def _page(items: list[Any], rows: list[sqlite3.Row], limit: int, cursor_of: str) -> Page[Any]:
    return Page(items, str(rows[-1][cursor_of]) if len(rows) == limit else None)


@translate_errors(outage)
class SqliteMaintenance:
    def __init__(self, db: Database, index: SqliteSearchIndex) -> None:
        self.db = db
        self.index = index

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
        with self.db.snapshot() as conn:
            rows = conn.execute(
                f"SELECT m.seq, {VECTOR_COLUMNS} FROM memories m WHERE m.seq > ? ORDER BY m.seq LIMIT ?",
                (_seq_cursor(cursor), limit),
            ).fetchall()
            records = [record_of(row) for row in rows]
            held = self.index.entries((r.project_id, r.id) for r in records)
        items = [Comparison(r, held.get((r.project_id, r.id))) for r in records]
        return _page(items, rows, limit, "seq")

    def index_walk(self, cursor: str | None, limit: int) -> Page[Comparison]:
        with self.db.snapshot() as conn:
            page = self.index.walk(cursor, limit)
            keys = [(e.scope.project_id, e.memory_id) for e in page.items if e.scope is not None]
            rows = conn.execute(
                f"SELECT {VECTOR_COLUMNS} FROM json_each(?) AS k"
                " CROSS JOIN memories m ON m.project_id = k.value ->> 0 AND m.id = k.value ->> 1",
                (json.dumps(keys),),
            ).fetchall()
        records: dict[tuple[str, str | None], MemoryRecord] = {(r.project_id, r.id): r for r in map(record_of, rows)}
        items = [
            Comparison(records.get((e.scope.project_id, e.memory_id)) if e.scope is not None else None, e)
            for e in page.items
        ]
        return Page(items, page.cursor)

    def drop(self, entry: IndexEntry) -> bool:
        if entry.scope is None or entry.memory_id is None:
            return False
        with self.db.write() as conn:  # the index's drop joins this transaction
            live = "SELECT 1 FROM memories WHERE project_id = ? AND id = ?"
            if conn.execute(live, (entry.scope.project_id, entry.memory_id)).fetchone():
                return False  # the document belongs to a live memory
            return self.index.drop(entry.scope.project_id, entry.memory_id)  # False: dropped by another run

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
