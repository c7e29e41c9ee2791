"""The record store: ``memories`` rows, each with its JSON body (the source of truth) and the
columns that filters and ordering need (``*_fold`` hold case-folded values, so LIKE runs with
``case_sensitive_like`` on and stays Unicode-aware).

Claims (``MemoryStore.create``): the column ``dedup`` holds the record's ``mnemo.text.fingerprint``
when the record holds its claim, NULL otherwise; a partial unique index on (project, dedup) makes
two holders of one claim impossible, and writes take the database's write lock (``BEGIN
IMMEDIATE``) before they look, so of two identical adds one is stored and the other sees it.

The store keeps its full-text index in step by itself: every create, replace and delete calls
the sibling index adapter's public ``upsert`` / ``remove`` inside the same write transaction, so a
change and its index row commit together and an edit is searchable the moment it returns. (On
AWS the table's stream brings the store's changes to the index; the service writes only the
store on both backends.)"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from mnemo import text
from mnemo.backends.errors import translate_errors
from mnemo.backends.sqlite.db import VECTOR_COLUMNS, Database, outage, record_of
from mnemo.backends.sqlite.filters import filter_sql
from mnemo.backends.sqlite.index import SqliteSearchIndex
from mnemo.models.common import format_ts, utc_now
from mnemo.models.records import MemoryRecord
from mnemo.ports import (
    MAX_NEIGHBOURS,
    Duplicate,
    MemoryFilter,
    Page,
    Scope,
    VersionConflict,
    kept_versions,
)


@translate_errors(outage)
class SqliteMemoryStore:
    def __init__(self, db: Database, index: SqliteSearchIndex) -> None:
        self.db = db
        self.index = index

    def unit_of_work(self) -> AbstractContextManager[Any]:
        return self.db.write()

    def create(self, record: MemoryRecord, *, dedupe: bool = False, marks: Sequence[MemoryRecord] = ()) -> None:
        with self.db.write() as conn:  # the marks commit with the record, or neither
            claim = self._free_claim(conn, record, dedupe=dedupe)
            try:
                conn.execute(
                    "INSERT INTO memories (id, workspace_id, project_id, kind_fold, path_fold, team_id, session,"
                    " superseded_by, tags, expires_at, updated_at, version, body, dedup, vec, vec_model, vec_stamp)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (*_row_values(record), claim, *_vector_values(conn, record, removed=False)),
                )
            except sqlite3.IntegrityError:
                raise VersionConflict(record.id) from None
            self.index.upsert(record)
            self._mark(marks)

    def _mark(self, marks: Sequence[MemoryRecord]) -> None:
        """Inside the caller's transaction: a failed mark undoes the whole write."""
        for mark in marks:
            self.replace(mark, expected_version=mark.version - 1, previous=mark)

    @staticmethod
    def _free_claim(conn: sqlite3.Connection, record: MemoryRecord, *, dedupe: bool) -> str | None:
        """The claim the record can take (its fingerprint), or None when a live record holds it
        (``Duplicate`` with ``dedupe``). An expired holder gives it up. Inside the write lock."""
        claim = _fingerprint(record)
        holder = conn.execute(
            "SELECT id, expires_at FROM memories WHERE project_id = ? AND dedup = ?", (record.project_id, claim)
        ).fetchone()
        if holder is None or holder["id"] == record.id:
            return claim
        if holder["expires_at"] is None or holder["expires_at"] > format_ts(utc_now()):
            if dedupe:
                raise Duplicate(holder["id"])
            return None
        conn.execute(
            "UPDATE memories SET dedup = NULL WHERE project_id = ? AND id = ?", (record.project_id, holder["id"])
        )
        return claim

    def get(self, scope: Scope, memory_id: str) -> MemoryRecord | None:
        row = (
            self.db.conn()
            .execute(
                f"SELECT {VECTOR_COLUMNS} FROM memories m WHERE id = ? AND workspace_id = ? AND project_id = ?",
                (memory_id, scope.workspace_id, scope.project_id),
            )
            .fetchone()
        )
        return record_of(row) if row else None

    def replace(
        self,
        record: MemoryRecord,
        *,
        expected_version: int,
        previous: MemoryRecord | None = None,
        marks: Sequence[MemoryRecord] = (),
    ) -> None:
        with self.db.write() as conn:
            held = conn.execute(
                "SELECT dedup, body, vec_model FROM memories WHERE id = ? AND project_id = ?",
                (record.id, record.project_id),
            ).fetchone()
            claim: str | None = held["dedup"] if held is not None else None
            before = previous or (record_of(held) if held is not None else None)
            if before is None or _fingerprint(before) != _fingerprint(record):
                # the fingerprint changes: its old claim goes, and it takes the new one if free
                claim = self._free_claim(conn, record, dedupe=False)
            values = _row_values(record)
            # a vector that goes, or changes model, is a removal for the vector search's cache
            removed = (
                held is not None
                and held["vec_model"] is not None
                and (record.embedding is None or record.embedding.model != held["vec_model"])
            )
            cur = conn.execute(
                "UPDATE memories SET id=?, workspace_id=?, project_id=?, kind_fold=?, path_fold=?, team_id=?,"
                " session=?, superseded_by=?, tags=?, expires_at=?, updated_at=?, version=?, body=?, needs_repair=0,"
                " dedup=?,"
                " vec=?, vec_model=?, vec_stamp=?"
                " WHERE id = ? AND workspace_id = ? AND project_id = ? AND version = ?",
                (*values, claim, *_vector_values(conn, record, removed=removed),
                 record.id, record.workspace_id, record.project_id, expected_version),
            )  # fmt: skip
            if cur.rowcount != 1:
                raise VersionConflict(record.id)
            self.index.upsert(record)
            self._mark(marks)

    def set_embedding(self, record: MemoryRecord) -> bool:
        with self.db.write() as conn:
            held = conn.execute(
                "SELECT vec_model FROM memories WHERE id = ? AND workspace_id = ? AND project_id = ? AND version = ?",
                (record.id, record.workspace_id, record.project_id, record.version),
            ).fetchone()
            if held is None:
                return False
            removed = held["vec_model"] is not None and (
                record.embedding is None or record.embedding.model != held["vec_model"]
            )
            conn.execute(
                "UPDATE memories SET vec=?, vec_model=?, vec_stamp=? WHERE id = ? AND project_id = ?",
                (*_vector_values(conn, record, removed=removed), record.id, record.project_id),
            )
            return True

    def delete(
        self, scope: Scope, memory_id: str, *, expected_version: int, record: MemoryRecord | None = None
    ) -> None:
        with self.db.write() as conn:  # the claim goes with the row
            if record is None or record.embedding is not None:
                _bump_vectors(conn, scope.project_id, removed=True)
            row = conn.execute(
                "DELETE FROM memories WHERE id = ? AND workspace_id = ? AND project_id = ? AND version = ?"
                " RETURNING body",
                (memory_id, scope.workspace_id, scope.project_id, expected_version),
            ).fetchone()
            if row is None:
                raise VersionConflict(memory_id)
            self.index.remove(record_of(row))
            for table in ("memory_versions", "memory_versions_dropped"):  # its history goes with it
                conn.execute(
                    f"DELETE FROM {table} WHERE project_id = ? AND memory_id = ?", (scope.project_id, memory_id)
                )

    def keep_version(self, previous: MemoryRecord, *, expires_at: datetime | None, dropped: int = 0) -> None:
        """(SQLite keeps no expiry per version: the memory's delete, its expiry's too, erases them.)"""
        with self.db.write() as conn:
            key = (previous.project_id, previous.id)
            conn.execute(
                "INSERT OR REPLACE INTO memory_versions (project_id, memory_id, version, bytes, body)"
                " VALUES (?,?,?,?,?)",
                (*key, previous.version, len(previous.content.encode()), previous.model_dump_json()),
            )
            rows = conn.execute(
                "SELECT version, bytes FROM memory_versions WHERE project_id = ? AND memory_id = ?"
                " ORDER BY version DESC",
                key,
            ).fetchall()
            gone = [row["version"] for row in rows[kept_versions(row["bytes"] for row in rows) :]]
            if gone:
                conn.executemany(
                    "DELETE FROM memory_versions WHERE project_id = ? AND memory_id = ? AND version = ?",
                    [(*key, version) for version in gone],
                )
            if gone or dropped:
                conn.execute(
                    "INSERT INTO memory_versions_dropped (project_id, memory_id, dropped) VALUES (?,?,?)"
                    " ON CONFLICT (project_id, memory_id) DO UPDATE SET dropped = dropped + excluded.dropped",
                    (*key, len(gone) + dropped),
                )

    def history(self, scope: Scope, memory_id: str, *, below: int, limit: int) -> tuple[list[MemoryRecord], int]:
        with self.db.snapshot() as conn:
            key = (scope.project_id, memory_id)
            rows = conn.execute(
                "SELECT body FROM memory_versions WHERE project_id = ? AND memory_id = ? AND version < ?"
                " ORDER BY version DESC LIMIT ?",
                (*key, below, limit),
            ).fetchall()
            dropped = conn.execute(
                "SELECT dropped FROM memory_versions_dropped WHERE project_id = ? AND memory_id = ?", key
            ).fetchone()
        versions = [MemoryRecord.model_validate_json(row["body"]) for row in rows]
        return [v for v in versions if v.workspace_id == scope.workspace_id], int(dropped[0]) if dropped else 0

    def recent(self, scope: Scope, flt: MemoryFilter, limit: int) -> list[MemoryRecord]:
        where, params = filter_sql(flt)
        rows = (
            self.db.conn()
            .execute(
                f"SELECT {VECTOR_COLUMNS} FROM memories m WHERE m.workspace_id = ? AND m.project_id = ? AND {where}"
                " ORDER BY m.updated_at DESC, m.id DESC LIMIT ?",
                (scope.workspace_id, scope.project_id, *params, limit),
            )
            .fetchall()
        )
        return [record_of(r) for r in rows]

    def scan_project(self, scope: Scope, *, cursor: str | None = None, limit: int = 100) -> Page[MemoryRecord]:
        rows = (
            self.db.conn()
            .execute(
                f"SELECT {VECTOR_COLUMNS}, m.id FROM memories m WHERE workspace_id = ? AND project_id = ? AND id > ?"
                " ORDER BY id LIMIT ?",
                (scope.workspace_id, scope.project_id, cursor or "", limit + 1),
            )
            .fetchall()
        )
        more = len(rows) > limit
        records = [record_of(r) for r in rows[:limit]]
        return Page(records, records[-1].id if more else None)

    def neighbours(
        self,
        scope: Scope,
        anchors: Sequence[MemoryRecord],
        flt: MemoryFilter,
        *,
        per_side: int = 1,
        same_session: bool = True,
    ) -> dict[str, list[MemoryRecord]]:
        per_side = max(0, min(per_side, MAX_NEIGHBOURS))
        where, params = filter_sql(flt)
        conn = self.db.conn()
        out: dict[str, list[MemoryRecord]] = {}
        for anchor in anchors:
            if anchor.workspace_id != scope.workspace_id or anchor.project_id != scope.project_id or not per_side:
                out[anchor.id] = []
                continue
            session = anchor.session if same_session else None
            near = "m.session = ? AND " if session is not None else ""
            # one statement for both sides, and the bodies only: context lends by id, and its
            # callers never read a neighbour's vector (its 1.5 KB, read as 384 floats, cost recall
            # more than the rest of its context stage, bench/results/2026-12-04-recall-cut.md)
            before, after = (
                f"SELECT body FROM (SELECT m.body FROM memories m WHERE m.project_id = ? AND {near}m.id {op} ?"
                f" AND m.workspace_id = ? AND {where} ORDER BY m.id {order} LIMIT ?)"
                for op, order in (("<", "DESC"), (">", "ASC"))
            )
            args = (scope.project_id, *([session] if session is not None else []), anchor.id,
                    scope.workspace_id, *params, per_side)  # fmt: skip
            rows = conn.execute(f"{before} UNION ALL {after}", (*args, *args)).fetchall()
            found = [record_of(r) for r in rows]
            out[anchor.id] = sorted(found, key=lambda r: r.id)
        return out

    def migrate(self) -> None:
        """Give a database written before claims existed the ``dedup`` column, its records their
        claims (the oldest live record of each fingerprint), and the unique index; and one written
        before the ``superseded_by`` column that column, from its records' bodies. (The filters read
        the column; parsing each candidate's body with ``json_extract`` instead cost search_memory and
        memory_search a quarter to a third of their CPU at 10,000 memories,
        bench/results/2026-12-05-paired-superseded-column.md.)"""
        conn = self.db.conn()
        columns = {row[1] for row in conn.execute("PRAGMA table_info(memories)")}
        if "vec" not in columns:  # written before vectors: none yet, cleanup embeds them
            with self.db.write() as conn:
                for column in ("vec BLOB", "vec_model TEXT", "vec_stamp INTEGER"):
                    conn.execute(f"ALTER TABLE memories ADD COLUMN {column}")
        if "session" not in columns:  # written before sessions: no memory has one
            with self.db.write() as conn:
                conn.execute("ALTER TABLE memories ADD COLUMN session TEXT")
        if "superseded_by" not in columns:  # written before the column: the bodies say it
            with self.db.write() as conn:
                # (re-read under the write lock: another process opening the database may have added it)
                if "superseded_by" not in {row[1] for row in conn.execute("PRAGMA table_info(memories)")}:
                    conn.execute("ALTER TABLE memories ADD COLUMN superseded_by TEXT")
                    conn.execute(
                        "UPDATE memories SET superseded_by = json_extract(body, '$.superseded_by')"
                        " WHERE json_extract(body, '$.superseded_by') IS NOT NULL"
                    )
        # neighbours(): a session's memories (and, session NULL included, a project's) in id order
        conn.execute("CREATE INDEX IF NOT EXISTS memories_session ON memories (project_id, session, id)")
        # the vector search's cache reads the vectors written since it last looked (vectors.py):
        # without this index, a scan of the project's records — 115-130 ms at 100,000 memories for
        # the first vector search after each memory's vector was written
        conn.execute("CREATE INDEX IF NOT EXISTS memories_vec_stamp ON memories (project_id, vec_stamp)")
        if "dedup" not in columns:
            with self.db.write() as conn:
                conn.execute("ALTER TABLE memories ADD COLUMN dedup TEXT")
                taken: set[tuple[str, str]] = set()
                now = format_ts(utc_now())
                rows = conn.execute(
                    "SELECT seq, project_id, expires_at, body FROM memories ORDER BY project_id, updated_at, seq"
                ).fetchall()
                for row in rows:
                    if row["expires_at"] is not None and row["expires_at"] <= now:
                        continue
                    claim = _fingerprint(record_of(row))
                    if (row["project_id"], claim) not in taken:
                        taken.add((row["project_id"], claim))
                        conn.execute("UPDATE memories SET dedup = ? WHERE seq = ?", (claim, row["seq"]))
        conn.execute(
            "CREATE UNIQUE INDEX IF NOT EXISTS memories_dedup ON memories (project_id, dedup) WHERE dedup IS NOT NULL"
        )

    def mark_for_repair(self, record: MemoryRecord) -> None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE memories SET needs_repair = 1 WHERE id = ? AND project_id = ?", (record.id, record.project_id)
            )


