"""The embedded backend: every port over one SQLite file (WAL) — records and their full-text index,
tenants, rate-limit buckets, idempotency records and the cleanup job's checkpoints.

One module per port, as in ``backends/aws``: ``store``, ``index``, ``tenants``, ``limiter``,
``idempotency``, ``maintenance``; ``db`` holds the connection and transaction discipline they share.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mnemo.backends.sqlite.db import Database
from mnemo.backends.sqlite.idempotency import SqliteIdempotencyStore
from mnemo.backends.sqlite.index import SqliteSearchIndex
from mnemo.backends.sqlite.limiter import SqliteRateLimiter
from mnemo.backends.sqlite.maintenance import SqliteMaintenance
from mnemo.backends.sqlite.store import SqliteMemoryStore
from mnemo.backends.sqlite.tenants import SqliteTenantStore
from mnemo.errors import StoreUnavailable

__all__ = ["SqliteBackend"]


class SqliteBackend:
    """All ports over one database file."""

    def __init__(self, path: str | Path) -> None:
        try:
            self.db = Database(path)
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailable(f"cannot open the SQLite store at {path}: {exc}", cause=type(exc).__name__) from exc
        self.index = SqliteSearchIndex(self.db)
        self.store = SqliteMemoryStore(self.db, self.index)
        self.limiter = SqliteRateLimiter(self.db)
        self.tenants = SqliteTenantStore(self.db)
        self.idempotency = SqliteIdempotencyStore(self.db)
        self.maintenance = SqliteMaintenance(self.db, self.index)
        self.store.migrate()
        self.idempotency.migrate()
        self.index.migrate()
        if self.index.outdated():
            self.index.rebuild()

    def idle(self) -> bool:
        """Between calls: checkpoint the write-ahead log when due (``Database.checkpoint_when_due``)."""
        return self.db.checkpoint_when_due()

    def close(self) -> None:
        self.db.close()
