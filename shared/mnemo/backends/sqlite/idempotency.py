"""Idempotency keys of ``memory_add`` and their first results, kept 24 hours per workspace.

The flow is the AWS adapter's (Powertools' idempotency utility on DynamoDB), step for step, each
step one short write transaction — never one held across the computation, whose embedding of the
memory would make every other writer of the file wait:

1. :meth:`claim` the key as in progress until ``now + in_progress_ms`` (Powertools'
   ``save_inprogress``). A row that holds the key — a result younger than 24 hours, or a claim
   whose time has not run out — is returned instead: another fingerprint is a mismatch, a claim
   in progress a conflict (retry), a result is replayed. An expired claim (its call died) is
   taken over.
2. Compute, outside any transaction.
3. :meth:`complete` the row with the result (``save_success``), or :meth:`release` the claim
   when the computation raised (``delete_record``), so the key is free again.

Powertools' persistence layer is one base (the flow) over four operations per backend: get, put,
update, delete. Here ``run_once`` is the flow; :meth:`claim` reads and puts in one transaction
(as DynamoDB's conditional put hands back the item that failed it), :meth:`complete` updates,
:meth:`release` deletes.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mnemo.backends.errors import translate_errors
from mnemo.backends.sqlite.db import Database, now_ms, outage
from mnemo.ports import IDEMPOTENCY_IN_PROGRESS_S, IDEMPOTENCY_TTL_S, IdempotencyMismatch, VersionConflict


@dataclass(frozen=True, slots=True)
class Held:
    """The row that holds a key: its fingerprint, and its result (None while in progress)."""

    fingerprint: str
    response: dict[str, Any] | None


@translate_errors(outage)
class SqliteIdempotencyStore:
    """Keys, claims and first results in one table (``in_progress_until_ms`` is set while the
    first call runs, NULL once its result is stored)."""

    def __init__(self, db: Database, *, in_progress_ms: int = IDEMPOTENCY_IN_PROGRESS_S * 1000) -> None:
        self.db = db
        #: how long a claim holds the key before another call may take it over
        self.in_progress_ms = in_progress_ms

    def migrate(self) -> None:
        """Give a table written before claims the column that marks one (its rows are results)."""
        conn = self.db.conn()
        if "in_progress_until_ms" not in {row[1] for row in conn.execute("PRAGMA table_info(idempotency)")}:
            with self.db.write() as conn:
                conn.execute("ALTER TABLE idempotency ADD COLUMN in_progress_until_ms INTEGER")

    def run_once(
        self, workspace_id: str, key: str, fingerprint: str, compute: Callable[[], dict[str, Any]]
    ) -> dict[str, Any]:
        held = self.claim(workspace_id, key, fingerprint)
        if held is not None:
            if held.fingerprint != fingerprint:
                raise IdempotencyMismatch(key)
            if held.response is None:
                raise VersionConflict(key)
            return held.response
        try:
            response = compute()
        except BaseException:
            self.release(workspace_id, key)
            raise
        self.complete(workspace_id, key, fingerprint, response)
        return response

    def claim(self, workspace_id: str, key: str, fingerprint: str) -> Held | None:
        """Claim ``key`` for a call now starting (None), unless a live row holds it (returned)."""
        now = now_ms()
        with self.db.write() as conn:
            row = conn.execute(
                "SELECT fingerprint, response, created_ms, in_progress_until_ms FROM idempotency"
                " WHERE workspace_id = ? AND key = ?",
                (workspace_id, key),
            ).fetchone()
            if row is not None and _live(row, now):
                in_progress = row["in_progress_until_ms"] is not None
                return Held(row["fingerprint"], None if in_progress else json.loads(row["response"]))
            # no row, or one whose time ran out: an old result, or the claim of a call that died
            conn.execute(
                "INSERT INTO idempotency (workspace_id, key, fingerprint, response, created_ms, in_progress_until_ms)"
                " VALUES (?, ?, ?, '', ?, ?) ON CONFLICT (workspace_id, key) DO UPDATE SET"
                " fingerprint = excluded.fingerprint, response = '', created_ms = excluded.created_ms,"
                " in_progress_until_ms = excluded.in_progress_until_ms",
                (workspace_id, key, fingerprint, now, now + self.in_progress_ms),
            )
            return None

    def complete(self, workspace_id: str, key: str, fingerprint: str, response: dict[str, Any]) -> None:
        """Store the first call's result: the key replays it for 24 hours from now."""
        with self.db.write() as conn:
            conn.execute(
                "UPDATE idempotency SET fingerprint = ?, response = ?, created_ms = ?, in_progress_until_ms = NULL"
                " WHERE workspace_id = ? AND key = ?",
                (fingerprint, json.dumps(response), now_ms(), workspace_id, key),
            )

    def release(self, workspace_id: str, key: str) -> None:
        """Drop the claim of a call that failed: the next call with the key runs afresh."""
        with self.db.write() as conn:
            conn.execute(
                "DELETE FROM idempotency WHERE workspace_id = ? AND key = ? AND in_progress_until_ms IS NOT NULL",
                (workspace_id, key),
            )


def _live(row: sqlite3.Row, now: int) -> bool:
    """Whether the row still holds its key: a claim until its time runs out, a result for 24 hours."""
    until = row["in_progress_until_ms"]
    if until is not None:
        return bool(until > now)
    return bool(row["created_ms"] > now - IDEMPOTENCY_TTL_S * 1000)