def _fingerprint(record: MemoryRecord) -> str:
    return text.fingerprint(record.content, record.kind, record.path, record.team_id)


def _bump_vectors(conn: sqlite3.Connection, project_id: str, *, removed: bool) -> int:
    """Raise the project's vector stamp (and its removal count); the new stamp."""
    row = conn.execute(
        "INSERT INTO vector_stamps (project_id, stamp, removed) VALUES (?, 1, ?)"
        " ON CONFLICT (project_id) DO UPDATE SET stamp = stamp + 1, removed = removed + excluded.removed"
        " RETURNING stamp",
        (project_id, int(removed)),
    ).fetchone()
    return int(row[0])


def _vector_values(conn: sqlite3.Connection, record: MemoryRecord, *, removed: bool) -> tuple[Any, ...]:
    """``vec``, ``vec_model``, ``vec_stamp`` for the record's row (the stamp raised when it has a
    vector or loses one)."""
    embedding = record.embedding
    if embedding is None:
        if removed:
            _bump_vectors(conn, record.project_id, removed=True)
        return (None, None, None)
    return (embedding.to_bytes(), embedding.model, _bump_vectors(conn, record.project_id, removed=removed))


def _row_values(record: MemoryRecord) -> tuple[Any, ...]:
    return (
        record.id,
        record.workspace_id,
        record.project_id,
        (record.kind or "").casefold(),
        (record.path or "").casefold(),
        record.team_id,
        record.session,
        record.superseded_by,
        json.dumps(record.tags, ensure_ascii=False),
        format_ts(record.expires_at) if record.expires_at else None,
        format_ts(record.updated_at),
        record.version,
        record.model_dump_json(),
    )
