"""The record store: ``memories`` rows, each with its JSON body (the source of truth) and the
columns that filters and ordering need (``*_fold`` hold case-folded values, so LIKE runs with
``case_sensitive_like`` on and stays Unicode-aware)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import AbstractContextManager
from typing import Any

from mnemo.backends.errors import translate_errors
from mnemo.backends.sqlite.db import Database, outage, record_of
from mnemo.backends.sqlite.filters import filter_sql
from mnemo.models.common import format_ts
from mnemo.models.records import MemoryRecord
from mnemo.ports import MemoryFilter, Page, Scope, VersionConflict


@translate_errors(outage)
class SqliteMemoryStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def unit_of_work(self) -> AbstractContextManager[Any]:
        return self.db.write()

    def create(self, record: MemoryRecord) -> None:
        with self.db.write() as conn:
            try:
                conn.execute(
                    "INSERT INTO memories (id, workspace_id, project_id, kind_fold, path_fold, team_id, tags,"
                    " expires_at, updated_at, version, body) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    _row_values(record),
                )
            except sqlite3.IntegrityError:
                raise VersionConflict(record.id) from None

    def get(self, scope: Scope, memory_id: str) -> MemoryRecord | None:
        row = (
            self.db.conn()
            .execute(
                "SELECT body FROM memories WHERE id = ? AND workspace_id = ? AND project_id = ?",
                (memory_id, scope.workspace_id, scope.project_id),
            )
            .fetchone()
        )
        return record_of(row) if row else None

    def replace(self, record: MemoryRecord, *, expected_version: int) -> None:
        with self.db.write() as conn:
            values = _row_values(record)
            cur = conn.execute(
                "UPDATE memories SET id=?, workspace_id=?, project_id=?, kind_fold=?, path_fold=?, team_id=?,"
                " tags=?, expires_at=?, updated_at=?, version=?, body=?, needs_repair=0"
                " WHERE id = ? AND workspace_id = ? AND project_id = ? AND version = ?",
                (*values, record.id, record.workspace_id, record.project_id, expected_version),
            )
            if cur.rowcount != 1:
                raise VersionConflict(record.id)

    def delete(self, scope: Scope, memory_id: str, *, expected_version: int) -> None:
        with self.db.write() as conn:
            cur = conn.execute(
                "DELETE FROM memories WHERE id = ? AND workspace_id = ? AND project_id = ? AND version = ?",
                (memory_id, scope.workspace_id, scope.project_id, expected_version),
            )
            if cur.rowcount != 1:
                raise VersionConflict(memory_id)

    def recent(self, scope: Scope, flt: MemoryFilter, limit: int) -> list[MemoryRecord]:
        where, params = filter_sql(flt)
        rows = (
            self.db.conn()
            .execute(
                f"SELECT m.body FROM memories m WHERE m.workspace_id = ? AND m.project_id = ? AND {where}"
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
                "SELECT body, id FROM memories WHERE workspace_id = ? AND project_id = ? AND id > ?"
                " ORDER BY id LIMIT ?",
                (scope.workspace_id, scope.project_id, cursor or "", limit + 1),
            )
            .fetchall()
        )
        more = len(rows) > limit
        records = [record_of(r) for r in rows[:limit]]
        return Page(records, records[-1].id if more else None)

    def mark_for_repair(self, record: MemoryRecord) -> None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE memories SET needs_repair = 1 WHERE id = ? AND project_id = ?", (record.id, record.project_id)
            )


def _row_values(record: MemoryRecord) -> tuple[Any, ...]:
    return (
        record.id,
        record.workspace_id,
        record.project_id,
        (record.kind or "").casefold(),
        (record.path or "").casefold(),
        record.team_id,
        json.dumps(record.tags, ensure_ascii=False),
        format_ts(record.expires_at) if record.expires_at else None,
        format_ts(record.updated_at),
        record.version,
        record.model_dump_json(),
    )
