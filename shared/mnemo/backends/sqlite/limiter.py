"""Per-workspace GCRA buckets (``mnemo.gcra``): one row per bucket, decided in one write
transaction, so racing callers — threads or processes — never over-admit."""

from __future__ import annotations

from mnemo.backends.errors import translate_errors
from mnemo.backends.sqlite.db import Database, now_ms, outage
from mnemo.gcra import RateDecision, peek, step
from mnemo.ports import RateClass


@translate_errors(outage)
class SqliteRateLimiter:
    def __init__(self, db: Database) -> None:
        self.db = db

    def acquire(self, workspace_id: str, rate_class: RateClass, limit: int) -> RateDecision:
        with self.db.write() as conn:
            now = now_ms()
            row = conn.execute(
                "SELECT tat_ms FROM rate_buckets WHERE workspace_id = ? AND rate_class = ?",
                (workspace_id, rate_class),
            ).fetchone()
            result = step(row["tat_ms"] if row else None, now, limit, rate_class)
            if result.decision.allowed:
                conn.execute(
                    "INSERT INTO rate_buckets (workspace_id, rate_class, tat_ms) VALUES (?,?,?)"
                    " ON CONFLICT (workspace_id, rate_class) DO UPDATE SET tat_ms = excluded.tat_ms",
                    (workspace_id, rate_class, result.new_tat),
                )
            return result.decision

    def peek(self, workspace_id: str, rate_class: RateClass, limit: int) -> RateDecision:
        row = (
            self.db.conn()
            .execute(
                "SELECT tat_ms FROM rate_buckets WHERE workspace_id = ? AND rate_class = ?", (workspace_id, rate_class)
            )
            .fetchone()
        )
        return peek(row["tat_ms"] if row else None, now_ms(), limit, rate_class)
