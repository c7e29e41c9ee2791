"""Idempotency keys of ``memory_add`` and their first results, kept 24 hours per workspace."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mnemo.backends.errors import translate_errors
from mnemo.backends.sqlite.db import Database, now_ms, outage
from mnemo.ports import IdempotencyMismatch, IdempotentResult, VersionConflict

IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000


@translate_errors(outage)
class SqliteIdempotencyStore:
    """Keys and first results in one table; ``run_once`` holds the write transaction around the
    check, the computation and the store, so a concurrent duplicate waits and then replays."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def run_once(
        self, workspace_id: str, key: str, fingerprint: str, compute: Callable[[], dict[str, Any]]
    ) -> dict[str, Any]:
        with self.db.write():
            prior = self.get(workspace_id, key)
            if prior is not None:
                if prior.fingerprint != fingerprint:
                    raise IdempotencyMismatch(key)
                return dict(prior.response)
            response = compute()
            self.put(workspace_id, key, IdempotentResult(fingerprint, response))
            return response

    def get(self, workspace_id: str, key: str) -> IdempotentResult | None:
        row = (
            self.db.conn()
            .execute(
                "SELECT fingerprint, response FROM idempotency WHERE workspace_id = ? AND key = ? AND created_ms > ?",
                (workspace_id, key, now_ms() - IDEMPOTENCY_TTL_MS),
            )
            .fetchone()
        )
        return IdempotentResult(row["fingerprint"], json.loads(row["response"])) if row else None

    def put(self, workspace_id: str, key: str, result: IdempotentResult) -> None:
        with self.db.write() as conn:
            now = now_ms()
            cur = conn.execute(
                "INSERT INTO idempotency (workspace_id, key, fingerprint, response, created_ms) VALUES (?,?,?,?,?)"
                " ON CONFLICT (workspace_id, key) DO UPDATE SET fingerprint = excluded.fingerprint,"
                " response = excluded.response, created_ms = excluded.created_ms WHERE created_ms <= ?",
                (workspace_id, key, result.fingerprint, json.dumps(result.response), now, now - IDEMPOTENCY_TTL_MS),
            )
            if cur.rowcount != 1:
                raise VersionConflict(key)
